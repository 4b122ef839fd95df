#!/usr/bin/env node
// What `vouch status` costs on traced receipts, against today's status on declared receipts, on
// one generated project (bench/generate.mjs, typed sources, 10k sources + 50k installed files by
// default) and in one run. The same two checks are configured twice, in two configs kept outside
// the project (so neither is an input of the other) with a state dir each:
//   declared  the checks as they are today: default inputs (`**`, `node_modules/**`);
//   traced    the same checks with `"mode": "traced"`, run once with `vouch run` so that their
//             receipts hold the evidence of what the run touched.
// The checks are real work on the generated tree:
//   typecheck  `node <this repo's typescript>/bin/tsc --noEmit -p .`: every source file, and the
//              compiler's own files outside the root;
//   subset     `node subset.mjs`: what a test of one area reads: the sources of src/area0/ (listed
//              and read, about a tenth of the tree), and the package.json, entry point and a few
//              files of each of the 30 direct dependencies.
// Then, interleaved per round so that each meets the same machine: `node -e 0` (the Node floor),
// `vouch status --json` warm on each state dir, and cold (stat cache emptied, receipts kept) a few
// times each. Then through an observer per state dir (`vouch start`), the same rounds, each answer
// checked to come from the observer.
// Each status answer is checked to be CURRENT for both checks. Reports p50/min/max of wall time
// and of CPU time (user + system, which a busy machine disturbs far less), peak memory, the
// ratios, and each traced receipt's evidence entries, counted by use. The project goes under the
// repository's ignored .tmp/ (--dir), not the system's temp dir: see `dir` below.
//
//   npm run build && node bench/tracedStatus.mjs [--sources 10k] [--installed 50k] [--reps 10]
//                                                [--cold-reps 3] [--dir DIR] [--out FILE] [--keep]

import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { inflateRawSync } from "node:zlib";
import { generate } from "./generate.mjs";
import { measureProcess } from "./measure.mjs";
import { summarize } from "./stats.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const VOUCH = join(REPO, "dist", "bin", "main.js");
const require = createRequire(join(REPO, "package.json"));
const TSC = require.resolve("typescript/bin/tsc");

const { values } = parseArgs({
  options: {
    sources: { type: "string", default: "10k" },
    installed: { type: "string", default: "50k" },
    reps: { type: "string", default: "10" },
    "cold-reps": { type: "string", default: "3" },
    out: { type: "string" },
    dir: { type: "string", default: join(REPO, ".tmp") },
    keep: { type: "boolean", default: false },
  },
});
const count = (text) => {
  const match = /^(\d+)(k?)$/i.exec(text);
  if (!match) throw new Error(`"${text}" is not a file count (e.g. 10000 or 10k)`);
  return Number(match[1]) * (match[2] ? 1000 : 1);
};
const sources = count(values.sources);
const installed = count(values.installed);
const reps = Number(values.reps);
const coldReps = Number(values["cold-reps"]);
if (!existsSync(VOUCH)) throw new Error(`${VOUCH} is missing: run npm run build first`);

const ENV = { ...process.env, NO_COLOR: "1", CI: "1" };

// CPU time of the waited-for children (proc(5), /proc/self/stat cutime + cstime, in clock ticks),
// which a busy machine disturbs far less than wall time. One process is measured at a time.
const TICK_MS = 1000 / Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim() || 100);
function childrenCpuMs() {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
}
async function withCpu(promise) {
  const before = childrenCpuMs();
  const sample = await promise();
  return { ...sample, cpu: childrenCpuMs() - before };
}

/** Reads the sources of src/area0/ and a few files of each direct dependency, as a test of one area would. */
const SUBSET_SCRIPT = `import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const digest = createHash("sha256");
let files = 0;
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path);
    else if (entry.name.endsWith(".ts")) {
      digest.update(readFileSync(path));
      files++;
    }
  }
};
walk("src/area0");
const manifest = JSON.parse(readFileSync("package.json", "utf8"));
for (const name of Object.keys(manifest.dependencies ?? {})) {
  const dir = join("node_modules", name);
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  for (const file of [pkg.main ?? "index.js", "index.d.ts"]) {
    if (existsSync(join(dir, file))) {
      digest.update(readFileSync(join(dir, file)));
      files++;
    }
  }
  const lib = join(dir, "lib");
  if (existsSync(lib)) {
    for (const entry of readdirSync(lib, { withFileTypes: true }).filter((e) => e.isFile()).slice(0, 4)) {
      digest.update(readFileSync(join(lib, entry.name)));
      files++;
    }
  }
}
console.log(\`read \${files} files, digest \${digest.digest("hex").slice(0, 12)}\`);
`;

const CHECKS = [
  { name: "typecheck", kind: "typecheck", command: ["node", TSC, "--noEmit", "-p", "."] },
  { name: "subset", kind: "test", command: ["node", "subset.mjs"] },
];

function config(mode) {
  return { schema: 1, packageManager: "npm", checks: CHECKS.map((check) => (mode === "traced" ? { ...check, mode } : check)) };
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function failure(what, sample) {
  return `${what} exited ${sample.code ?? sample.signal}: ${(sample.stderr || sample.stdout).trim().split("\n").slice(-5).join(" / ").slice(0, 400)}`;
}

/** Evidence entries of a receipt, read from the state db: counted by use, and inside or outside the root. */
function evidenceCounts(stateDir, digest) {
  const Database = require("better-sqlite3");
  const db = new Database(join(stateDir, "state.db"), { readonly: true });
  try {
    const row = db.prepare("SELECT entries FROM manifests WHERE digest = ?").get(digest);
    if (!row) return null;
    const entries = JSON.parse(inflateRawSync(row.entries).toString());
    const counts = { entries: entries.length, read: 0, listed: 0, lookup: 0, own: 0, outside_root: 0, absent: 0 };
    for (const entry of entries) {
      counts[entry.use] = (counts[entry.use] ?? 0) + 1;
      if (entry.own) counts.own++;
      if (entry.path.startsWith("/")) counts.outside_root++;
      if (entry.type === "absent") counts.absent++;
    }
    return counts;
  } finally {
    db.close();
  }
}

/** Copies the state db with its stat cache emptied, receipts kept (as bench/run.mjs does for its cold status). */
function makeColdState(stateDir, coldDir) {
  const Database = require("better-sqlite3");
  mkdirSync(coldDir, { recursive: true });
  for (const suffix of ["", "-wal"]) if (existsSync(join(stateDir, `state.db${suffix}`))) copyFileSync(join(stateDir, `state.db${suffix}`), join(coldDir, `state.db${suffix}`));
  const db = new Database(join(coldDir, "state.db"));
  try {
    db.prepare("DELETE FROM stat_cache").run();
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}

function restoreState(stateDir, coldDir) {
  for (const suffix of ["-wal", "-shm"]) rmSync(join(stateDir, `state.db${suffix}`), { force: true });
  for (const name of readdirSync(stateDir)) if (/^tree-.*\.cache$/.test(name)) rmSync(join(stateDir, name), { force: true });
  copyFileSync(join(coldDir, "state.db"), join(stateDir, "state.db"));
}

async function main() {
  // Under the repo's ignored .tmp/ by default, not the shared temp dir: a traced run looks up every
  // directory above the project (module resolution, realpath), and a directory that gains an entry
  // while the check runs (the temp dir, under other work) counts as changed during the run.
  mkdirSync(resolve(values.dir), { recursive: true });
  const parent = mkdtempSync(join(resolve(values.dir), "vouch-bench-traced-status-"));
  const root = join(parent, "project");
  const log = (text) => console.error(`[traced status] ${text}`);
  const started = new Date();
  const loadStart = loadavg();
  log(`generating ${sources} typed sources + ${installed} installed files`);
  const generated = generate({ sources, installed, out: root, check: "typecheck" });
  writeFileSync(join(root, "subset.mjs"), SUBSET_SCRIPT);
  spawnSync("git", ["add", "subset.mjs"], { cwd: root });
  spawnSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "--no-gpg-sign", "-m", "subset check"], { cwd: root });

  const modes = {};
  for (const mode of ["declared", "traced"]) {
    const configPath = join(parent, `vouch.${mode}.json`);
    writeFileSync(configPath, `${JSON.stringify(config(mode), null, 2)}\n`);
    modes[mode] = { config: configPath, stateDir: join(parent, `state-${mode}`) };
  }
  const vouch = (mode, command, ...args) => withCpu(() => measureProcess([process.execPath, VOUCH, command, "--config", modes[mode].config, "--root", root, "--state-dir", modes[mode].stateDir, ...args], { cwd: root, env: ENV }));
  const floor = () => withCpu(() => measureProcess([process.execPath, "-e", "0"], { cwd: root, env: ENV }));

  const result = { generated, runs: {}, receipts: {}, figures: {}, errors: [] };
  const statusOf = (mode, sample) => {
    const json = parseJson(sample.stdout);
    if (sample.code !== 0 || !json?.checks) throw new Error(failure(`vouch status --json (${mode})`, sample));
    for (const check of json.checks) if (check.freshness !== "CURRENT") result.errors.push(`${mode} status said ${check.name} ${check.freshness} on an unchanged tree: ${JSON.stringify(check.reasons ?? check.reason ?? "")}`);
    return json;
  };

  try {
    for (const mode of ["declared", "traced"]) {
      log(`vouch run (${mode})`);
      const run = await vouch(mode, "run", "--json");
      if (run.code !== 0) throw new Error(failure(`vouch run (${mode})`, run));
      result.runs[mode] = { ms: Math.round(run.ms), cpu_ms: Math.round(run.cpu), checks: parseJson(run.stdout)?.runs?.map((r) => ({ name: r.name, exit: r.receipt?.exit_code ?? r.exit_code ?? null, duration_ms: r.receipt?.duration_ms ?? null, input_count: r.receipt?.input_count ?? null })) };
      const status = statusOf(mode, await vouch(mode, "status", "--json"));
      result.receipts[mode] = status.checks.map((check) => ({
        name: check.name,
        freshness: check.freshness,
        duration_ms: check.receipt?.duration_ms ?? null,
      }));
    }
    // Evidence entries per traced receipt, from the store itself.
    const Database = require("better-sqlite3");
    const db = new Database(join(modes.traced.stateDir, "state.db"), { readonly: true });
    const rows = Object.fromEntries(CHECKS.map(({ name }) => [name, db.prepare("SELECT manifest_digest AS digest, evidence FROM receipts WHERE check_name = ? ORDER BY seq DESC LIMIT 1").get(name) ?? null]));
    db.close();
    for (const receipt of result.receipts.traced) {
      const row = rows[receipt.name];
      receipt.evidence_counts = row ? evidenceCounts(modes.traced.stateDir, row.digest) : null;
      receipt.evidence_stored = row ? parseJson(row.evidence) : null;
      if (receipt.evidence_stored?.mode !== "traced") result.errors.push(`${receipt.name}: the traced run made a ${receipt.evidence_stored?.mode} receipt: ${JSON.stringify(receipt.evidence_stored?.notes ?? [])}`);
    }

    log("cold status, each mode");
    for (const mode of ["declared", "traced"]) {
      const coldDir = mkdtempSync(join(tmpdir(), "vouch-bench-cold-"));
      try {
        makeColdState(modes[mode].stateDir, coldDir);
        const samples = [];
        const cpu = [];
        for (let i = 0; i < coldReps; i++) {
          restoreState(modes[mode].stateDir, coldDir);
          const sample = await vouch(mode, "status", "--json");
          statusOf(mode, sample);
          samples.push(sample.ms);
          cpu.push(sample.cpu);
        }
        result.figures[`status_cold_${mode}`] = summarize(samples);
        result.figures[`status_cold_${mode}_cpu`] = summarize(cpu);
      } finally {
        rmSync(coldDir, { recursive: true, force: true });
      }
    }

    log(`warm status, ${reps} rounds interleaved with the Node floor`);
    for (const mode of ["declared", "traced"]) statusOf(mode, await vouch(mode, "status", "--json")); // fills the stat caches
    const warm = { floor: [], declared: [], traced: [], floor_cpu: [], declared_cpu: [], traced_cpu: [], declared_scan: [], traced_scan: [], declared_kb: [], traced_kb: [] };
    for (let round = 0; round < reps; round++) {
      const order = round % 2 === 0 ? ["floor", "declared", "traced"] : ["traced", "declared", "floor"];
      for (const way of order) {
        if (way === "floor") {
          const sample = await floor();
          warm.floor.push(sample.ms);
          warm.floor_cpu.push(sample.cpu);
          continue;
        }
        const sample = await vouch(way, "status", "--json");
        const json = statusOf(way, sample);
        warm[way].push(sample.ms);
        warm[`${way}_cpu`].push(sample.cpu);
        if (sample.peak_kb !== null) warm[`${way}_kb`].push(sample.peak_kb);
        if (typeof json.observation?.duration_ms === "number") warm[`${way}_scan`].push(json.observation.duration_ms);
      }
    }
    for (const [key, samples] of Object.entries(warm)) result.figures[key.endsWith("_kb") || key.endsWith("_scan") || key.startsWith("floor") ? key : `status_warm_${key}`] = summarize(samples);

    // Through the observer: one per state dir, each answer after its barrier. A declared receipt
    // is answered from the warm index; a traced one's evidence is looked at again per answer.
    log(`status through the observer, ${reps} rounds`);
    try {
      for (const mode of ["declared", "traced"]) {
        const started = await vouch(mode, "start", "--json");
        if (started.code !== 0) throw new Error(failure(`vouch start (${mode})`, started));
      }
      const observed = { declared: [], traced: [], declared_cpu: [], traced_cpu: [] };
      for (let round = 0; round < reps + 1; round++) {
        for (const way of round % 2 === 0 ? ["declared", "traced"] : ["traced", "declared"]) {
          const sample = await vouch(way, "status", "--json");
          const json = statusOf(way, sample);
          if (json.observation?.source !== "observer") result.errors.push(`${way}: status through the observer was answered by a ${json.observation?.source}: ${JSON.stringify(json.notices ?? [])}`);
          // The first round warms the observers' caches.
          if (round === 0) continue;
          observed[way].push(sample.ms);
          observed[`${way}_cpu`].push(sample.cpu);
        }
      }
      for (const [key, samples] of Object.entries(observed)) result.figures[`status_observer_${key}`] = summarize(samples);
    } finally {
      for (const mode of ["declared", "traced"]) await vouch(mode, "stop");
    }
    const p50 = (key) => result.figures[key]?.p50;
    result.ratios = {
      warm_traced_over_declared: p50("status_warm_traced") / p50("status_warm_declared"),
      warm_cpu_traced_over_declared: p50("status_warm_traced_cpu") / p50("status_warm_declared_cpu"),
      cold_cpu_traced_over_declared: p50("status_cold_traced_cpu") / p50("status_cold_declared_cpu"),
      cold_traced_over_declared: p50("status_cold_traced") / p50("status_cold_declared"),
      warm_declared_minus_floor_ms: p50("status_warm_declared") - p50("floor"),
      warm_traced_minus_floor_ms: p50("status_warm_traced") - p50("floor"),
      observer_traced_over_declared: p50("status_observer_traced") / p50("status_observer_declared"),
      observer_declared_minus_floor_ms: p50("status_observer_declared") - p50("floor"),
      observer_traced_minus_floor_ms: p50("status_observer_traced") - p50("floor"),
    };
  } catch (error) {
    result.errors.push(error.message);
    log(`error: ${error.message}`);
  } finally {
    if (values.keep) log(`kept ${parent}`);
    else rmSync(parent, { recursive: true, force: true });
  }

  const output = {
    command: `node bench/tracedStatus.mjs ${process.argv.slice(2).join(" ")}`.trim(),
    started_at: started.toISOString(),
    finished_at: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? null, node: process.version },
    vouch_commit: spawnSync("git", ["-C", REPO, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).stdout.trim(),
    load_average_at_start: loadStart.map((x) => Math.round(x * 100) / 100),
    load_average_at_end: loadavg().map((x) => Math.round(x * 100) / 100),
    sources,
    installed,
    reps,
    cold_reps: coldReps,
    ...result,
  };
  const text = `${JSON.stringify(output, null, 2)}\n`;
  if (values.out) writeFileSync(resolve(values.out), text);
  console.log(text);
  if (result.errors.length > 0) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error.stack ?? error.message);
  process.exitCode = 2;
});
