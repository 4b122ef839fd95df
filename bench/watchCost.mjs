#!/usr/bin/env node
// What file watching costs, measured with @parcel/watcher on real trees, to choose how the observer
// watches and how it guards against lost events. For each root it measures:
//   - subscribe time, resident memory and inotify watches, watching everything vs ignoring the
//     install root (node_modules) and .git, each in a fresh process;
//   - re-verifying the install root by identity instead (bigint lstat of every installed file), and a
//     full stat sweep of every file, as the per-question alternative to watching;
//   - event latency: a write until the callback sees it, after a quiet period and while another
//     process writes steadily (the watcher batches events);
//   - a cookie barrier: a unique file written under the state dir until its event arrives, rounds
//     spaced out and back to back;
// and on one root (--burst-root) a burst of rewrites of distinct existing files from another process:
// how many of the rewritten paths the watcher reported, whether a file written in the middle of the
// burst was reported, and whether the watcher still reports a write after the burst.
//
// Writes happen only under <root>/.vouch/watchcost-<pid>/ (or --scratch DIR, relative to the root)
// and in the burst files, which are rewritten with their own bytes. The scratch dir is removed.
//
//   node bench/watchCost.mjs --roots DIR[,DIR] [--burst-root DIR] [--burst-files 30000] [--bursts 5]
//                            [--cookie-rounds 200] [--latency-rounds 30] [--reps 3]
//                            [--scratch .vouch] [--ignore-set everything|no-node_modules|no-node_modules-no-.git]
//                            [--skip subscribe,verify,latency,cookie,burst] [--labels A[,B]] [--out FILE]
//
// --labels names the roots in the summary (default: their paths). Prints markdown tables and writes
// the JSON result to --out (default: a file in the temp dir). Internal modes: --worker NAME, --writer.

import { spawn } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, release, tmpdir, totalmem } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SELF = fileURLToPath(import.meta.url);
const INSTALL_ROOT = "node_modules";
const IGNORE_SETS = {
  everything: [],
  "no-node_modules": [INSTALL_ROOT],
  "no-node_modules-no-.git": [INSTALL_ROOT, ".git"],
  // What git ignores in a typical checkout besides the install root: build output and scratch dirs.
  "no-ignored-dirs": [INSTALL_ROOT, ".git", ".tmp", "dist", "coverage", ".demo"],
};
const SUBSCRIBE_ATTEMPTS = 5;
const QUIET_GAP_MS = 700; // longer than the watcher's 500 ms batching window
const EVENT_TIMEOUT_MS = 5000;
const SETTLE_MS = 2000;

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (x) => Math.round(x * 100) / 100;

function percentiles(samples) {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1];
  return { n: sorted.length, min: round(sorted[0]), p50: round(at(50)), p90: round(at(90)), p99: round(at(99)), max: round(sorted.at(-1)) };
}

function loadWatcher() {
  return createRequire(join(REPO, "package.json"))("@parcel/watcher");
}

function rssKb() {
  return Math.round(process.memoryUsage().rss / 1024);
}

/** inotify watches held by this process, read from /proc/self/fdinfo of its inotify descriptors. */
function inotifyWatches() {
  let watches = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    let target;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    if (target !== "anon_inode:inotify") continue;
    const info = readFileSync(`/proc/self/fdinfo/${fd}`, "utf8");
    watches += info.split("\n").filter((line) => line.startsWith("inotify wd:")).length;
  }
  return watches;
}

/** Directories and files under root (no symlinks followed), split by top-level area. */
function countTree(root) {
  const counts = { dirs: 0, files: 0, node_modules_dirs: 0, node_modules_files: 0, git_dirs: 0, git_files: 0 };
  const walk = (dir, area) => {
    counts.dirs++;
    if (area) counts[`${area}_dirs`]++;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      const nextArea = area ?? (dir === root ? { [INSTALL_ROOT]: "node_modules", ".git": "git" }[entry.name] : undefined);
      if (entry.isDirectory()) walk(path, nextArea);
      else {
        counts.files++;
        if (nextArea) counts[`${nextArea}_files`]++;
      }
    }
  };
  walk(root, undefined);
  return counts;
}

/** Every non-directory under dir, as absolute paths. */
function listFiles(dir, out = []) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) listFiles(path, out);
    else out.push(path);
  }
  return out;
}

function walkAndLstat(dir) {
  let n = 0;
  const entries = readdirSync(dir, { withFileTypes: true });
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) n += walkAndLstat(path);
    else {
      lstatSync(path, { bigint: true });
      n++;
    }
  }
  return n;
}

/**
 * subscribe(), again when it fails. On a busy tree it can: a directory deleted between the watcher's
 * crawl and its inotify_add_watch fails the whole subscription (ENOENT). Returns the failures too.
 */
async function subscribeRetrying(watcher, root, callback, options) {
  const failures = [];
  for (;;) {
    try {
      return { subscription: await watcher.subscribe(root, callback, options), failures };
    } catch (error) {
      failures.push(String(error.message ?? error));
      if (failures.length >= SUBSCRIBE_ATTEMPTS) throw error;
      await sleep(100);
    }
  }
}

function emit(value) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

// ---------------------------------------------------------------------------------------------
// Workers: each runs in its own process so that its memory and watches are its own.

async function workerSubscribe({ root, ignoreSet }) {
  const rssStart = rssKb();
  const watcher = loadWatcher();
  const rssLoaded = rssKb();
  const started = nowMs();
  const { subscription, failures } = await subscribeRetrying(watcher, root, () => {}, { ignore: IGNORE_SETS[ignoreSet] });
  const subscribeMs = nowMs() - started;
  await sleep(200);
  const result = {
    subscribe_ms: round(subscribeMs),
    rss_start_kb: rssStart,
    rss_loaded_kb: rssLoaded,
    rss_kb: rssKb(),
    watcher_rss_kb: rssKb() - rssLoaded,
    watches: inotifyWatches(),
    subscribe_failures: failures,
  };
  const stopped = nowMs();
  await subscription.unsubscribe();
  result.unsubscribe_ms = round(nowMs() - stopped);
  emit(result);
}

async function workerVerify({ root, reps }) {
  const installedRoot = join(root, INSTALL_ROOT);
  const listStarted = nowMs();
  const installed = listFiles(installedRoot);
  const listMs = nowMs() - listStarted;
  const all = listFiles(root).filter((p) => !relative(root, p).startsWith(".git/"));
  const time = (fn) => {
    const samples = [];
    fn(); // warm
    for (let i = 0; i < reps; i++) {
      const t = nowMs();
      fn();
      samples.push(nowMs() - t);
    }
    return percentiles(samples);
  };
  emit({
    installed_files: installed.length,
    all_files_outside_git: all.length,
    first_listing_ms: round(listMs),
    installed_known_list_lstat_ms: time(() => {
      for (const p of installed) lstatSync(p, { bigint: true });
    }),
    installed_walk_and_lstat_ms: time(() => walkAndLstat(installedRoot)),
    all_known_list_lstat_ms: time(() => {
      for (const p of all) lstatSync(p, { bigint: true });
    }),
  });
}

/** A subscription that resolves waiters when a given path shows up in an event batch. */
async function watchWithWaiters(root, ignore) {
  const watcher = loadWatcher();
  const waiters = new Map();
  const seen = new Set();
  const stats = { batches: 0, events: 0, errors: [], lastEventAt: 0 };
  const { subscription, failures } = await subscribeRetrying(
    watcher,
    root,
    (error, events) => {
      const at = nowMs();
      if (error) stats.errors.push(String(error.message ?? error));
      stats.batches++;
      stats.events += events.length;
      stats.lastEventAt = at;
      for (const event of events) {
        seen.add(event.path);
        const waiter = waiters.get(event.path);
        if (waiter) {
          waiters.delete(event.path);
          waiter(at);
        }
      }
    },
    { ignore },
  );
  const waitFor = (path) =>
    new Promise((resolvePromise) => {
      const timer = setTimeout(() => {
        waiters.delete(path);
        resolvePromise(null);
      }, EVENT_TIMEOUT_MS);
      waiters.set(path, (at) => {
        clearTimeout(timer);
        resolvePromise(at);
      });
    });
  stats.subscribeFailures = failures;
  return { subscription, waitFor, seen, stats };
}

/** Our own dir under <root>/<scratch>; removing it also removes <scratch> when we made that, so the tree is left as found. */
function makeScratch(root, scratch) {
  const parent = join(root, scratch);
  const madeParent = !existsSync(parent);
  const dir = join(parent, `watchcost-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  return { dir, remove: () => rmSync(madeParent ? parent : dir, { recursive: true, force: true }) };
}

/** Write one file and time until its event arrives; null when it never does. */
async function roundTrip(waitFor, path, text) {
  const arrived = waitFor(path);
  const started = nowMs();
  writeFileSync(path, text);
  const at = await arrived;
  return at === null ? null : at - started;
}

function startWriterLoop(dir, intervalMs) {
  const child = spawn(process.execPath, [SELF, "--writer", "loop", "--dir", dir, "--interval", String(intervalMs)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  return {
    ready: new Promise((r) => child.stdout.once("data", r)),
    stop: () =>
      new Promise((r) => {
        child.on("exit", r);
        child.stdin.end();
      }),
  };
}

async function workerLatency({ root, scratch, rounds, cookieRounds, ignoreSet }) {
  const { dir, remove } = makeScratch(root, scratch);
  mkdirSync(join(dir, "cookies"), { recursive: true });
  mkdirSync(join(dir, "busy"), { recursive: true });
  const { subscription, waitFor, stats } = await watchWithWaiters(root, IGNORE_SETS[ignoreSet]);
  const result = { ignore: ignoreSet };
  try {
    await sleep(QUIET_GAP_MS);
    const quiet = [];
    let lost = 0;
    const target = join(dir, "latency.txt");
    for (let i = 0; i < rounds; i++) {
      await sleep(QUIET_GAP_MS);
      const ms = await roundTrip(waitFor, target, `quiet ${i}\n`);
      if (ms === null) lost++;
      else quiet.push(ms);
    }
    result.quiet_write_ms = { ...percentiles(quiet), never_arrived: lost };

    // Steady activity: another process rewrites a file every 10 ms; our writes land at random moments.
    const writer = startWriterLoop(join(dir, "busy"), 10);
    await writer.ready;
    await sleep(1000);
    const busy = [];
    lost = 0;
    for (let i = 0; i < rounds; i++) {
      await sleep(50 + Math.random() * 450);
      const ms = await roundTrip(waitFor, target, `busy ${i}\n`);
      if (ms === null) lost++;
      else busy.push(ms);
    }
    await writer.stop();
    result.busy_write_ms = { ...percentiles(busy), never_arrived: lost };

    // Cookie barrier on a quiet tree: a unique file per question, spaced like an agent's questions.
    await sleep(QUIET_GAP_MS);
    const spaced = [];
    lost = 0;
    for (let i = 0; i < cookieRounds; i++) {
      await sleep(QUIET_GAP_MS);
      const cookie = join(dir, "cookies", `cookie-${process.pid}-${i}`);
      const ms = await roundTrip(waitFor, cookie, "");
      if (ms === null) lost++;
      else spaced.push(ms);
      rmSync(cookie, { force: true });
    }
    result.cookie_spaced_ms = { ...percentiles(spaced), never_arrived: lost, gap_ms: QUIET_GAP_MS };

    // Back to back: each question starts as soon as the previous cookie arrived (a burst of questions).
    await sleep(QUIET_GAP_MS);
    const backToBack = [];
    lost = 0;
    for (let i = 0; i < cookieRounds; i++) {
      const cookie = join(dir, "cookies", `b2b-${process.pid}-${i}`);
      const ms = await roundTrip(waitFor, cookie, "");
      if (ms === null) lost++;
      else backToBack.push(ms);
    }
    result.cookie_back_to_back_ms = { ...percentiles(backToBack), never_arrived: lost };
    result.watcher_errors = stats.errors;
    result.subscribe_failures = stats.subscribeFailures;
  } finally {
    await subscription.unsubscribe();
    remove();
  }
  emit(result);
}

/** Source files for the burst: the first N regular files outside node_modules/.git/state, sorted. */
function burstTargets(root, count, scratch) {
  const files = listFiles(root)
    .filter((p) => {
      const rel = relative(root, p);
      return !rel.startsWith(`${INSTALL_ROOT}/`) && !rel.startsWith(".git/") && !rel.startsWith(`${scratch}/`);
    })
    .filter((p) => lstatSync(p).isFile())
    .sort();
  if (files.length < count) throw new Error(`${root} has ${files.length} files outside node_modules and .git; the burst wants ${count}`);
  return files.slice(0, count);
}

async function workerBurst({ root, scratch, files, bursts, ignoreSet }) {
  const { dir, remove } = makeScratch(root, scratch);
  mkdirSync(join(dir, "markers"), { recursive: true });
  const targets = burstTargets(root, files, scratch);
  const listPath = join(dir, "targets.txt");
  writeFileSync(listPath, targets.join("\n"));
  const { subscription, waitFor, seen, stats } = await watchWithWaiters(root, IGNORE_SETS[ignoreSet]);
  const runs = [];
  const held = { rss_kb_after_subscribe: rssKb(), watches: inotifyWatches() };
  try {
    await sleep(QUIET_GAP_MS);
    for (let b = 0; b < bursts; b++) {
      seen.clear();
      const before = { batches: stats.batches, events: stats.events, errors: stats.errors.length };
      const midMarker = join(dir, "markers", `mid-${b}`);
      const writer = spawn(process.execPath, [SELF, "--writer", "burst", "--list", listPath, "--marker", midMarker], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      const out = [];
      writer.stdout.on("data", (chunk) => out.push(chunk));
      // "close", not "exit": only then has all of its stdout been read.
      await new Promise((r) => writer.on("close", r));
      const report = JSON.parse(Buffer.concat(out).toString("utf8"));
      // Wait until the watcher has been silent for SETTLE_MS.
      const settleStarted = nowMs();
      while (nowMs() - Math.max(stats.lastEventAt, settleStarted) < SETTLE_MS) await sleep(100);
      let reported = 0;
      for (const t of targets) if (seen.has(t)) reported++;
      const afterMarker = join(dir, "markers", `after-${b}`);
      const afterMs = await roundTrip(waitFor, afterMarker, "after\n");
      runs.push({
        rewrites: targets.length,
        write_ms: report.write_ms,
        reported_paths: reported,
        lost_paths: targets.length - reported,
        batches: stats.batches - before.batches,
        events: stats.events - before.events,
        watcher_errors: stats.errors.length - before.errors,
        mid_burst_marker_reported: seen.has(midMarker),
        after_burst_marker_ms: afterMs === null ? null : round(afterMs),
      });
      emit({ progress: `burst ${b + 1}/${bursts}`, ...runs.at(-1) });
      await sleep(QUIET_GAP_MS);
    }
    held.rss_kb_after_bursts = rssKb();
  } finally {
    await subscription.unsubscribe();
    remove();
  }
  emit({ ignore: ignoreSet, ...held, subscribe_failures: stats.subscribeFailures, runs });
}

// Writers run in their own process, as an editor, a formatter or a package manager would.
async function writer(values) {
  if (values.writer === "loop") {
    const path = join(values.dir, "busy.txt");
    let stop = false;
    process.stdin.on("end", () => (stop = true));
    process.stdin.resume();
    process.stdout.write("ready\n");
    for (let i = 0; !stop; i++) {
      writeFileSync(path, `busy ${i}\n`);
      await sleep(Number(values.interval));
    }
    return;
  }
  const targets = readFileSync(values.list, "utf8").split("\n").filter(Boolean);
  const contents = targets.map((p) => readFileSync(p));
  const middle = Math.floor(targets.length / 2);
  const started = nowMs();
  for (let i = 0; i < targets.length; i++) {
    writeFileSync(targets[i], contents[i]);
    if (i === middle) writeFileSync(values.marker, "mid\n");
  }
  emit({ write_ms: round(nowMs() - started) });
}

// ---------------------------------------------------------------------------------------------
// Orchestration

function runWorker(args) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [SELF, ...args], { stdio: ["ignore", "pipe", "inherit"] });
    const out = [];
    child.stdout.on("data", (chunk) => {
      out.push(chunk);
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line.includes('"progress"')) console.error(`  ${line}`);
      }
    });
    child.on("error", reject);
    // "close", not "exit": only then has all of its stdout been read.
    child.on("close", (code) => {
      const lines = Buffer.concat(out).toString("utf8").trim().split("\n");
      if (code !== 0) reject(new Error(`worker ${args.join(" ")} exited ${code}`));
      else resolvePromise(JSON.parse(lines.at(-1)));
    });
  });
}

async function main() {
  const { values } = parseArgs({
    options: {
      roots: { type: "string" },
      "burst-root": { type: "string" },
      "burst-files": { type: "string", default: "30000" },
      bursts: { type: "string", default: "5" },
      "cookie-rounds": { type: "string", default: "200" },
      "latency-rounds": { type: "string", default: "30" },
      reps: { type: "string", default: "3" },
      scratch: { type: "string", default: ".vouch" },
      skip: { type: "string", default: "" },
      labels: { type: "string" },
      out: { type: "string" },
      worker: { type: "string" },
      writer: { type: "string" },
      root: { type: "string" },
      "ignore-set": { type: "string", default: "everything" },
      dir: { type: "string" },
      interval: { type: "string" },
      list: { type: "string" },
      marker: { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    // The header comment is the help.
    const lines = readFileSync(SELF, "utf8").split("\n").slice(1);
    console.log(lines.slice(0, lines.findIndex((l) => !l.startsWith("//"))).join("\n"));
    return;
  }
  if (values.writer) return writer(values);
  const common = { root: values.root, scratch: values.scratch, ignoreSet: values["ignore-set"] };
  if (values.worker === "subscribe") return workerSubscribe(common);
  if (values.worker === "verify") return workerVerify({ ...common, reps: Number(values.reps) });
  if (values.worker === "latency")
    return workerLatency({ ...common, rounds: Number(values["latency-rounds"]), cookieRounds: Number(values["cookie-rounds"]) });
  if (values.worker === "burst")
    return workerBurst({ ...common, files: Number(values["burst-files"]), bursts: Number(values.bursts) });
  if (values.worker) throw new Error(`unknown worker ${values.worker}`);

  // The watcher reports real paths; a root reached through a symlink would never match them.
  const roots = (values.roots ?? "").split(",").filter(Boolean).map((r) => realpathSync(resolve(r)));
  if (roots.length === 0 && !values["burst-root"]) throw new Error("give --roots DIR[,DIR] and/or --burst-root DIR");
  const skip = new Set(values.skip.split(",").filter(Boolean));
  const reps = Number(values.reps);
  const result = {
    schema: 1,
    started_at: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model ?? null,
      memory_gb: Math.round(totalmem() / 2 ** 30),
      kernel: release(),
      node: process.version,
      watcher: createRequire(join(REPO, "package.json"))("@parcel/watcher/package.json").version,
      max_queued_events: Number(readFileSync("/proc/sys/fs/inotify/max_queued_events", "utf8")),
      max_user_watches: Number(readFileSync("/proc/sys/fs/inotify/max_user_watches", "utf8")),
      load_average_at_start: loadavg().map(round),
    },
    roots: [],
    burst: null,
  };
  const out = values.out ? resolve(values.out) : join(tmpdir(), `vouch-bench-watchcost-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  const save = () => writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  const labels = (values.labels ?? "").split(",");
  for (const [i, root] of roots.entries()) {
    const entry = { root, label: labels[i] || root, tree: countTree(root) };
    result.roots.push(entry);
    console.error(`[${root}] ${JSON.stringify(entry.tree)}`);
    if (!skip.has("subscribe")) {
      entry.subscribe = {};
      for (const ignoreSet of Object.keys(IGNORE_SETS)) {
        const samples = [];
        for (let i = 0; i < reps; i++) samples.push(await runWorker(["--worker", "subscribe", "--root", root, "--ignore-set", ignoreSet]));
        entry.subscribe[ignoreSet] = {
          subscribe_ms: percentiles(samples.map((s) => s.subscribe_ms)),
          unsubscribe_ms: percentiles(samples.map((s) => s.unsubscribe_ms)),
          rss_kb: percentiles(samples.map((s) => s.rss_kb)),
          watcher_rss_kb: percentiles(samples.map((s) => s.watcher_rss_kb)),
          rss_loaded_kb: percentiles(samples.map((s) => s.rss_loaded_kb)),
          watches: samples[0].watches,
          subscribe_failures: samples.flatMap((s) => s.subscribe_failures),
        };
        console.error(`  subscribe ${ignoreSet}: ${JSON.stringify(entry.subscribe[ignoreSet])}`);
        save();
      }
    }
    if (!skip.has("verify")) {
      entry.verify = await runWorker(["--worker", "verify", "--root", root, "--reps", String(Math.max(reps, 10))]);
      console.error(`  verify: ${JSON.stringify(entry.verify)}`);
      save();
    }
    if (!skip.has("latency")) {
      const args = ["--worker", "latency", "--root", root, "--scratch", values.scratch, "--ignore-set", values["ignore-set"]];
      args.push("--latency-rounds", values["latency-rounds"], "--cookie-rounds", skip.has("cookie") ? "0" : values["cookie-rounds"]);
      entry.latency = await runWorker(args);
      console.error(`  latency: ${JSON.stringify(entry.latency)}`);
      save();
    }
  }
  if (values["burst-root"] && !skip.has("burst")) {
    const root = realpathSync(resolve(values["burst-root"]));
    console.error(`[burst ${root}]`);
    result.burst = {
      root,
      ...(await runWorker([
        "--worker",
        "burst",
        "--root",
        root,
        "--scratch",
        values.scratch,
        "--burst-files",
        values["burst-files"],
        "--bursts",
        values.bursts,
        "--ignore-set",
        values["ignore-set"],
      ])),
    };
  }
  result.finished_at = new Date().toISOString();
  result.machine.load_average_at_end = loadavg().map(round);
  save();
  console.log(summary(result));
  console.log(`\nresults: ${out}`);
}

/** The figures that decide how to watch, as markdown tables, one column per root. */
function summary(result) {
  const roots = result.roots;
  const fmt = (x) => (x === null || x === undefined ? "–" : x >= 100 ? `${Math.round(x)}` : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  const pair = (d) => (d ? `${fmt(d.p50)} (${fmt(d.p90)})` : "–");
  const mb = (kb) => (typeof kb === "number" ? `${fmt(kb / 1024)} MB` : "–");
  const line = (cells) => `| ${cells.join(" | ")} |`;
  const table = (first, rows) => [line([first, ...roots.map((r) => r.label)]), line([first, ...roots].map(() => "---")), ...rows.map(line)].join("\n");
  const col = (fn) => roots.map((r) => {
    try {
      return fn(r) ?? "–";
    } catch {
      return "–";
    }
  });
  const m = result.machine;
  const out = [
    `${m.cpus} × ${m.cpu_model}, ${m.memory_gb} GB, Linux ${m.kernel}, Node ${m.node}, @parcel/watcher ${m.watcher}, max_queued_events ${m.max_queued_events}, load average ${m.load_average_at_start.join(" ")} at start, ${m.load_average_at_end.join(" ")} at end`,
    table("tree", [
      ["directories (of which node_modules / .git)", ...col((r) => `${r.tree.dirs} (${r.tree.node_modules_dirs} / ${r.tree.git_dirs})`)],
      ["files (of which node_modules / .git)", ...col((r) => `${r.tree.files} (${r.tree.node_modules_files} / ${r.tree.git_files})`)],
    ]),
  ];
  const sets = Object.keys(IGNORE_SETS);
  out.push(
    table("watching, one fresh process per subscription", [
      ...sets.map((set) => [`inotify watches, ${set}`, ...col((r) => r.subscribe?.[set]?.watches)]),
      ...sets.map((set) => [`subscribe ms p50 (p90), ${set}`, ...col((r) => pair(r.subscribe?.[set]?.subscribe_ms))]),
      ...sets.map((set) => [`RSS after subscribing (the watcher's own), ${set}`, ...col((r) => `${mb(r.subscribe?.[set]?.rss_kb?.p50)} (${mb(r.subscribe?.[set]?.watcher_rss_kb?.p50)})`)]),
    ]),
  );
  out.push(
    table("re-verifying instead, per question, ms p50 (p90)", [
      ["installed files", ...col((r) => r.verify?.installed_files)],
      ["bigint lstat of every installed file, from a known list", ...col((r) => pair(r.verify?.installed_known_list_lstat_ms))],
      ["walk node_modules and lstat every file", ...col((r) => pair(r.verify?.installed_walk_and_lstat_ms))],
      ["bigint lstat of every file outside .git (a full stat sweep)", ...col((r) => pair(r.verify?.all_known_list_lstat_ms))],
    ]),
  );
  out.push(
    table("event latency, ms p50 (p90)", [
      ["a write after a quiet spell", ...col((r) => pair(r.latency?.quiet_write_ms))],
      ["a write while another process writes every 10 ms", ...col((r) => pair(r.latency?.busy_write_ms))],
      ["a cookie, questions 700 ms apart", ...col((r) => pair(r.latency?.cookie_spaced_ms))],
      ["a cookie, questions back to back", ...col((r) => pair(r.latency?.cookie_back_to_back_ms))],
      ["events that never arrived", ...col((r) => (r.latency ? ["quiet_write_ms", "busy_write_ms", "cookie_spaced_ms", "cookie_back_to_back_ms"].reduce((n, k) => n + (r.latency[k]?.never_arrived ?? 0), 0) : null))],
    ]),
  );
  if (result.burst) {
    const runs = result.burst.runs;
    out.push(
      [
        `burst: ${runs.length} × ${runs[0]?.rewrites} rewrites of distinct files`,
        `lost paths per burst: ${runs.map((r) => r.lost_paths).join(", ")}`,
        `mid-burst marker reported: ${runs.map((r) => r.mid_burst_marker_reported).join(", ")}`,
        `a write after the burst arrived in ms: ${runs.map((r) => r.after_burst_marker_ms ?? "never").join(", ")}`,
      ].join("\n"),
    );
  }
  return out.join("\n\n");
}

main().catch((error) => {
  console.error(error.stack ?? error.message);
  process.exitCode = 2;
});
