#!/usr/bin/env node
// The observer benchmark. On each target (generated projects of the given sizes, and a copy of this
// repository with its real node_modules) it measures, in one run and on the same tree:
//   - `vouch start`: wall time and the observer's own ready_ms, index size, watches, and its memory;
//   - socket round trips of status --sync and --cached, p50/p90/p99 over --queries questions, each
//     on a fresh connection as the CLI's client makes them (newline-delimited JSON-RPC 2.0), back to
//     back and, for --sync, also --spaced questions 700 ms apart, the way an agent asks;
//   - whole processes, interleaved: `node -e 0`, `vouch status --json` answered by the observer
//     (sync and --cached), the direct scan `vouch status --json --no-observer`, and
//     `turbo run check --dry=json` (npm bin and native binary);
//   - the floor and the served `vouch status --json` again, 2 × --reps rounds of the two alone, so
//     that the status's cost over the floor is not the machine's recovery from a direct scan and
//     two turbo runs;
//   - how long after a write the answer turns STALE: the first --sync answer after the write (it
//     must already be STALE), --cached polled until it is, a whole `vouch status --json`, a --sync
//     answer --pause-ms after the write (the agent's loop: edit, do something, ask), and the first
//     --sync answer after an installed file is touched;
//   - --busy --sync questions while another process keeps writing a git-ignored file in the root;
// and it counts every wrong answer: CURRENT where STALE is right (the one that would skip a check
// that must run), and STALE where CURRENT is right. Prints markdown tables and ratios, writes JSON
// to --out, and exits 1 on any wrong answer or error.
//
//   node bench/observer.mjs [--sizes 10k+50k,100k+50k] [--no-repo] [--queries 1000] [--spaced 50]
//                           [--reps 10] [--start-reps 3] [--stale-rounds 20] [--pause-ms 3000]
//                           [--pause-rounds 10] [--check-ms 200] [--busy 15] [--vouch dist/bin/main.js]
//                           [--out FILE] [--keep] [--cpu N]
//
// --cpu N runs the floor, every timed `vouch status` process and turbo on CPU N alone (taskset). On a
// virtual machine whose CPUs differ in speed, a process lands on either, and a p50 over a mix of two
// speeds moves by more than the difference measured. The observer runs wherever it runs.
//
// Every observer it starts is stopped before it exits, also on an error or Ctrl-C.

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  appendFileSync,
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
import { connect } from "node:net";
import { arch, cpus, loadavg, platform, release, tmpdir, totalmem } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { generate } from "./generate.mjs";
import { measureProcess, peakMemoryMethod } from "./measure.mjs";
import { summarize } from "./stats.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const BUILT_VOUCH = join(REPO, "dist", "bin", "main.js");
let VOUCH = BUILT_VOUCH;
const TURBO_BIN = join(REPO, "node_modules", ".bin", "turbo");
const TURBO_NATIVE = join(
  REPO,
  "node_modules",
  "@turbo",
  `${{ win32: "windows" }[platform()] ?? platform()}-${{ x64: "64" }[arch()] ?? arch()}`,
  "bin",
  platform() === "win32" ? "turbo.exe" : "turbo",
);
const CHECK = "check";
const GENERATED_EDIT = join("src", "area0", "mod0", "part0", "file1.ts");
const REPO_EDIT = "README.md";
// Paths of the repository that its copy leaves out: scratch, build output and local state.
const REPO_COPY_SKIP = new Set([".tmp", ".vouch", ".demo", "coverage", "dist"]);
const SOCKET_BUDGET_MS = 25; // the design's budget: status from a warm observer on 10k files, socket p50
const SPACED_GAP_MS = 700; // longer than the watcher's 500 ms batching window
const POLL_LIMIT_MS = 10_000;
const INSTALLED_ROUNDS = 3;
// Git ignores .turbo/ in every target (the generated .gitignore has it, and the repository's copy adds it).
const BUSY_FILE = join(".turbo", "bench-busy.txt");
const BUSY_WRITE_MS = 100;
const GC_WAIT_MS = 10 * 60_000;
const RPC_DEADLINE_MS = 30_000;
const IDLE_TIMEOUT = "20m";
// A check's inputs when its config names none (src/core/config.ts).
const DEFAULT_INPUTS = ["**"];
const DEFAULT_INSTALLED = ["node_modules/**"];

const ENV = {
  ...process.env,
  TURBO_TELEMETRY_DISABLED: "1",
  DO_NOT_TRACK: "1",
  TURBO_NO_UPDATE_NOTIFIER: "1",
};

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Like summarize(), with p99 and two decimals, for the socket figures taken a thousand times. */
function distribution(samples) {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1];
  const round = (x) => Math.round(x * 100) / 100;
  return { n: sorted.length, min: round(sorted[0]), p50: round(at(50)), p90: round(at(90)), p99: round(at(99)), max: round(sorted.at(-1)) };
}

function parseCount(text) {
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text);
  if (!match) throw new Error(`"${text}" is not a file count; use e.g. 1000, 10k or 1m`);
  return Math.round(Number(match[1]) * { "": 1, k: 1000, m: 1_000_000 }[match[2].toLowerCase()]);
}

function parseOptions() {
  const { values } = parseArgs({
    options: {
      sizes: { type: "string", default: "10k+50k,100k+50k" },
      "no-repo": { type: "boolean", default: false },
      queries: { type: "string", default: "1000" },
      spaced: { type: "string", default: "50" },
      reps: { type: "string", default: "10" },
      "start-reps": { type: "string", default: "3" },
      "stale-rounds": { type: "string", default: "20" },
      "pause-ms": { type: "string", default: "3000" },
      "pause-rounds": { type: "string", default: "10" },
      "check-ms": { type: "string", default: "200" },
      busy: { type: "string", default: "15" },
      vouch: { type: "string" },
      out: { type: "string" },
      keep: { type: "boolean", default: false },
      cpu: { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(
      "usage: node bench/observer.mjs [--sizes 10k+50k,100k+50k] [--no-repo] [--queries N] [--spaced N] [--reps N] [--start-reps N] [--stale-rounds N] [--pause-ms MS] [--pause-rounds N] [--check-ms MS] [--busy N] [--vouch PATH] [--out FILE] [--keep] [--cpu N]",
    );
    process.exit(0);
  }
  const whole = (flag, min = 1) => {
    const n = Number(values[flag]);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${flag} wants a whole number of at least ${min}`);
    return n;
  };
  const sizes = values.sizes
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((label) => {
      const [sources, installed = "0"] = label.split("+");
      return { label, sources: parseCount(sources), installed: parseCount(installed) };
    });
  return {
    sizes,
    repo: !values["no-repo"],
    queries: whole("queries"),
    spaced: whole("spaced", 0),
    reps: whole("reps"),
    startReps: whole("start-reps"),
    staleRounds: whole("stale-rounds"),
    pauseMs: whole("pause-ms", 0),
    pauseRounds: whole("pause-rounds", 0),
    checkMs: whole("check-ms", 0),
    busy: whole("busy", 0),
    vouch: values.vouch ? resolve(values.vouch) : null,
    out: values.out ? resolve(values.out) : join(tmpdir(), `vouch-bench-observer-${new Date().toISOString().replace(/[:.]/g, "-")}.json`),
    keep: values.keep,
    cpu: values.cpu === undefined ? null : whole("cpu", 0),
  };
}

function quiet(command, args, cwd = REPO) {
  try {
    return execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
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

/** Peak and current resident set of a process, from /proc (KB). */
function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const field = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
    return { rss_kb: field("VmRSS"), peak_kb: field("VmHWM") };
  } catch {
    return { rss_kb: null, peak_kb: null };
  }
}

/** Whether pid runs. A zombie does not: where nothing reaps orphans, a stopped observer stays one. */
function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
  } catch {
    return false;
  }
}

/** The git checkout holding the measured build (the default copy under .tmp/ is in this one), or this repo. */
function vouchCheckout() {
  return quiet("git", ["-C", dirname(VOUCH), "rev-parse", "--show-toplevel"]) ?? REPO;
}

/**
 * The build to measure. --vouch names one, used in place (the caller keeps it still). Otherwise dist/ is
 * copied under .tmp/, with the package.json its version is read from, so that a rebuild during the run
 * cannot change the code measured (as bench/run.mjs does).
 */
function chooseBuild(path) {
  if (path) {
    if (!existsSync(path)) throw new Error(`--vouch ${path}: no such file`);
    VOUCH = path;
    return { digest: bundleDigest(dirname(path)), remove: () => {} };
  }
  if (!existsSync(BUILT_VOUCH)) throw new Error(`${BUILT_VOUCH} is missing; run npm run build first`);
  mkdirSync(join(REPO, ".tmp"), { recursive: true });
  for (let attempt = 1; ; attempt++) {
    const dir = mkdtempSync(join(REPO, ".tmp", "bench-observer-build-"));
    const remove = () => rmSync(dir, { recursive: true, force: true });
    cpSync(join(REPO, "dist"), join(dir, "dist"), { recursive: true });
    // The native addon is found two levels above dist/bin: without it, vouch measures its JavaScript fallbacks.
    if (existsSync(join(REPO, "build", "Release"))) cpSync(join(REPO, "build", "Release"), join(dir, "build", "Release"), { recursive: true });
    copyFileSync(join(REPO, "package.json"), join(dir, "package.json"));
    const main = join(dir, "dist", "bin", "main.js");
    // A copy taken in the middle of a rebuild does not run: wait and take another.
    const works = spawnSync(process.execPath, [main, "--help"], { stdio: "ignore" }).status === 0;
    if (works || attempt === 3) {
      VOUCH = main;
      return { digest: bundleDigest(dirname(main)), remove };
    }
    remove();
    spawnSync("sleep", ["10"]);
  }
}

function bundleDigest(dir) {
  const digest = createHash("sha256");
  for (const name of readdirSync(dir).sort()) digest.update(name).update(readFileSync(join(dir, name)));
  return digest.digest("hex").slice(0, 16);
}

// ---------------------------------------------------------------------------------------------
// Clean-up. A leftover observer keeps watching and rescanning, and skews every later measurement on
// this machine, so each one started here is stopped on the way out, whatever the way out is.

/** pid → root of every observer this run started and has not seen stop. */
const observers = new Map();
/** The temp dirs this run made; every project it starts an observer for is under one of them. */
const scratchDirs = [];
/** Helper processes of ours that must not outlive the run (the busy writer). */
const helpers = new Set();

/** The command line of pid when it is a vouch observer (`main.js __observe ...`), else null. */
function daemonArgs(pid) {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return args.includes("__observe") ? args : null;
  } catch {
    return null;
  }
}

const onOurProject = (args) => args.some((arg) => scratchDirs.some((dir) => arg.startsWith(`${dir}/`)));

/** Whether pid is an observer of ours: run from the build measured here, or on one of our projects. */
function ourObserver(pid) {
  const args = daemonArgs(pid);
  return args !== null && (args.includes(VOUCH) || onOurProject(args));
}

function kill(pid) {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // it has just exited
  }
}

/** Synchronous, so that it can run in a signal handler and on exit: `vouch stop`, then SIGKILL for one that stays. */
function stopEveryObserver() {
  for (const child of helpers) child.kill();
  for (const [pid, root] of observers) {
    if (alive(pid)) spawnSync(process.execPath, [VOUCH, "stop", "--json"], { cwd: root, env: ENV, stdio: "ignore", timeout: 15_000 });
    if (alive(pid) && ourObserver(pid)) kill(pid);
    observers.delete(pid);
  }
  // Any other observer on one of our projects: a `vouch start` that failed after the launch.
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const args = daemonArgs(Number(name));
    if (args !== null && onOurProject(args) && alive(Number(name))) kill(Number(name));
  }
}

/** Whether this build has the observer: `vouch start --help` answers. */
function observerBuilt() {
  const probe = spawnSync(process.execPath, [VOUCH, "start", "--help"], { encoding: "utf8" });
  return probe.status === 0 && /start/.test(probe.stdout + probe.stderr);
}

// ---------------------------------------------------------------------------------------------
// The socket client: one connection per question, as the CLI's own client does.

function rpc(socket, method, params, deadlineMs = RPC_DEADLINE_MS) {
  return new Promise((resolvePromise, reject) => {
    const connection = connect(socket);
    let buffer = "";
    let settled = false;
    const finish = (error, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      connection.destroy();
      if (error) reject(error);
      else resolvePromise(value);
    };
    const timer = setTimeout(() => finish(new Error(`no answer to "${method}" within ${deadlineMs} ms`)), deadlineMs);
    connection.setEncoding("utf8");
    connection.on("connect", () => connection.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })}\n`));
    connection.on("data", (chunk) => {
      buffer += chunk;
      const end = buffer.indexOf("\n");
      if (end < 0) return;
      const message = parseJson(buffer.slice(0, end));
      if (message === null) return finish(new Error("the observer sent something that is not JSON"));
      finish(null, message);
    });
    connection.on("error", (error) => finish(error));
    connection.on("close", () => finish(new Error(`the connection closed before an answer to "${method}"`)));
  });
}

/**
 * Asks the observer what `vouch status` asks it (the `observe` method), with the checks' inputs as
 * the config gives them. The client works out freshness itself from the answer, as below.
 */
function makeAsker(socket, root) {
  const config = JSON.parse(readFileSync(join(root, "vouch.config.json"), "utf8"));
  const checks = config.checks.map((c) => ({ name: c.name, inputs: c.inputs ?? DEFAULT_INPUTS, installed: c.installed ?? DEFAULT_INSTALLED }));
  return {
    ask: (mode) => rpc(socket, "observe", { checks, mode }),
    info: async () => {
      const message = await rpc(socket, "info", {});
      if (message.error) throw new Error(`the observer refused "info": ${message.error.message}`);
      return message.result;
    },
  };
}

/**
 * The check's freshness in an `observe` answer. It carries the observed manifest digest and the
 * latest receipt; their digests differ exactly when the inputs changed, since the definition and the
 * context do not change during the benchmark.
 */
function freshnessOf(message) {
  if (message.error) return { freshness: "ERROR", detail: message.error.message };
  const result = message.result ?? {};
  if (result.healthy === false) return { freshness: "UNVERIFIED", detail: (result.reasons ?? []).map((r) => r.code).join(",") };
  const entry = (result.checks ?? []).find((c) => c.name === CHECK);
  if (!entry) return { freshness: "MISSING", detail: "no entry for the check" };
  if (entry.problems.length > 0 || !entry.receipt) return { freshness: "UNVERIFIED", detail: "problems or no receipt" };
  return { freshness: entry.manifestDigest === entry.receipt.manifestDigest ? "CURRENT" : "STALE", detail: "" };
}

// ---------------------------------------------------------------------------------------------
// Targets

/** A copy of this repository with its real node_modules, a one-check config and a turbo task over the same files. */
function copyRepo(parent) {
  const root = join(parent, "project");
  cpSync(REPO, root, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => {
      const rel = source.slice(REPO.length + 1);
      return rel === "" || !REPO_COPY_SKIP.has(rel.split("/")[0]);
    },
  });
  writeFileSync(
    join(root, "vouch.config.json"),
    `${JSON.stringify({ schema: 1, packageManager: "npm", checks: [{ name: CHECK, kind: "custom", command: ["node", "-e", "0"] }] }, null, 2)}\n`,
  );
  writeFileSync(
    join(root, "turbo.json"),
    `${JSON.stringify({ $schema: "https://turborepo.com/schema.json", tasks: { [CHECK]: { inputs: ["$TURBO_DEFAULT$"], outputs: [], cache: true } } }, null, 2)}\n`,
  );
  // turbo writes .turbo/ in the root on its first run; the generated projects ignore it too.
  appendFileSync(join(root, ".gitignore"), ".turbo/\n");
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  pkg.packageManager ??= `npm@${quiet("npm", ["--version"]) ?? "10.0.0"}`;
  pkg.scripts = { ...pkg.scripts, [CHECK]: "node -e 0" };
  writeFileSync(join(root, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  return root;
}

/**
 * Waits for git's background gc. The commit of a generated project leaves tens of thousands of loose
 * objects, so git starts `gc --auto` detached; when it prunes them, the deletions in .git/objects
 * flood the observer with events (enough to overflow the kernel's queue at 100k files), and it takes
 * a core. Then runs any gc still due in the foreground, so that none starts during the measurements.
 */
async function settleGit(root, log) {
  // gc.pid holds "<pid> <host>" while a gc runs; one left by a gc that died names a dead pid.
  const gcRunning = () => {
    try {
      return alive(Number(readFileSync(join(root, ".git", "gc.pid"), "utf8").split(" ")[0]));
    } catch {
      return false;
    }
  };
  const started = nowMs();
  while (gcRunning() && nowMs() - started < GC_WAIT_MS) await sleep(1000);
  if (gcRunning()) log(`git gc still running after ${GC_WAIT_MS / 1000} s; going on`);
  quiet("git", ["-C", root, "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet"]);
  const ms = nowMs() - started;
  if (ms > 2000) log(`waited ${Math.round(ms / 1000)} s for git gc`);
}

function countFiles(dir) {
  let files = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) files += countFiles(join(dir, entry.name));
    else files++;
  }
  return files;
}

// ---------------------------------------------------------------------------------------------
// Measurements

class Figure {
  constructor() {
    this.ms = [];
    this.kb = [];
    this.fellBack = 0;
    this.observationMs = [];
  }
  add(sample) {
    this.ms.push(sample.ms);
    if (sample.peak_kb !== null) this.kb.push(sample.peak_kb);
    // vouch's own account of its observation, inside the process (status --json only).
    const observed = parseJson(sample.stdout)?.observation?.duration_ms;
    if (typeof observed === "number") this.observationMs.push(observed);
  }
  toJSON() {
    return {
      ms: summarize(this.ms),
      peak_kb: summarize(this.kb),
      ...(this.observationMs.length > 0 ? { observation_ms: summarize(this.observationMs) } : {}),
      ...(this.fellBack > 0 ? { answered_by_a_scan_instead: this.fellBack } : {}),
      samples_ms: this.ms.map((x) => Math.round(x * 10) / 10),
    };
  }
}

function makeRunner(root, cpu) {
  const pinned = (argv) => (cpu === null ? argv : ["taskset", "-c", String(cpu), ...argv]);
  return {
    vouch: (...args) => measureProcess([process.execPath, VOUCH, ...args], { cwd: root, env: ENV }),
    turbo: (binary) => measureProcess(pinned([binary, "run", CHECK, "--dry=json"]), { cwd: root, env: ENV }),
    floor: () => measureProcess(pinned([process.execPath, "-e", "0"]), { cwd: root, env: ENV }),
    /** A status whose time is compared with the floor's: on the floor's CPU. Never `start`: the observer would inherit the CPU. */
    status: (...args) => measureProcess(pinned([process.execPath, VOUCH, "status", ...args]), { cwd: root, env: ENV }),
  };
}

/** The check's entry of `vouch status --json`, or throws. */
function statusEntry(sample, what = "vouch status --json") {
  const json = parseJson(sample.stdout);
  const entry = json?.checks?.find((c) => c.name === CHECK);
  if (sample.code !== 0 || !entry) throw new Error(describeFailure(what, sample));
  return { entry, source: json.observation?.source ?? "(none)", mode: json.observation?.mode ?? null };
}

function turboHash(sample) {
  const task = parseJson(sample.stdout)?.tasks?.find((t) => t.task === CHECK);
  if (sample.code !== 0 || !task) throw new Error(describeFailure("turbo run check --dry=json", sample));
  return task.hash;
}

async function startObserver(run, root) {
  // The idle timeout is a second safety net: an observer left behind by a killed benchmark ends on its own.
  const sample = await run.vouch("start", "--json", "--idle-timeout", IDLE_TIMEOUT);
  const json = parseJson(sample.stdout);
  if (typeof json?.pid === "number") observers.set(json.pid, root);
  if (sample.code !== 0 || !json?.pid) throw new Error(describeFailure("vouch start --json", sample));
  return { sample, json };
}

async function stopObserver(run, result) {
  const sample = await run.vouch("stop", "--json");
  const json = parseJson(sample.stdout);
  if (sample.code !== 0 || !json) result.errors.push(describeFailure("vouch stop --json", sample));
  if (typeof json?.pid === "number") observers.delete(json.pid);
  return json;
}

/** Files the observer left in <stateDir>/observer/ besides its log (none is right after a stop). */
function leftovers(stateDir) {
  const dir = join(stateDir, "observer");
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => !name.endsWith(".log"));
}

/** Counts an answer whose right value is known, and whether it was wrong; returns whether it was right. */
function judge(result, answer, right) {
  result.answers_checked++;
  if (answer === right) return true;
  if (answer === "CURRENT" && right === "STALE") result.wrong.false_current++;
  if (answer === "STALE" && right === "CURRENT") result.wrong.false_stale++;
  return false;
}

async function measureStart(run, target, result, options) {
  const start = new Figure();
  const readyMs = [];
  let last;
  for (let i = 0; i < options.startReps; i++) {
    if (i > 0) {
      const stopped = await stopObserver(run, result);
      if (stopped?.action !== "stopped") result.errors.push(`vouch stop said ${stopped?.action}, expected stopped`);
      const left = leftovers(target.stateDir);
      if (left.length > 0) result.errors.push(`vouch stop left ${left.join(", ")} behind`);
    }
    last = await startObserver(run, target.root);
    start.add(last.sample);
    if (typeof last.json.ready_ms === "number") readyMs.push(last.json.ready_ms);
    if (last.json.action !== "started") result.errors.push(`vouch start said ${last.json.action}, expected started`);
  }
  result.figures.start = start.toJSON();
  result.ready_ms = summarize(readyMs);
  result.index_files = last.json.index_files ?? null;
  const again = await startObserver(run, target.root);
  if (again.json.action !== "already-running") result.errors.push(`a second vouch start said ${again.json.action}, expected already-running`);
  return last.json;
}

async function observerInfo(run) {
  const sample = await run.vouch("observer", "--json");
  return parseJson(sample.stdout);
}

async function measureSocket(asker, result, options) {
  const figures = {};
  const wrong = [];
  const block = async (key, mode, count, gapMs) => {
    const ms = [];
    for (let i = 0; i < count; i++) {
      if (gapMs) await sleep(gapMs);
      const t = nowMs();
      const message = await asker.ask(mode);
      ms.push(nowMs() - t);
      const { freshness, detail } = freshnessOf(message);
      if (!judge(result, freshness, "CURRENT")) wrong.push(`${key} #${i}: ${freshness} ${detail}`);
    }
    figures[key] = distribution(ms);
  };
  await asker.ask("sync"); // so that no timed question is the first one
  await block("sync_back_to_back", "sync", options.queries, 0);
  await block("cached_back_to_back", "cached", options.queries, 0);
  if (options.spaced > 0) await block("sync_spaced", "sync", options.spaced, SPACED_GAP_MS);
  result.socket = { ...figures, not_current_on_unchanged_tree: wrong.length, first_not_current: wrong.slice(0, 5) };
  if (wrong.length > 0) result.errors.push(`${wrong.length} socket answers on the unchanged tree were not CURRENT, first: ${wrong[0]}`);
}

/** One timed `vouch status --json ARGS` on the unchanged tree: it must be CURRENT, and answered by expectedSource. */
async function timedStatus(run, result, figure, args, expectedSource) {
  const sample = await run.status("--json", ...args);
  const { entry, source } = statusEntry(sample, `vouch status --json ${args.join(" ")}`);
  if (source !== expectedSource) {
    figure.fellBack++;
    result.errors.push(`status ${args.join(" ")} was answered by "${source}", not "${expectedSource}": ${sample.stderr.trim().slice(0, 200)}`);
  }
  if (!judge(result, entry.freshness, "CURRENT")) {
    result.errors.push(`status ${args.join(" ")} said ${entry.freshness} on an unchanged tree`);
  }
  figure.add(sample);
}

/**
 * Node floor, observed status (sync and cached), the direct scan and turbo, one of each per round, so
 * that all meet the same machine load. The round opens with a quiet gap: the other processes write
 * (the scan its stat cache, turbo its .turbo/), and a --sync question within 500 ms of any event pays
 * the watcher's batching delay (see measureSocket's back-to-back figure for that case).
 */
async function measureProcesses(run, result, options) {
  const figures = {
    floor: new Figure(),
    status_observer: new Figure(),
    status_observer_cached: new Figure(),
    status_scan: new Figure(),
    turbo: new Figure(),
    turbo_native: new Figure(),
  };
  let turboBaseline = null;
  const status = (figure, args, expectedSource) => timedStatus(run, result, figure, args, expectedSource);
  for (let i = 0; i < options.reps; i++) {
    await sleep(SPACED_GAP_MS);
    // The first process after the quiet gap starts on idle CPUs and cold caches: the floor goes
    // first in half the rounds and last of the three in the others, so that it meets both as the
    // status does.
    if (i % 2 === 0) figures.floor.add(await run.floor());
    await status(figures.status_observer, [], "observer");
    await status(figures.status_observer_cached, ["--cached"], "observer");
    if (i % 2 === 1) figures.floor.add(await run.floor());
    await status(figures.status_scan, ["--no-observer"], "scan");
    const turbo = await run.turbo(TURBO_BIN);
    const hash = turboHash(turbo);
    if (turboBaseline !== null && hash !== turboBaseline) result.errors.push("turbo's hash changed on an unchanged tree");
    turboBaseline = hash;
    figures.turbo.add(turbo);
    if (existsSync(TURBO_NATIVE)) figures.turbo_native.add(await run.turbo(TURBO_NATIVE));
  }
  for (const [key, figure] of Object.entries(figures)) if (figure.ms.length > 0) result.figures[key] = figure.toJSON();
}

/**
 * The floor and the served status alone, in rounds of their own: the same quiet gap, nothing else
 * run, the floor first in half the rounds. The process rounds above put each status right after a
 * direct scan and two turbo runs (seconds of work at 100k+50k), and every process started next pays
 * for that on this kind of machine, the floor too but less; these rounds give the status's own cost.
 */
async function measureQuietPairs(run, result, options) {
  const figures = { floor_quiet: new Figure(), status_observer_quiet: new Figure() };
  for (let i = 0; i < 2 * options.reps; i++) {
    await sleep(SPACED_GAP_MS);
    if (i % 2 === 0) figures.floor_quiet.add(await run.floor());
    await timedStatus(run, result, figures.status_observer_quiet, [], "observer");
    if (i % 2 === 1) figures.floor_quiet.add(await run.floor());
  }
  for (const [key, figure] of Object.entries(figures)) result.figures[key] = figure.toJSON();
}

/**
 * turbo's daemon on the same tree, for its memory beside the observer's. Since turbo 2.x its daemon
 * no longer serves `turbo run` (turbo says so when asked to use it); it watches the repository for
 * `turbo watch` and editor integrations. So only its memory is comparable: taken once it says it is
 * running and has had a few seconds to index, then it is stopped. Null where it does not start.
 */
async function measureTurboDaemon(root) {
  const turbo = existsSync(TURBO_NATIVE) ? TURBO_NATIVE : TURBO_BIN;
  const call = (...args) => spawnSync(turbo, ["daemon", ...args], { cwd: root, env: ENV, encoding: "utf8", timeout: 60_000 });
  const started = call("start");
  if (started.status !== 0) return { error: `turbo daemon start: ${(started.stderr || started.stdout).trim().slice(0, 200)}` };
  try {
    let pid = null;
    for (let waited = 0; pid === null && waited < 30_000; waited += 250) {
      try {
        const status = JSON.parse(call("status", "--json").stdout);
        pid = Number(readFileSync(status.pid_file, "utf8").trim()) || null;
      } catch {
        await sleep(250);
      }
    }
    if (pid === null) return { error: "turbo daemon status never named a pid" };
    await sleep(5_000);
    return { pid, ...memoryOf(pid) };
  } finally {
    call("stop");
  }
}

/** An installed file to touch: a package's package.json, the first in name order. */
function installedFile(root) {
  const dir = join(root, "node_modules");
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith(".") || name.startsWith("@")) continue;
    const path = join(dir, name, "package.json");
    if (existsSync(path)) return path;
  }
  throw new Error(`no package under ${dir}`);
}

/**
 * Writes a source file and asks until the answer turns STALE, then restores the bytes and asks until
 * it is CURRENT again. Each write lands at a random moment, so that it meets the watcher's batching
 * window in every phase. Last, an installed file is touched (a new mtime, bytes unchanged): installed
 * files are bound by identity, so that must turn STALE too, and only a new run makes it CURRENT.
 */
async function measureStale(run, asker, target, result, options) {
  const path = join(target.root, target.edit);
  const original = readFileSync(path);
  const edit = (round) => appendFileSync(path, `\n// bench edit ${round} ${process.pid}\n`);
  const restore = () => writeFileSync(path, original);
  const ask = async (mode) => freshnessOf(await asker.ask(mode)).freshness;
  const notRecovered = [];
  /** After a restore: the first --sync answer must be CURRENT; if not, wait for it so the next round starts clean. */
  const backToCurrent = async (what) => {
    const first = await ask("sync");
    if (judge(result, first, "CURRENT")) return;
    const t = nowMs();
    let last = first;
    while (last !== "CURRENT" && nowMs() - t < POLL_LIMIT_MS) last = await ask("sync");
    notRecovered.push(`${what}: the first --sync answer after the restore was ${first}${last === "CURRENT" ? "" : `, still ${last} after ${POLL_LIMIT_MS} ms`}`);
    if (last !== "CURRENT") throw new Error(`${what}: never CURRENT again after the restore`);
  };
  const jitter = () => sleep(Math.random() * SPACED_GAP_MS);

  const syncFirst = [];
  const cachedUntil = [];
  const cachedPolls = [];
  const processMs = [];
  const afterPause = [];
  const installedSync = [];
  // Answers that were not STALE after a write, by phase.
  const falseCurrent = { sync: 0, process: 0, after_pause: 0, installed: 0 };
  for (let round = 0; round < options.staleRounds; round++) {
    // --sync promises every write made before the question: its first answer must be STALE.
    await jitter();
    let t = nowMs();
    edit(round);
    const first = await ask("sync");
    syncFirst.push(nowMs() - t);
    if (!judge(result, first, "STALE")) falseCurrent.sync++;
    restore();
    await backToCurrent(`sync round ${round}`);

    // --cached promises only the events already in: ask until the write shows.
    await jitter();
    t = nowMs();
    edit(round);
    let answers = 0;
    let cached;
    do {
      cached = await ask("cached");
      answers++;
    } while (cached !== "STALE" && nowMs() - t < POLL_LIMIT_MS);
    if (cached === "STALE") {
      cachedUntil.push(nowMs() - t);
      cachedPolls.push(answers);
    } else result.errors.push(`--cached round ${round}: still ${cached} ${POLL_LIMIT_MS} ms after the write`);
    restore();
    await backToCurrent(`cached round ${round}`);

    // The agent's loop: a write, something else for a while, then the question.
    if (round < options.pauseRounds) {
      await jitter();
      edit(round);
      await sleep(options.pauseMs);
      t = nowMs();
      const paused = await ask("sync");
      afterPause.push(nowMs() - t);
      if (!judge(result, paused, "STALE")) falseCurrent.after_pause++;
      restore();
      await backToCurrent(`pause round ${round}`);
    }

    // A whole `vouch status --json` process right after the write.
    if (round < options.reps) {
      await jitter();
      t = nowMs();
      edit(round);
      const sample = await run.status("--json");
      processMs.push(nowMs() - t);
      const { entry } = statusEntry(sample);
      if (!judge(result, entry.freshness, "STALE")) falseCurrent.process++;
      restore();
      await backToCurrent(`process round ${round}`);
    }
  }

  const installed = installedFile(target.root);
  for (let round = 0; round < INSTALLED_ROUNDS; round++) {
    await jitter();
    const t = nowMs();
    const now = new Date();
    utimesSync(installed, now, now);
    const answer = await ask("sync");
    installedSync.push(nowMs() - t);
    if (!judge(result, answer, "STALE")) falseCurrent.installed++;
    const rerun = await run.vouch("run", CHECK, "--json");
    if (rerun.code !== 0) throw new Error(describeFailure("vouch run check --json", rerun));
    await backToCurrent(`installed round ${round}`);
  }

  result.stale = {
    sync_first_answer_ms: distribution(syncFirst),
    cached_until_stale_ms: distribution(cachedUntil),
    cached_answers_until_stale: summarize(cachedPolls),
    process_ms: distribution(processMs),
    sync_after_pause_ms: distribution(afterPause),
    pause_ms: options.pauseMs,
    installed_sync_first_answer_ms: distribution(installedSync),
    installed_file: relative(target.root, installed),
    not_stale_after_write: falseCurrent,
    not_current_after_restore: notRecovered,
  };
  if (Object.values(falseCurrent).some((n) => n > 0)) result.errors.push(`not STALE after a write: ${JSON.stringify(falseCurrent)}`);
  if (notRecovered.length > 0) result.errors.push(`not CURRENT right after a restore: ${notRecovered.length}, first: ${notRecovered[0]}`);
}

/**
 * --sync questions while another process writes a git-ignored file in the root every BUSY_WRITE_MS,
 * as a build in watch mode or a dev server does. The file is no input, so every answer must be
 * CURRENT; what it costs is the question's wait, and the rescans the events call for.
 */
async function measureBusy(asker, target, result, options) {
  const path = join(target.root, BUSY_FILE);
  mkdirSync(dirname(path), { recursive: true });
  const writer = spawn(process.execPath, ["-e", `setInterval(() => require("fs").writeFileSync(${JSON.stringify(path)}, String(Date.now())), ${BUSY_WRITE_MS})`], { stdio: "ignore" });
  helpers.add(writer);
  const ms = [];
  let unhealthy = 0;
  try {
    await sleep(1000);
    for (let i = 0; i < options.busy; i++) {
      await sleep(300 + Math.random() * 700);
      const t = nowMs();
      const { freshness, detail } = freshnessOf(await asker.ask("sync"));
      ms.push(nowMs() - t);
      // An unhealthy observer is not wrong: the CLI then looks directly. Count it apart.
      if (freshness === "UNVERIFIED" && detail.startsWith("observer-")) unhealthy++;
      else if (!judge(result, freshness, "CURRENT")) result.errors.push(`busy question ${i}: ${freshness} ${detail}`);
    }
  } finally {
    writer.kill();
    helpers.delete(writer);
    rmSync(path, { force: true });
  }
  result.busy = { write_every_ms: BUSY_WRITE_MS, file: BUSY_FILE, sync_ms: distribution(ms), unhealthy_answers: unhealthy };
  await sleep(SPACED_GAP_MS);
}

async function benchTarget(target, options) {
  const log = (text) => console.error(`[${target.label}] ${text}`);
  const run = makeRunner(target.root, options.cpu);
  const result = {
    label: target.label,
    files: target.files,
    figures: {},
    errors: [],
    // Wrong answers: CURRENT where STALE is right (the one that costs a skipped check), and the reverse.
    wrong: { false_current: 0, false_stale: 0 },
    answers_checked: 0,
    socket: null,
    stale: null,
    busy: null,
    observer: null,
  };
  try {
    log("vouch run check (first receipt)");
    const first = await run.vouch("run", CHECK, "--json");
    if (first.code !== 0) throw new Error(describeFailure("vouch run check --json", first));
    // turbo's first run in a root writes .turbo/ (git-ignored); later dry runs write nothing there.
    turboHash(await run.turbo(TURBO_BIN));
    const direct = statusEntry(await run.vouch("status", "--json", "--no-observer"));
    if (!judge(result, direct.entry.freshness, "CURRENT")) throw new Error(`direct status after the run said ${direct.entry.freshness}`);

    log(`vouch start ×${options.startReps}`);
    const started = await measureStart(run, target, result, options);
    const memoryAtReady = memoryOf(started.pid);
    const asker = makeAsker(started.socket, target.root);

    // The observer's own counters around each phase: how many events and rescans it cost.
    const phases = {};
    const phase = async (name, fn) => {
      const before = await asker.info();
      await fn();
      const after = await asker.info();
      phases[name] = {
        events: after.events - before.events,
        rescans: after.rescans - before.rescans,
        rss_mb_after: Math.round(after.memoryRssBytes / 2 ** 20),
        last_rescan_ms: after.lastRescan?.durationMs ?? null,
      };
    };
    log(`socket: ${options.queries} sync, ${options.queries} cached, ${options.spaced} spaced sync`);
    await phase("socket", () => measureSocket(asker, result, options));
    const memoryAfterQueries = memoryOf(started.pid);

    log(`processes ×${options.reps}`);
    await phase("processes", () => measureProcesses(run, result, options));

    log(`floor and status alone ×${2 * options.reps}`);
    await phase("quiet", () => measureQuietPairs(run, result, options));

    log(`write → STALE ×${options.staleRounds}`);
    await phase("stale", () => measureStale(run, asker, target, result, options));

    if (options.busy > 0) {
      log(`--sync ×${options.busy} while ${BUSY_FILE} is written every ${BUSY_WRITE_MS} ms`);
      await phase("busy", () => measureBusy(asker, target, result, options));
    }

    log("turbo daemon: start, wait, memory, stop");
    result.turbo_daemon = await measureTurboDaemon(target.root);

    result.observer = {
      pid: started.pid,
      memory_at_ready: memoryAtReady,
      memory_after_queries: memoryAfterQueries,
      memory_at_end: memoryOf(started.pid),
      phases,
      info: await observerInfo(run),
    };
  } catch (error) {
    result.errors.push(error.message);
    log(`error: ${error.message}`);
  } finally {
    for (const [pid, root] of observers) {
      if (root !== target.root) continue;
      const stopped = await stopObserver(run, result);
      if (stopped?.action !== "stopped") result.errors.push(`the final vouch stop said ${stopped?.action}`);
      if (alive(pid)) {
        result.errors.push(`observer ${pid} still alive after vouch stop; killed it`);
        if (ourObserver(pid)) kill(pid);
        observers.delete(pid);
      }
      const left = leftovers(target.stateDir);
      if (left.length > 0) result.errors.push(`vouch stop left ${left.join(", ")} behind`);
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (x) => (x === null || x === undefined || Number.isNaN(x) ? "–" : x >= 100 ? `${Math.round(x)}` : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const pair = (d) => (d ? `${fmt(d.p50)} (${fmt(d.p90)})` : "–");
const triple = (d) => (d ? `${fmt(d.p50)} / ${fmt(d.p90)} / ${fmt(d.p99)}` : "–");
const ratio = (a, b) => (a && b ? `${(a / b).toFixed(2)}×` : "–");
const mb = (kb) => (kb ? `${Math.round(kb / 1024)} MB` : "–");

function table(header, rows) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

function renderMarkdown(results) {
  const targets = results.targets;
  const header = (first) => [first, ...targets.map((t) => t.label)];
  const col = (fn) => targets.map((t) => {
    try {
      return fn(t) ?? "–";
    } catch {
      return "–";
    }
  });
  const f = (t, key) => t.figures[key]?.ms;
  const out = [];
  out.push(
    table(header("observer"), [
      ["files (index)", ...col((t) => `${t.files} (${t.index_files ?? "–"})`)],
      ["`vouch start`, wall ms p50 (p90)", ...col((t) => pair(f(t, "start")))],
      ["… ready_ms it reports, p50 (p90)", ...col((t) => pair(t.ready_ms))],
      ["inotify watches", ...col((t) => t.observer?.info?.watched_paths)],
      ["observer RSS at ready / after queries / end", ...col((t) => `${mb(t.observer?.memory_at_ready?.rss_kb)} / ${mb(t.observer?.memory_after_queries?.rss_kb)} / ${mb(t.observer?.memory_at_end?.rss_kb)}`)],
      ["observer peak RSS (VmHWM)", ...col((t) => mb(t.observer?.memory_at_end?.peak_kb))],
      ["turbo daemon RSS / peak, 5 s after it started (it no longer serves `turbo run`)", ...col((t) => (t.turbo_daemon?.rss_kb ? `${mb(t.turbo_daemon.rss_kb)} / ${mb(t.turbo_daemon.peak_kb)}` : (t.turbo_daemon?.error ?? "-")))],
      ["events / overflows / rescans", ...col((t) => (t.observer?.info ? `${t.observer.info.events} / ${t.observer.info.overflows} / ${t.observer.info.rescans}` : "–"))],
      ["rescans during: socket / processes / quiet rounds / write rounds / busy", ...col((t) => (t.observer?.phases ? ["socket", "processes", "quiet", "stale", "busy"].map((k) => t.observer.phases[k]?.rescans ?? "–").join(" / ") : "–"))],
      ["last rescan took, ms", ...col((t) => t.observer?.info?.last_rescan?.duration_ms)],
    ]),
  );
  out.push(
    table(header("socket round trip, ms: p50 / p90 / p99"), [
      ["status --sync, back to back", ...col((t) => triple(t.socket?.sync_back_to_back))],
      ["status --cached, back to back", ...col((t) => triple(t.socket?.cached_back_to_back))],
      [`status --sync, one every ${SPACED_GAP_MS} ms`, ...col((t) => triple(t.socket?.sync_spaced))],
      ["answers not CURRENT on the unchanged tree", ...col((t) => t.socket?.not_current_on_unchanged_tree)],
    ]),
  );
  out.push(
    table(header("whole process, ms: p50 (p90)"), [
      ["`node -e 0` (the floor)", ...col((t) => pair(f(t, "floor")))],
      ["`vouch status --json` (observer, sync)", ...col((t) => pair(f(t, "status_observer")))],
      ["… of which the observation (its `observation.duration_ms`)", ...col((t) => pair(t.figures.status_observer?.observation_ms))],
      ["`vouch status --json --cached` (observer)", ...col((t) => pair(f(t, "status_observer_cached")))],
      ["`vouch status --json --no-observer` (direct scan)", ...col((t) => pair(f(t, "status_scan")))],
      ["… of which the scan (its `observation.duration_ms`)", ...col((t) => pair(t.figures.status_scan?.observation_ms))],
      ["`turbo run check --dry=json` (npm bin)", ...col((t) => pair(f(t, "turbo")))],
      ["`turbo run check --dry=json` (native)", ...col((t) => pair(f(t, "turbo_native")))],
      ["`node -e 0`, in rounds of the floor and the status alone", ...col((t) => pair(f(t, "floor_quiet")))],
      ["`vouch status --json` (observer, sync), in those rounds", ...col((t) => pair(f(t, "status_observer_quiet")))],
      ["peak RSS: status via observer / direct scan", ...col((t) => `${mb(t.figures.status_observer?.peak_kb?.p50)} / ${mb(t.figures.status_scan?.peak_kb?.p50)}`)],
    ]),
  );
  out.push(
    table(header("write → STALE, ms: p50 / p90 / p99"), [
      ["first `--sync` answer after the write", ...col((t) => triple(t.stale?.sync_first_answer_ms))],
      ["`--cached` polled until STALE", ...col((t) => triple(t.stale?.cached_until_stale_ms))],
      ["whole `vouch status --json` after the write", ...col((t) => triple(t.stale?.process_ms))],
      ["`--sync` answer, asked --pause-ms after the write", ...col((t) => triple(t.stale?.sync_after_pause_ms))],
      ["first `--sync` answer after touching an installed file", ...col((t) => triple(t.stale?.installed_sync_first_answer_ms))],
    ]),
  );
  out.push(
    table(header("while a git-ignored file is written every 100 ms"), [
      ["`--sync` socket round trip, ms: p50 / p90 / p99", ...col((t) => triple(t.busy?.sync_ms))],
      ["rescans during the phase", ...col((t) => t.observer?.phases?.busy?.rescans)],
      ["unhealthy answers", ...col((t) => t.busy?.unhealthy_answers)],
    ]),
  );
  out.push(
    table(header("ratios"), [
      ["socket --sync p50 ÷ 25 ms budget", ...col((t) => ratio(t.socket?.sync_back_to_back?.p50, SOCKET_BUDGET_MS))],
      ["spaced --sync p50 ÷ 25 ms budget", ...col((t) => ratio(t.socket?.sync_spaced?.p50, SOCKET_BUDGET_MS))],
      ["status (observer) − floor, ms", ...col((t) => (f(t, "status_observer") && f(t, "floor") ? fmt(f(t, "status_observer").p50 - f(t, "floor").p50) : "–"))],
      ["status (observer) ÷ floor", ...col((t) => ratio(f(t, "status_observer")?.p50, f(t, "floor")?.p50))],
      ["status (observer) − floor, in rounds of the two alone, ms", ...col((t) => (f(t, "status_observer_quiet") && f(t, "floor_quiet") ? fmt(f(t, "status_observer_quiet").p50 - f(t, "floor_quiet").p50) : "–"))],
      ["direct scan ÷ status (observer)", ...col((t) => ratio(f(t, "status_scan")?.p50, f(t, "status_observer")?.p50))],
      ["turbo (npm bin) ÷ status (observer)", ...col((t) => ratio(f(t, "turbo")?.p50, f(t, "status_observer")?.p50))],
      ["turbo (native) ÷ status (observer)", ...col((t) => ratio(f(t, "turbo_native")?.p50, f(t, "status_observer")?.p50))],
      ["direct scan ÷ turbo (npm bin)", ...col((t) => ratio(f(t, "status_scan")?.p50, f(t, "turbo")?.p50))],
    ]),
  );
  out.push(
    table(header("answers checked"), [
      ["answers whose right value was known", ...col((t) => t.answers_checked)],
      ["CURRENT where STALE was right", ...col((t) => t.wrong.false_current)],
      ["STALE where CURRENT was right", ...col((t) => t.wrong.false_stale)],
    ]),
  );
  const errors = targets.flatMap((t) => t.errors.map((e) => `- ${t.label}: ${e}`));
  out.push(errors.length > 0 ? `Errors:\n${errors.join("\n")}` : "No wrong answers and no errors.");
  return out.join("\n\n");
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const options = parseOptions();
  const build = chooseBuild(options.vouch);
  const cleanUp = () => {
    stopEveryObserver();
    if (!options.keep) for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
    build.remove();
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => {
      console.error(`\n${signal}: stopping the observers started here`);
      cleanUp();
      process.exit(128 + ({ SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[signal]));
    });
  }
  // Also on an uncaught error: the process still ends through "exit".
  process.on("exit", stopEveryObserver);
  if (!observerBuilt()) throw new Error(`${VOUCH} has no observer (vouch start --help fails)`);
  const results = {
    schema: 1,
    started_at: new Date().toISOString(),
    finished_at: null,
    command: `node bench/observer.mjs ${process.argv.slice(2).join(" ")}`.trim(),
    machine: {
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model ?? null,
      memory_gb: Math.round(totalmem() / 2 ** 30),
      platform: platform(),
      kernel: release(),
      node: process.version,
      turbo: quiet(TURBO_BIN, ["--version"]),
      max_queued_events: existsSync("/proc/sys/fs/inotify/max_queued_events") ? Number(readFileSync("/proc/sys/fs/inotify/max_queued_events", "utf8")) : null,
      load_average_at_start: loadavg().map((x) => Math.round(x * 100) / 100),
      peak_memory_method: peakMemoryMethod(),
    },
    vouch: {
      // The checkout the measured build is in: --vouch may name another one (an older build, side by side).
      commit: quiet("git", ["-C", vouchCheckout(), "rev-parse", "--short", "HEAD"]),
      dirty: (quiet("git", ["-C", vouchCheckout(), "status", "--porcelain", "--", "src", "package.json"]) ?? "").length > 0,
      entry: relative(REPO, VOUCH),
      bundle_digest: build.digest,
    },
    options: { ...options, sizes: options.sizes.map((s) => s.label) },
    targets: [],
  };
  try {
    const targets = options.sizes.map((size) => ({ kind: "generated", size }));
    if (options.repo) targets.push({ kind: "repo" });
    for (const spec of targets) {
      const label = spec.kind === "repo" ? "this repo" : spec.size.label;
      const parent = mkdtempSync(join(tmpdir(), `vouch-bench-observer-${label.replace(/[^a-z0-9]+/gi, "-")}-`));
      scratchDirs.push(parent);
      let root;
      if (spec.kind === "repo") {
        console.error(`[${label}] copying the repository with its node_modules`);
        root = copyRepo(parent);
      } else {
        console.error(`[${label}] generating ${spec.size.sources} source + ${spec.size.installed} installed files`);
        root = join(parent, "project");
        generate({ sources: spec.size.sources, installed: spec.size.installed, out: root, checkMs: options.checkMs });
      }
      await settleGit(root, (text) => console.error(`[${label}] ${text}`));
      const target = {
        label,
        root,
        stateDir: join(root, ".vouch"),
        edit: spec.kind === "repo" ? REPO_EDIT : GENERATED_EDIT,
        files: countFiles(root) - (existsSync(join(root, ".git")) ? countFiles(join(root, ".git")) : 0),
      };
      results.targets.push(await benchTarget(target, options));
      writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
      if (options.keep) console.error(`[${label}] kept ${root}`);
      else rmSync(parent, { recursive: true, force: true });
    }
  } finally {
    cleanUp();
  }
  results.finished_at = new Date().toISOString();
  results.machine.load_average_at_end = loadavg().map((x) => Math.round(x * 100) / 100);
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
  const m = results.machine;
  const v = results.vouch;
  console.log(
    `vouch ${v.commit ?? "(no commit)"}${v.dirty ? " + uncommitted changes" : ""}, ${v.entry}, bundle ${v.bundle_digest}; ${m.cpus} × ${m.cpu_model}, ${m.memory_gb} GB, ${m.platform} ${m.kernel}, Node ${m.node}, turbo ${m.turbo}, load average ${m.load_average_at_start.join(" ")} at start, ${m.load_average_at_end.join(" ")} at end${options.cpu === null ? "" : `; floor, timed status processes and turbo on CPU ${options.cpu}`}\n`,
  );
  console.log(renderMarkdown(results));
  console.log(`\nresults: ${options.out}`);
  const wrong = results.targets.reduce((n, t) => n + t.wrong.false_current + t.wrong.false_stale, 0);
  console.log(`wrong answers: ${wrong}`);
  if (wrong > 0 || results.targets.some((t) => t.errors.length > 0)) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error.stack ?? error.message);
  process.exitCode = 2;
});
