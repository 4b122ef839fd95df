#!/usr/bin/env node
// A whole `vouch status --json` answered by the observer, as a fresh process, against `node -e 0`
// (the Node floor), one of each per round so that they meet the same load: what a status costs
// over Node's own start. --baseline adds the same status run by another build (an older
// checkout's dist/bin/main.js), --env the same with a variable set (NODE_OPTIONS=..., say), in the
// same rounds. Every answer is checked to come from the observer.
//
//   node bench/statusStart.mjs [--runs 30] [--warmup 3] [--sources 10000] [--installed 50000]
//                              [--vouch dist/bin/main.js] [--baseline OTHER/main.js] [--env NAME=VALUE]
//                              [--cpu N]
//
// --cpu N runs every measured process on CPU N alone (taskset), the floor included: on a virtual
// machine whose CPUs differ in speed, a process lands on either, and the p50 of a mix of two
// speeds moves by more than the difference measured. The observer runs wherever it runs.
//
// The observer it starts is stopped before it exits.

import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { generate } from "./generate.mjs";
import { summarize } from "./stats.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "30" },
    warmup: { type: "string", default: "3" },
    sources: { type: "string", default: "10000" },
    installed: { type: "string", default: "50000" },
    vouch: { type: "string", default: join(REPO, "dist", "bin", "main.js") },
    baseline: { type: "string" },
    env: { type: "string" },
    cpu: { type: "string" },
  },
});
const runs = Number(values.runs);
const warmup = Number(values.warmup);
const vouch = resolve(values.vouch);

const pinned = (argv) => (values.cpu === undefined ? argv : ["taskset", "-c", values.cpu, ...argv]);

function timed(unpinned, cwd, env) {
  const argv = pinned(unpinned);
  return new Promise((done, fail) => {
    const started = process.hrtime.bigint();
    const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const out = [];
    child.stdout.on("data", (c) => out.push(c));
    child.on("error", fail);
    let ms = 0;
    child.on("exit", () => {
      ms = Number(process.hrtime.bigint() - started) / 1e6;
    });
    child.on("close", (code) => done({ ms, code, stdout: Buffer.concat(out).toString("utf8") }));
  });
}

const work = mkdtempSync(join(tmpdir(), "vouch-bench-status-"));
const env = { ...process.env, VOUCH_FORCE: "" };
let root;
try {
  console.error(`generating ${values.sources} sources + ${values.installed} installed files in ${work}…`);
  root = generate({ sources: Number(values.sources), installed: Number(values.installed), out: join(work, "p"), checkMs: 100 }).root;
  for (const args of [["run", "check"], ["start"]]) {
    const result = spawnSync(process.execPath, [vouch, ...args], { cwd: root, env, encoding: "utf8" });
    if (result.status !== 0) throw new Error(`vouch ${args.join(" ")}: ${result.stderr}`);
  }
  const status = (argv, extra) => ({ argv: [process.execPath, argv, "status", "--json"], env: extra ?? env, observer: true });
  const cases = [["node -e 0 (floor)", { argv: [process.execPath, "-e", "0"], env }], ["vouch status --json", status(vouch)]];
  if (values.baseline) cases.push(["vouch status --json [baseline]", status(resolve(values.baseline))]);
  if (values.env) {
    const at = values.env.indexOf("=");
    cases.push([`vouch status --json [${values.env}]`, status(vouch, { ...env, [values.env.slice(0, at)]: values.env.slice(at + 1) })]);
  }
  const load = loadavg()[0];
  const samples = cases.map(() => []);
  for (let round = 0; round < warmup + runs; round++) {
    for (const [i, [name, c]] of cases.entries()) {
      const result = await timed(c.argv, root, c.env);
      if (result.code !== 0 || (c.observer && JSON.parse(result.stdout).observation.source !== "observer")) throw new Error(`${name} answered wrongly (exit ${result.code}): ${result.stdout.slice(0, 300)}`);
      if (round >= warmup) samples[i].push(result.ms);
    }
  }
  const floor = summarize(samples[0]).p50;
  console.log(`${values.sources} sources + ${values.installed} installed files; ${runs} rounds after ${warmup} warm-up; load ${load.toFixed(2)} → ${loadavg()[0].toFixed(2)}${values.cpu === undefined ? "" : `; measured processes on CPU ${values.cpu}`}\n`);
  console.log("| case | p50 ms | p90 ms | min | p50 − floor ms |");
  console.log("|---|---:|---:|---:|---:|");
  for (const [i, [name]] of cases.entries()) {
    const s = summarize(samples[i]);
    console.log(`| ${name} | ${s.p50} | ${s.p90} | ${s.min} | ${Math.round((s.p50 - floor) * 10) / 10} |`);
  }
} finally {
  if (root) spawnSync(process.execPath, [vouch, "stop"], { cwd: root, env, stdio: "ignore" });
  rmSync(work, { recursive: true, force: true });
}
