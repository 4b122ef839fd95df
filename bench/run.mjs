#!/usr/bin/env node
// The vouch benchmark. For each project size it generates a synthetic project (bench/generate.mjs) in
// the temp dir and measures, in one run and on the same tree:
//   - `node -e 0`, the floor for any Node process;
//   - `vouch status --json` cold (stat cache emptied) and warm;
//   - `vouch run check --if-due` on a CURRENT check, against the check's own run time;
//   - `turbo run check --dry=json` hashing the same source files (npm bin and native binary), and a
//     variant that also hashes node_modules/** by content;
//   - peak memory of each process;
// then checks a few answers (an edit makes the check STALE, restoring the bytes makes it CURRENT, a
// touched installed file makes it STALE) and prints markdown tables. Results go to a JSON file in the
// temp dir, or to --out FILE.
//
//   node bench/run.mjs [--quick] [--sizes 1k,10k+50k,100k+50k] [--reps 10] [--cold-reps 5]
//                      [--check sleep|typecheck] [--check-ms 5000] [--out FILE] [--keep]

import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { arch, cpus, loadavg, platform, release, tmpdir, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { generate, TURBO_INSTALLED_CONFIG } from "./generate.mjs";
import { measureProcess, peakMemoryMethod } from "./measure.mjs";
import { renderMarkdown } from "./report.mjs";
import { summarize } from "./stats.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const BUILT_VOUCH = join(REPO, "dist", "bin", "main.js");
// The native scan (native/, built by npm install); without it vouch walks in JavaScript.
const NATIVE_SCAN = join(REPO, "build", "Release", "vouch_scan.node");
// Set by snapshotBuild(): the copy of the build that every vouch process of this run executes.
let VOUCH = BUILT_VOUCH;
const SCAN_FLOOR = join(REPO, "bench", "scanFloor.mjs");
const TURBO_BIN = join(REPO, "node_modules", ".bin", "turbo");
const TURBO_NATIVE = join(
  REPO,
  "node_modules",
  "@turbo",
  `${{ win32: "windows" }[platform()] ?? platform()}-${{ x64: "64" }[arch()] ?? arch()}`,
  "bin",
  platform() === "win32" ? "turbo.exe" : "turbo",
);
const DEFAULT_SIZES = ["1k", "10k+50k", "100k+50k"];
const QUICK_SIZES = ["1k", "10k+50k"];
const CHECK = "check";
const EDITED_SOURCE = join("src", "area0", "mod0", "part0", "file1.ts");
// Each repeated measurement gets about this much time; a slow process is repeated fewer times (never
// fewer than MIN_REPS), so that the 100k size stays within minutes.
const PHASE_BUDGET_MS = 60_000;
const MIN_REPS = 3;

function repsWithin(wanted, sampleMs) {
  return Math.max(MIN_REPS, Math.min(wanted, Math.floor(PHASE_BUDGET_MS / Math.max(1, sampleMs))));
}

// Same environment for every process, so vouch's recorded context never changes between runs and
// turbo never phones home.
const ENV = {
  ...process.env,
  TURBO_TELEMETRY_DISABLED: "1",
  DO_NOT_TRACK: "1",
  TURBO_NO_UPDATE_NOTIFIER: "1",
};

function parseCount(text) {
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text);
  if (!match) throw new Error(`"${text}" is not a file count; use e.g. 1000, 10k or 1m`);
  const scale = { "": 1, k: 1000, m: 1_000_000 }[match[2].toLowerCase()];
  return Math.round(Number(match[1]) * scale);
}

/** "10k+50k" -> 10,000 source files and 50,000 installed files. */
function parseSize(label) {
  const [sources, installed = "0"] = label.split("+");
  return { label, sources: parseCount(sources), installed: parseCount(installed) };
}

function parseOptions() {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      sizes: { type: "string" },
      reps: { type: "string", default: "10" },
      "cold-reps": { type: "string", default: "5" },
      "check-ms": { type: "string", default: "5000" },
      check: { type: "string", default: "sleep" },
      out: { type: "string" },
      keep: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(
      "usage: node bench/run.mjs [--quick] [--sizes 1k,10k+50k,100k+50k] [--reps N] [--cold-reps N] [--check sleep|typecheck] [--check-ms MS] [--out FILE] [--keep]",
    );
    process.exit(0);
  }
  const labels = values.sizes ? values.sizes.split(",").map((s) => s.trim()) : values.quick ? QUICK_SIZES : DEFAULT_SIZES;
  const positive = (flag) => {
    const n = Number(values[flag]);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${flag} wants a whole number of at least 1`);
    return n;
  };
  if (!["sleep", "typecheck"].includes(values.check)) throw new Error(`--check is sleep or typecheck, not "${values.check}"`);
  return {
    sizes: labels.map(parseSize),
    reps: positive("reps"),
    coldReps: positive("cold-reps"),
    checkMs: positive("check-ms"),
    check: values.check,
    out: values.out ? resolve(values.out) : join(tmpdir(), `vouch-bench-${new Date().toISOString().replace(/[:.]/g, "-")}.json`),
    keep: values.keep,
  };
}

function quiet(command, args) {
  try {
    return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
}

/** Whether src/ differs from the commit, so that a result can say which code it measured. */
function dirtyTree() {
  const status = quiet("git", ["-C", REPO, "status", "--porcelain", "--", "src", "native", "binding.gyp", "package.json"]);
  return status === null ? null : status.length > 0;
}

function describeMachine() {
  const cpuList = cpus();
  return {
    cpus: cpuList.length,
    cpu_model: cpuList[0]?.model ?? null,
    memory_gb: Math.round(totalmem() / 2 ** 30),
    platform: platform(),
    arch: arch(),
    kernel: release(),
    node: process.version,
    npm: quiet("npm", ["--version"]),
    git: quiet("git", ["--version"]),
    turbo: quiet(TURBO_BIN, ["--version"]),
    tmp_dir: tmpdir(),
    tmp_dir_fs: quiet("df", ["--output=fstype", tmpdir()])?.split("\n").pop()?.trim() ?? quiet("stat", ["-f", "-c", "%T", tmpdir()]),
    load_average_at_start: loadavg().map((x) => Math.round(x * 100) / 100),
    peak_memory_method: peakMemoryMethod(),
  };
}

/** Collects samples of one kind of process: wall ms and peak KB per run. */
class Figure {
  constructor() {
    this.ms = [];
    this.kb = [];
    this.observationMs = [];
  }
  add(sample) {
    this.ms.push(sample.ms);
    if (sample.peak_kb !== null) this.kb.push(sample.peak_kb);
    // vouch's own account of its scan, inside the process (status --json only).
    const observed = parseJson(sample.stdout)?.observation?.duration_ms;
    if (typeof observed === "number") this.observationMs.push(observed);
  }
  toJSON() {
    return {
      ms: summarize(this.ms),
      peak_kb: summarize(this.kb),
      ...(this.observationMs.length > 0 ? { observation_ms: summarize(this.observationMs) } : {}),
      samples_ms: this.ms.map((x) => Math.round(x * 10) / 10),
    };
  }
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function describeFailure(what, sample) {
  const detail = (sample.stderr || sample.stdout).trim().split("\n").slice(-5).join(" / ");
  return `${what} exited ${sample.code ?? sample.signal}: ${detail.slice(0, 400)}`;
}

function makeRunner(root) {
  const vouch = (...args) => measureProcess([process.execPath, VOUCH, ...args], { cwd: root, env: ENV });
  // The same build without its native scan: what a machine that could not compile it gets.
  const vouchPortable = (...args) => measureProcess([process.execPath, VOUCH, ...args], { cwd: root, env: { ...ENV, VOUCH_NATIVE: "0" } });
  const turbo = (binary, ...extra) =>
    measureProcess([binary, "run", CHECK, "--dry=json", ...extra], { cwd: root, env: ENV });
  const floor = () => measureProcess([process.execPath, "-e", "0"], { cwd: root, env: ENV });
  const scanFloor = () => measureProcess([process.execPath, SCAN_FLOOR], { cwd: root, env: ENV });
  return { vouch, vouchPortable, turbo, floor, scanFloor };
}

/** The check's entry of `vouch status --json`, or throws with what went wrong. */
function checkStatus(sample) {
  const json = parseJson(sample.stdout);
  const entry = json?.checks?.find((c) => c.name === CHECK);
  if (sample.code !== 0 || !entry) throw new Error(describeFailure("vouch status --json", sample));
  return entry;
}

function turboTask(sample) {
  const json = parseJson(sample.stdout);
  const task = json?.tasks?.find((t) => t.task === CHECK);
  if (sample.code !== 0 || !task) throw new Error(describeFailure("turbo run check --dry=json", sample));
  return { hash: task.hash, inputs: Object.keys(task.inputs ?? {}).length };
}

/** Copies the state db with its stat cache emptied (receipts kept), so a status run has to rehash everything. */
function makeColdState(stateDir, coldDir) {
  const require = createRequire(join(REPO, "package.json"));
  const Database = require("better-sqlite3");
  mkdirSync(coldDir, { recursive: true });
  for (const suffix of ["", "-wal"]) {
    if (existsSync(join(stateDir, `state.db${suffix}`))) copyFileSync(join(stateDir, `state.db${suffix}`), join(coldDir, `state.db${suffix}`));
  }
  const db = new Database(join(coldDir, "state.db"));
  try {
    const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'stat_cache'").get();
    if (!table) throw new Error("state.db has no stat_cache table; bench/run.mjs does not know how to empty the stat cache");
    const rows = db.prepare("SELECT count(*) AS n FROM stat_cache").get().n;
    db.prepare("DELETE FROM stat_cache").run();
    db.pragma("wal_checkpoint(TRUNCATE)");
    return rows;
  } finally {
    db.close();
  }
}

function restoreState(stateDir, coldDir) {
  for (const suffix of ["-wal", "-shm"]) rmSync(join(stateDir, `state.db${suffix}`), { force: true });
  // The native scan's directory listings are a cache too.
  for (const name of readdirSync(stateDir)) if (/^tree-.*\.cache$/.test(name)) rmSync(join(stateDir, name), { force: true });
  copyFileSync(join(coldDir, "state.db"), join(stateDir, "state.db"));
}

async function measureTurbo(run, result, options) {
  const first = await run.turbo(TURBO_BIN);
  const baseline = turboTask(first);
  result.turbo_hash = baseline.hash;
  result.turbo_inputs = baseline.inputs;
  if (existsSync(TURBO_NATIVE)) turboTask(await run.turbo(TURBO_NATIVE));
  const installed = await run.turbo(TURBO_BIN, "--root-turbo-json", TURBO_INSTALLED_CONFIG);
  result.turbo_installed_inputs = turboTask(installed).inputs;
  const figure = new Figure();
  const reps = repsWithin(options.coldReps, installed.ms);
  for (let i = 0; i < reps; i++) {
    const sample = await run.turbo(TURBO_BIN, "--root-turbo-json", TURBO_INSTALLED_CONFIG);
    turboTask(sample);
    figure.add(sample);
  }
  result.figures.turbo_installed = figure.toJSON();
  return baseline;
}

/** Warm status, turbo (npm bin and native) and the floor, interleaved so that each sees the same machine. */
async function measureInterleaved(run, result, options, { withVouch }) {
  const figures = {
    floor: new Figure(),
    scan_floor: new Figure(),
    turbo: new Figure(),
    turbo_native: new Figure(),
    status_warm: new Figure(),
    status_warm_portable: new Figure(),
  };
  let reps = options.reps;
  if (withVouch) {
    const warmUp = await run.vouch("status", "--json"); // fills the stat cache
    checkStatus(warmUp);
    reps = repsWithin(options.reps, warmUp.ms);
  }
  for (let i = 0; i < reps; i++) {
    figures.floor.add(await run.floor());
    const scan = await run.scanFloor();
    if (scan.code !== 0) throw new Error(describeFailure("bench/scanFloor.mjs", scan));
    figures.scan_floor.add(scan);
    const turbo = await run.turbo(TURBO_BIN);
    if (turboTask(turbo).hash !== result.turbo_hash) result.errors.push("turbo's hash changed between runs on an unchanged tree");
    figures.turbo.add(turbo);
    if (existsSync(TURBO_NATIVE)) figures.turbo_native.add(await run.turbo(TURBO_NATIVE));
    if (withVouch) {
      const sample = await run.vouch("status", "--json");
      const entry = checkStatus(sample);
      if (entry.freshness !== "CURRENT") result.errors.push(`warm status said ${entry.freshness} on an unchanged tree`);
      figures.status_warm.add(sample);
      const portable = await run.vouchPortable("status", "--json");
      if (checkStatus(portable).freshness !== "CURRENT") result.errors.push("warm status without the native scan was not CURRENT on an unchanged tree");
      figures.status_warm_portable.add(portable);
    }
  }
  for (const [key, figure] of Object.entries(figures)) if (figure.ms.length > 0) result.figures[key] = figure.toJSON();
}

function probe(result, name, expected, got) {
  result.probes.push({ name, expected, got, ok: expected === got });
}

/** The first real run: makes the receipt (and the state dir, which must exist before turbo's baseline hash). */
async function firstRun(run, result) {
  const first = await run.vouch("run", CHECK, "--json");
  if (first.code !== 0) throw new Error(describeFailure("vouch run check", first));
  result.vouch_inputs = parseJson(first.stdout)?.runs?.find((r) => r.name === CHECK)?.receipt?.input_count ?? null;
  const runFirst = new Figure();
  runFirst.add(first);
  result.figures.run_first = runFirst.toJSON();
  const afterRun = checkStatus(await run.vouch("status", "--json"));
  probe(result, "status right after a passing run", "CURRENT", afterRun.freshness);
  result.check_run_ms = afterRun.receipt?.duration_ms ?? null;
  const receiptId = afterRun.receipt?.run_id;
  result.first_receipt = receiptId ?? null;
}

async function measureVouch(run, root, result, options) {
  const stateDir = join(root, ".vouch");
  const receiptId = result.first_receipt;

  const coldDir = mkdtempSync(join(tmpdir(), "vouch-bench-cold-"));
  try {
    result.stat_cache_rows = makeColdState(stateDir, coldDir);
    const cold = new Figure();
    for (let i = 0; i < options.coldReps && (i < MIN_REPS || cold.ms.reduce((a, b) => a + b, 0) < PHASE_BUDGET_MS); i++) {
      restoreState(stateDir, coldDir);
      const sample = await run.vouch("status", "--json");
      const entry = checkStatus(sample);
      if (entry.freshness !== "CURRENT") result.errors.push(`cold status said ${entry.freshness} on an unchanged tree`);
      cold.add(sample);
    }
    result.figures.status_cold = cold.toJSON();
  } finally {
    rmSync(coldDir, { recursive: true, force: true });
  }

  await measureInterleaved(run, result, options, { withVouch: true });

  const skip = new Figure();
  const skipReps = repsWithin(options.reps, result.figures.status_warm.ms.p50);
  for (let i = 0; i < skipReps; i++) {
    const sample = await run.vouch("run", CHECK, "--if-due", "--json");
    if (sample.code !== 0) throw new Error(describeFailure("vouch run check --if-due", sample));
    const action = parseJson(sample.stdout)?.runs?.find((r) => r.name === CHECK)?.action;
    if (action !== "skipped") result.errors.push(`--if-due on a CURRENT check did not skip (action: ${action})`);
    skip.add(sample);
  }
  result.figures.skip = skip.toJSON();
  const afterSkips = checkStatus(await run.vouch("status", "--json"));
  probe(result, "--if-due on CURRENT leaves the receipt alone", receiptId, afterSkips.receipt?.run_id);

  if (result.check_run_ms) {
    const skipMs = result.figures.skip.ms.p50;
    const turbo = result.figures.turbo?.ms?.p50;
    const native = result.figures.turbo_native?.ms?.p50;
    const warm = result.figures.status_warm?.ms?.p50;
    result.ratios = {
      warm_status_over_turbo: warm && turbo ? warm / turbo : null,
      warm_status_over_turbo_native: warm && native ? warm / native : null,
      cold_status_over_turbo: turbo ? result.figures.status_cold.ms.p50 / turbo : null,
      warm_status_minus_floor_ms: warm ? warm - result.figures.floor.ms.p50 : null,
      warm_status_over_portable: warm && result.figures.status_warm_portable?.ms ? warm / result.figures.status_warm_portable.ms.p50 : null,
      warm_status_over_scan_floor: warm && result.figures.scan_floor?.ms ? warm / result.figures.scan_floor.ms.p50 : null,
      skip_over_check: skipMs / result.check_run_ms,
      skip_break_even_check_ms: skipMs / 0.02,
    };
  }

  await probeAnswers(run, root, result);
}

/** A few answers whose right value is known, checked on the big tree itself. */
async function probeAnswers(run, root, result) {
  const sourcePath = join(root, EDITED_SOURCE);
  const original = readFileSync(sourcePath);
  writeFileSync(sourcePath, Buffer.concat([original, Buffer.from("// edited\n")]));
  const edited = await run.vouch("status", "--json");
  probe(result, "status after a source edit", "STALE", checkStatus(edited).freshness);
  const editFigure = new Figure();
  editFigure.add(edited);
  result.figures.status_after_edit = editFigure.toJSON();
  probe(result, "turbo hash changes after a source edit", true, turboTask(await run.turbo(TURBO_BIN)).hash !== result.turbo_hash);

  writeFileSync(sourcePath, original);
  probe(result, "status after restoring the same bytes", "CURRENT", checkStatus(await run.vouch("status", "--json")).freshness);
  probe(result, "turbo hash back after restoring the bytes", result.turbo_hash, turboTask(await run.turbo(TURBO_BIN)).hash);

  if (result.installed > 0) {
    const installedPath = join(root, "node_modules", ".package-lock.json");
    const now = new Date();
    utimesSync(installedPath, now, now);
    probe(result, "status after touching an installed file", "STALE", checkStatus(await run.vouch("status", "--json")).freshness);
    const rerun = await run.vouch("run", CHECK, "--if-due", "--json");
    probe(result, "--if-due reruns a STALE check (exit code)", 0, rerun.code);
    const after = checkStatus(await run.vouch("status", "--json"));
    probe(result, "--if-due on STALE made a new receipt", true, after.receipt?.run_id !== undefined && after.receipt.run_id !== result.first_receipt);
    probe(result, "status after the rerun", "CURRENT", after.freshness);
  }
}

/**
 * Copies dist/ (and the package.json it reads its version from) under <repo>/.tmp/, so that a rebuild
 * while the benchmark runs cannot swap or half-delete the code being measured. Node still resolves
 * the repo's node_modules from there. Returns a digest of the build and a function that removes the copy.
 */
function snapshotBuild() {
  if (!existsSync(BUILT_VOUCH)) return { digest: null, remove: () => {} };
  for (let attempt = 1; ; attempt++) {
    const dir = mkdtempSync(join(REPO, ".tmp", "bench-build-"));
    const remove = () => rmSync(dir, { recursive: true, force: true });
    cpSync(join(REPO, "dist"), join(dir, "dist"), { recursive: true });
    copyFileSync(join(REPO, "package.json"), join(dir, "package.json"));
    if (existsSync(NATIVE_SCAN)) {
      mkdirSync(join(dir, "build", "Release"), { recursive: true });
      copyFileSync(NATIVE_SCAN, join(dir, "build", "Release", "vouch_scan.node"));
    }
    const main = join(dir, "dist", "bin", "main.js");
    const works = spawnSync(process.execPath, [main, "--help"], { stdio: "ignore" }).status === 0;
    if (works || attempt === 3) {
      VOUCH = main;
      const digest = createHash("sha256");
      for (const name of readdirSync(join(dir, "dist", "bin")).sort()) digest.update(name).update(readFileSync(join(dir, "dist", "bin", name)));
      return { digest: digest.digest("hex").slice(0, 16), remove };
    }
    remove();
    // Most likely caught in the middle of a rebuild; give it time to finish.
    spawnSync("sleep", ["10"]);
  }
}

function vouchUnavailable(root) {
  if (!existsSync(VOUCH)) return `dist/bin/main.js is missing; build with npm run build`;
  const probeRun = execFileSync(process.execPath, [VOUCH, "status", "--json"], {
    cwd: root,
    env: ENV,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).toString();
  return parseJson(probeRun)?.checks ? null : `vouch status --json printed no checks: ${probeRun.slice(0, 200)}`;
}

async function benchSize(size, options) {
  const parent = mkdtempSync(join(tmpdir(), `vouch-bench-${size.label.replace("+", "-")}-`));
  const root = join(parent, "project");
  const log = (text) => console.error(`[${size.label}] ${text}`);
  log(`generating ${size.sources} source + ${size.installed} installed files`);
  const generated = generate({ sources: size.sources, installed: size.installed, out: root, checkMs: options.checkMs, check: options.check });
  const result = {
    label: size.label,
    sources: size.sources,
    installed: size.installed,
    check: options.check,
    check_ms: options.check === "sleep" ? options.checkMs : null,
    generate_ms: generated.generate_ms,
    figures: {},
    ratios: null,
    check_run_ms: null,
    probes: [],
    errors: [],
  };
  const run = makeRunner(root);
  try {
    let unavailable;
    try {
      unavailable = vouchUnavailable(root);
    } catch (error) {
      unavailable = `vouch status --json failed: ${String(error.stderr || error.message).trim().split("\n").slice(-3).join(" / ")}`;
    }
    if (unavailable) {
      log(`vouch pending: ${unavailable}`);
      result.vouch_pending = unavailable;
      log("turbo");
      await measureTurbo(run, result, options);
      await measureInterleaved(run, result, options, { withVouch: false });
      for (const key of ["status_cold", "status_warm", "skip", "run_first"]) result.figures[key] = { pending: true };
    } else {
      log("vouch run check (first run)");
      await firstRun(run, result);
      log("turbo");
      await measureTurbo(run, result, options);
      log("vouch status cold, warm, --if-due");
      await measureVouch(run, root, result, options);
    }
  } catch (error) {
    result.errors.push(error.message);
    log(`error: ${error.message}`);
  } finally {
    if (options.keep) log(`kept ${root}`);
    else rmSync(parent, { recursive: true, force: true });
  }
  return result;
}

async function main() {
  const options = parseOptions();
  mkdirSync(join(REPO, ".tmp"), { recursive: true });
  const build = snapshotBuild();
  const results = {
    schema: 1,
    started_at: new Date().toISOString(),
    finished_at: null,
    command: `node bench/run.mjs ${process.argv.slice(2).join(" ")}`.trim(),
    machine: describeMachine(),
    vouch: { commit: quiet("git", ["-C", REPO, "rev-parse", "--short", "HEAD"]), dirty: dirtyTree(), bundle_digest: build.digest, native_scan: existsSync(NATIVE_SCAN) },
    options: { sizes: options.sizes.map((s) => s.label), reps: options.reps, cold_reps: options.coldReps, check: options.check, check_ms: options.checkMs },
    sizes: [],
  };
  try {
    for (const size of options.sizes) {
      results.sizes.push(await benchSize(size, options));
      writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
    }
  } finally {
    build.remove();
  }
  results.finished_at = new Date().toISOString();
  results.machine.load_average_at_end = loadavg().map((x) => Math.round(x * 100) / 100);
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
  const m = results.machine;
  const v = results.vouch;
  console.log(
    `vouch ${v.commit ?? "(no commit)"}${v.dirty ? " + uncommitted changes" : ""}, bundle ${v.bundle_digest}, native scan ${v.native_scan ? "built" : "missing"}; ${m.cpus} × ${m.cpu_model}, ${m.memory_gb} GB, ${m.platform} ${m.kernel}, Node ${m.node}, npm ${m.npm}, turbo ${m.turbo}, temp dir on ${m.tmp_dir_fs}, load average ${m.load_average_at_start.join(" ")} at start, ${m.load_average_at_end.join(" ")} at end\n`,
  );
  console.log(renderMarkdown(results));
  console.log(`results: ${options.out}`);
  if (results.sizes.some((s) => s.errors.length > 0 || s.probes.some((p) => !p.ok))) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error.stack ?? error.message);
  process.exitCode = 2;
});
