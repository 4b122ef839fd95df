#!/usr/bin/env node
// The workspace benchmark: what an agent's `pnpm -r test` costs after a one-package edit in a
// generated pnpm workspace (bench/generateWorkspace.mjs: 20 packages in a small dependency tree, each
// test about 2 s), three ways, in one run:
//
//   - as typed: `pnpm -r test`, every package's test;
//   - through the hook: `vouch hook claude` gets the PreToolUse event for `pnpm -r test`, and what it
//     answers is carried out: a deny runs nothing, a rewrite runs its updatedInput command, a pass
//     runs the command as typed. The time includes the hook's own process;
//   - `turbo run test` with its local cache, and the same with dependsOn ["^test"] (turbo.deps.json),
//     the turbo configuration in which a dependency's edit reaches its dependents' cache keys.
//
// Scenarios, each repeated --reps times, round-robin after a warm-up (a full run of each tool, so
// that the receipts and turbo's cache exist): an edit to a leaf package's source; an edit to the root
// package every other depends on; no edit. Each edit writes new bytes, so no tool can find them in a
// cache. Every command must succeed, or the benchmark fails; the hook's decision is recorded each
// time, and one other than the expected (a rewrite after an edit, a deny without one) is reported.
//
//   node bench/workspace.mjs [--packages 20] [--test-ms 2000] [--reps 3] [--step-timeout 300]
//                            [--vouch dist/bin/main.js] [--out FILE] [--keep]
//
// The workspace lives in a temp dir, removed on exit (also on an error or Ctrl-C) unless --keep.

import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, release, tmpdir, totalmem } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { generateWorkspace, reach, ROOT_PACKAGE, sourceFile, TURBO_DEPS_CONFIG } from "./generateWorkspace.mjs";
import { summarize } from "./stats.mjs";
import { killAll, preToolUse as hookEvent, readDecision, step as stepIn, tail } from "./steps.mjs";

const step = (argv, options) => stepIn(argv, { env: ENV, ...options });
const preToolUse = (cwd, command) => hookEvent(cwd, command, "bench-workspace");

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const BIN = join(REPO, "node_modules", ".bin");
const PNPM = join(BIN, "pnpm");
const TURBO = join(BIN, "turbo");
const TYPED = "pnpm -r test";

function parseOptions() {
  const { values } = parseArgs({
    options: {
      packages: { type: "string", default: "20" },
      "test-ms": { type: "string", default: "2000" },
      reps: { type: "string", default: "3" },
      "step-timeout": { type: "string", default: "300" },
      vouch: { type: "string", default: join(REPO, "dist", "bin", "main.js") },
      out: { type: "string" },
      keep: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log("usage: node bench/workspace.mjs [--packages 20] [--test-ms 2000] [--reps 3] [--step-timeout SECONDS] [--vouch PATH] [--out FILE] [--keep]");
    process.exit(0);
  }
  const whole = (flag, min) => {
    const n = Number(values[flag]);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${flag} wants a whole number of at least ${min}`);
    return n;
  };
  return {
    packages: whole("packages", 6),
    testMs: whole("test-ms", 0),
    reps: whole("reps", 1),
    stepTimeoutMs: whole("step-timeout", 1) * 1000,
    vouch: resolve(values.vouch),
    out: values.out ? resolve(values.out) : join(tmpdir(), `vouch-bench-workspace-${new Date().toISOString().replace(/[:.]/g, "-")}.json`),
    keep: values.keep,
  };
}

// One environment for every process: the repository's pnpm and turbo first on PATH (so that the
// tests' `pnpm run` and a rewrite's package checks find them), nothing fetched, nothing reported.
const ENV = {
  ...process.env,
  PATH: [BIN, process.env.PATH ?? ""].join(delimiter),
  npm_config_offline: "true",
  npm_config_update_notifier: "false",
  TURBO_TELEMETRY_DISABLED: "1",
  DO_NOT_TRACK: "1",
  TURBO_NO_UPDATE_NOTIFIER: "1",
  VOUCH_FORCE: "",
  VOUCH_HOOK_LOG: "",
};

/** Missing tools stop the run before anything is generated, with what to do about it. */
function preflight(options) {
  const missing = [];
  if (!existsSync(PNPM)) missing.push(`pnpm (${PNPM}): run \`npm ci\`, pnpm is a dev dependency`);
  if (!existsSync(TURBO)) missing.push(`turbo (${TURBO}): run \`npm ci\`, turbo is a dev dependency`);
  if (!existsSync(options.vouch)) missing.push(`vouch (${options.vouch}): run \`npm run build\``);
  if (missing.length > 0) throw new Error(`missing:\n  ${missing.join("\n  ")}`);
  const version = (file) => execFileSync(file, ["--version"], { env: ENV, encoding: "utf8", timeout: 30_000 }).trim();
  const vouch = execFileSync(process.execPath, [options.vouch, "--version"], { env: ENV, encoding: "utf8", timeout: 30_000 }).trim();
  return { pnpm: version(PNPM), turbo: version(TURBO), vouch };
}

/** The check names a rewritten `… run A B … --if-due` names, or null when it does not have that form. */
function rewrittenChecks(command) {
  const match = / run ((?:\S+ )+)--if-due\b/.exec(command);
  return match ? match[1].trim().split(/\s+/).map((word) => word.replace(/^'(.*)'$/, "$1")) : null;
}

/** turbo's "Cached: N cached, M total" line. */
function turboCache(stdout) {
  const match = /Cached:\s+(\d+) cached, (\d+) total/.exec(stdout);
  return match ? { cached: Number(match[1]), total: Number(match[2]) } : null;
}

/** The hook's own account of its last decision (VOUCH_HOOK_LOG), for the why. */
function lastLogLine(file) {
  try {
    const lines = readFileSync(file, "utf8").trim().split("\n");
    return JSON.parse(lines[lines.length - 1]);
  } catch {
    return null;
  }
}

function makeTools(root, options, hookLog) {
  const must = async (what, argv, extra = {}) => {
    const result = await step(argv, { cwd: root, timeoutMs: options.stepTimeoutMs, ...extra });
    if (result.code !== 0) throw new Error(`${what} exited ${result.code ?? result.signal}:\n${tail(result)}`);
    return result;
  };
  const shell = (what, command) => must(what, ["bash", "-c", command]);
  const vouch = (...args) => must(`vouch ${args.join(" ")}`, [process.execPath, options.vouch, ...args]);
  const turbo = (config) => must(`turbo run test${config ? ` --root-turbo-json ${config}` : ""}`, [TURBO, "run", "test", ...(config ? ["--root-turbo-json", config] : [])]);
  const hookInput = JSON.stringify(preToolUse(root, TYPED));
  /** The hook's decision for `pnpm -r test`, then what it returns carried out, as the agent's shell would. */
  const throughHook = async () => {
    rmSync(hookLog, { force: true });
    const hook = await step([process.execPath, options.vouch, "hook", "claude"], { cwd: root, timeoutMs: options.stepTimeoutMs, input: hookInput, env: { ...ENV, VOUCH_HOOK_LOG: hookLog } });
    if (hook.code !== 0) throw new Error(`vouch hook claude exited ${hook.code ?? hook.signal}:\n${tail(hook)}`);
    const answer = readDecision(hook.stdout);
    let ran = { ms: 0, stdout: "" };
    if (answer.decision === "rewrite") ran = await shell(`the hook's rewrite \`${answer.command}\``, answer.command);
    else if (answer.decision !== "deny") ran = await shell(`${TYPED} (the hook passed)`, TYPED);
    const why = lastLogLine(hookLog)?.why ?? null;
    return { ms: hook.ms + ran.ms, hook_ms: hook.ms, ran_ms: ran.ms, decision: answer.decision, why, command: answer.command, checks: answer.command ? rewrittenChecks(answer.command) : null };
  };
  return { shell, vouch, turbo, throughHook };
}

/** One sample list per measured cell, plus what the hook decided and turbo's cache counts. */
class Cell {
  constructor() {
    this.ms = [];
    this.notes = [];
  }
  add(ms, note) {
    this.ms.push(ms);
    if (note) this.notes.push(note);
  }
  toJSON() {
    return { ms: summarize(this.ms), samples_ms: this.ms.map((x) => Math.round(x)), ...(this.notes.length > 0 ? { runs: this.notes } : {}) };
  }
}

const SCENARIOS = ["leaf", "root", "none"];
const COLUMNS = ["typed", "hook", "turbo", "turbo_deps"];

async function main() {
  const options = parseOptions();
  const versions = preflight(options);
  const work = mkdtempSync(join(tmpdir(), "vouch-bench-workspace-"));
  const root = join(work, "ws");
  const cleanup = () => {
    killAll();
    if (!options.keep) rmSync(work, { recursive: true, force: true });
    else console.error(`kept ${root}`);
  };
  const onSignal = () => {
    cleanup();
    process.exit(130);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const startedAt = Date.now();
  try {
    console.error(`generating ${options.packages} packages (tests of ${options.testMs} ms) in ${root}…`);
    const { tree, names } = generateWorkspace({ root, packages: options.packages, testMs: options.testMs, pnpm: PNPM, pnpmVersion: versions.pnpm, env: ENV });
    const leaf = names[names.length - 1];
    const reached = { leaf: reach(tree, leaf), root: reach(tree, ROOT_PACKAGE), none: [] };
    const edited = { leaf, root: ROOT_PACKAGE, none: null };
    // Outside the workspace, so that the log is no input of any check.
    const tools = makeTools(root, options, join(work, "hook.log"));
    let edits = 0;
    const edit = (name) => appendFileSync(join(root, sourceFile(name)), `export const benchEdit${++edits} = ${edits};\n`);

    console.error("warming up: a full run of each tool…");
    const warm = {
      typed_ms: Math.round((await tools.shell(TYPED, TYPED)).ms),
      vouch_run_ms: Math.round((await tools.vouch("run", "test")).ms),
      turbo_ms: Math.round((await tools.turbo()).ms),
      turbo_deps_ms: Math.round((await tools.turbo(TURBO_DEPS_CONFIG)).ms),
    };
    const status = JSON.parse((await tools.vouch("status", "--json")).stdout);
    const notCurrent = status.checks.filter((c) => c.freshness !== "CURRENT" || c.result !== "PASS").map((c) => `${c.name} ${c.freshness}`);
    if (notCurrent.length > 0) throw new Error(`after \`vouch run test\`, not every package check is CURRENT PASS: ${notCurrent.join(", ")}`);

    const cells = Object.fromEntries(SCENARIOS.map((s) => [s, Object.fromEntries(COLUMNS.map((c) => [c, new Cell()]))]));
    const problems = [];
    const expected = { leaf: "rewrite", root: "rewrite", none: "deny" };
    const record = (scenario, rep, sample) => {
      cells[scenario].hook.add(sample.ms, { decision: sample.decision, why: sample.why, hook_ms: Math.round(sample.hook_ms), ran_ms: Math.round(sample.ran_ms), command: sample.command, checks: sample.checks });
      if (sample.decision !== expected[scenario]) problems.push(`${scenario}, rep ${rep + 1}: the hook decided ${sample.decision} (${sample.why ?? "no reason logged"}), expected ${expected[scenario]}`);
      else if (sample.decision === "rewrite" && sample.checks && sample.checks.length !== reached[scenario].length) {
        problems.push(`${scenario}, rep ${rep + 1}: the rewrite runs ${sample.checks.length} checks, the edit reached ${reached[scenario].length} packages`);
      }
    };
    // What turbo should miss: the edited package alone without dependsOn (its key is its own
    // files), every reached package with ^test (a key includes its dependencies' keys).
    const turboExpected = (scenario, config) => (scenario === "none" ? 0 : config ? reached[scenario].length : 1);
    const turboRow = async (scenario, rep, column, config) => {
      const result = await tools.turbo(config);
      const cache = turboCache(result.stdout);
      cells[scenario][column].add(result.ms, cache);
      const ran = cache ? cache.total - cache.cached : null;
      if (ran !== turboExpected(scenario, config)) problems.push(`${scenario}, rep ${rep + 1}: turbo${config ? " (^test)" : ""} ran ${ran ?? "an unknown number of"} tasks, expected ${turboExpected(scenario, config)}`);
    };

    // Untimed, before each scenario: every tool has seen every edit so far, so that the edit that
    // comes next is the only change any of them meets (a skip of CURRENT checks, cache hits).
    const settle = async () => {
      await tools.vouch("run", "test", "--if-due");
      await tools.turbo();
      await tools.turbo(TURBO_DEPS_CONFIG);
    };
    for (let rep = 0; rep < options.reps; rep++) {
      for (const scenario of ["root", "leaf", "none"]) {
        console.error(`rep ${rep + 1}/${options.reps}: ${scenario === "none" ? "no edit" : `an edit to ${edited[scenario]}`}…`);
        await settle();
        const change = () => scenario !== "none" && edit(edited[scenario]);
        change();
        cells[scenario].typed.add((await tools.shell(TYPED, TYPED)).ms);
        change();
        await turboRow(scenario, rep, "turbo");
        change();
        await turboRow(scenario, rep, "turbo_deps", TURBO_DEPS_CONFIG);
        change();
        record(scenario, rep, await tools.throughHook());
      }
    }

    const results = {
      machine: {
        cpus: cpus().length,
        cpu_model: cpus()[0]?.model ?? null,
        memory_gb: Math.round(totalmem() / 2 ** 30),
        kernel: release(),
        node: process.version,
        ...versions,
        load_average_at_start: loadAtStart,
        load_average_at_end: loadavg().map((x) => Math.round(x * 100) / 100),
      },
      commit: quiet("git", ["-C", REPO, "rev-parse", "--short", "HEAD"]),
      options: { packages: options.packages, test_ms: options.testMs, reps: options.reps, vouch: options.vouch },
      workspace: {
        tree: Object.fromEntries(tree),
        leaf,
        root: ROOT_PACKAGE,
        reached: { leaf: reached.leaf.length, root: reached.root.length },
        // The defaults each tool runs at, since none is given a flag: pnpm's is min(4, cores).
        concurrency: { pnpm: Math.min(4, availableParallelism()), turbo: 10, vouch: availableParallelism() },
      },
      warm_up: warm,
      scenarios: Object.fromEntries(SCENARIOS.map((s) => [s, { edited: edited[s], reached: reached[s].length, ...Object.fromEntries(COLUMNS.map((c) => [c, cells[s][c].toJSON()])) }])),
      problems,
      took_s: Math.round((Date.now() - startedAt) / 1000),
    };
    for (const s of SCENARIOS) results.scenarios[s].ratios = ratios(results.scenarios[s]);
    writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
    console.log(renderWorkspace(results));
    console.log(`JSON: ${options.out}`);
    if (problems.length > 0) process.exitCode = 1;
  } finally {
    cleanup();
  }
}

const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);

function quiet(file, args) {
  try {
    return execFileSync(file, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
}

const p50 = (cell) => cell?.ms?.p50 ?? null;
const ratio = (a, b) => (a === null || b === null || b === 0 ? null : Math.round((a / b) * 1000) / 1000);

/** vouch (through the hook) over the command as typed and over turbo, by medians. */
function ratios(scenario) {
  return {
    vouch_over_typed: ratio(p50(scenario.hook), p50(scenario.typed)),
    vouch_over_turbo: ratio(p50(scenario.hook), p50(scenario.turbo)),
    vouch_over_turbo_deps: ratio(p50(scenario.hook), p50(scenario.turbo_deps)),
  };
}

/** What the hook decided over the repetitions, e.g. "rewrite ×3" or "pass ×3: ran as typed". */
function decisions(cell) {
  const counts = new Map();
  for (const run of cell.runs ?? []) counts.set(run.decision, (counts.get(run.decision) ?? 0) + 1);
  return [...counts].map(([d, n]) => `${d} ×${n}${d === "pass" ? " (ran as typed: the hook did not decide)" : ""}`).join(", ") || "–";
}

function turboCached(cell) {
  const runs = (cell.runs ?? []).filter(Boolean);
  if (runs.length === 0) return "";
  const misses = [...new Set(runs.map((r) => r.total - r.cached))];
  return ` [${misses.join("/")} ran]`;
}

function renderWorkspace(results) {
  const s = (x) => (x === null || x === undefined ? "–" : (x / 1000).toFixed(2));
  const cell = (c) => (c?.ms ? `${s(c.ms.p50)} (${s(c.ms.min)}–${s(c.ms.max)})` : "–");
  const r = (x) => (x === null || x === undefined ? "–" : `${x.toFixed(2)}×`);
  const label = {
    leaf: `edit a leaf (${results.workspace.leaf}; ${results.scenarios.leaf.reached} package reached)`,
    root: `edit the root (${results.workspace.root}; ${results.scenarios.root.reached} packages reached)`,
    none: "no edit",
  };
  const m = results.machine;
  const lines = [
    `machine: ${m.cpus} × ${m.cpu_model}, ${m.memory_gb} GB, Linux ${m.kernel}, Node ${m.node}; pnpm ${m.pnpm}, turbo ${m.turbo}, vouch ${m.vouch}; load ${m.load_average_at_start?.join(" ")} → ${m.load_average_at_end.join(" ")}`,
    `workspace: ${results.options.packages} packages, tests of ${results.options.test_ms} ms; ${results.options.reps} reps per cell; took ${results.took_s} s`,
    `at once: pnpm ${results.workspace.concurrency.pnpm}, turbo ${results.workspace.concurrency.turbo}, vouch ${results.workspace.concurrency.vouch} (their defaults)`,
    "",
    "| wall time, s: p50 (min–max) | `pnpm -r test` as typed | the hook, then what it returns | `turbo run test` | `turbo run test`, dependsOn `^test` | vouch ÷ typed | vouch ÷ turbo | vouch ÷ turbo `^test` | the hook decided |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---|",
  ];
  for (const name of SCENARIOS) {
    const sc = results.scenarios[name];
    lines.push(
      `| ${label[name]} | ${cell(sc.typed)} | ${cell(sc.hook)} | ${cell(sc.turbo)}${turboCached(sc.turbo)} | ${cell(sc.turbo_deps)}${turboCached(sc.turbo_deps)} | ${r(sc.ratios.vouch_over_typed)} | ${r(sc.ratios.vouch_over_turbo)} | ${r(sc.ratios.vouch_over_turbo_deps)} | ${decisions(sc.hook)} |`,
    );
  }
  const hookOnly = (results.scenarios.none.hook.runs ?? []).map((run) => run.hook_ms);
  if (hookOnly.length > 0) lines.push("", `the hook's own process, no edit: ${summarize(hookOnly).p50} ms p50`);
  if (results.problems.length > 0) lines.push("", "Problems seen:", ...results.problems.map((p) => `- ${p}`));
  return `${lines.join("\n")}\n`;
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
