#!/usr/bin/env node
// What a running observer costs a check while it runs: the same `vouch run check` (the
// generated project's typecheck script: a real `tsc --noEmit` over its typed sources) with no observer, and with the observer up and
// watching, paired per round, the order reversed every other round. The observer's own CPU
// time during each run is read from /proc/PID/stat (utime + stime, proc(5)), and each run's
// CPU time (every process of the run, reaped) from this process's cutime and cstime.
//
//   npm run build && node bench/observerLoad.mjs [--sources 400] [--installed 20000] [--rounds 7] [--out .tmp/bench-observer-load]
//
// The goal (issue: the agent loop): the observer must not slow the check by more than 2 %.

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { generate } from "./generate.mjs";
import { summarize } from "./stats.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CLI = join(REPO, "dist", "bin", "main.js");
const { values } = parseArgs({
  options: {
    sources: { type: "string", default: "400" },
    installed: { type: "string", default: "20000" },
    rounds: { type: "string", default: "7" },
    // Under the repo (its .tmp/ is ignored), so the project's tsc resolves from the repo's node_modules.
    out: { type: "string", default: join(REPO, ".tmp", "bench-observer-load") },
  },
});
if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);

const TICK_MS = 1000 / Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim() || 100);

/** utime + stime of one process (fields 14 and 15 of /proc/PID/stat), in ms. */
function processCpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/** cutime + cstime of this process: every child reaped so far, with its own reaped children. */
function childrenCpuMs() {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
}

function vouch(root, args) {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: root, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
  if (result.error) throw result.error;
  return result;
}

const project = generate({ sources: Number(values.sources), installed: Number(values.installed), out: resolve(values.out), check: "typecheck", force: true });
const root = project.root;

function startObserver() {
  const started = vouch(root, ["start"]);
  if (started.status !== 0) throw new Error(`vouch start failed: ${started.stderr}`);
  // A first answer: the index is built before any timed run.
  vouch(root, ["status", "--json"]);
  const info = JSON.parse(vouch(root, ["observer", "--json"]).stdout);
  if (typeof info.pid !== "number") throw new Error(`no observer pid in ${JSON.stringify(info)}`);
  return info.pid;
}

function stopObserver() {
  vouch(root, ["stop"]);
}

function timedRun() {
  const cpuBefore = childrenCpuMs();
  const started = performance.now();
  const result = vouch(root, ["run", "check", "--no-observer"]);
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`vouch run check failed (${result.status}): ${result.stderr.slice(-2000)}`);
  return { ms, cpuMs: childrenCpuMs() - cpuBefore };
}

const rounds = Number(values.rounds);
const without = [];
const withObserver = [];
const observerCpu = [];
const load = [loadavg()[0]];
stopObserver();
timedRun(); // warm-up: the compiler's files in the page cache, the store made
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? ["without", "with"] : ["with", "without"];
  for (const way of order) {
    if (way === "without") {
      without.push(timedRun());
      continue;
    }
    const pid = startObserver();
    const before = processCpuMs(pid);
    withObserver.push(timedRun());
    observerCpu.push(processCpuMs(pid) - before);
    stopObserver();
  }
}
load.push(loadavg()[0]);

const wall = (samples) => summarize(samples.map((s) => s.ms));
const cpu = (samples) => summarize(samples.map((s) => s.cpuMs));
const pct = (a, b) => `${(((a - b) / b) * 100).toFixed(1)} %`;
const w0 = wall(without);
const w1 = wall(withObserver);
const c0 = cpu(without);
const c1 = cpu(withObserver);
const o = summarize(observerCpu);
console.log(`observer load during a check: ${values.sources} typed sources, ${values.installed} installed files, ${rounds} rounds; load average ${load[0].toFixed(1)} → ${load[1].toFixed(1)}`);
console.log(`| way | wall p50 ms (min–max) | CPU p50 ms |`);
console.log(`| --- | --- | --- |`);
console.log(`| vouch run check, no observer | ${w0.p50.toFixed(0)} (${w0.min.toFixed(0)}–${w0.max.toFixed(0)}) | ${c0.p50.toFixed(0)} |`);
console.log(`| vouch run check, observer up | ${w1.p50.toFixed(0)} (${w1.min.toFixed(0)}–${w1.max.toFixed(0)}) | ${c1.p50.toFixed(0)} |`);
console.log(`observer up against none: wall ${pct(w1.p50, w0.p50)}, run CPU ${pct(c1.p50, c0.p50)}`);
console.log(`the observer's own CPU during a run: p50 ${o.p50.toFixed(0)} ms (max ${o.max.toFixed(0)}), ${((o.p50 / w1.p50) * 100).toFixed(1)} % of the run's wall time (goal: the check slowed by at most 2 %)`);
