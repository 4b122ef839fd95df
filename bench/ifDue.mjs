#!/usr/bin/env node
// `vouch run CHECK --if-due` on a CURRENT check, with the observer up and without it, next to
// `node -e 0`, one of each per round, each after 700 ms of quiet (longer than the watcher's
// batching window). The project must have a receipt of CHECK that is CURRENT and PASS.
//
//   node bench/ifDue.mjs --root DIR [--check check] [--rounds 20] [--vouch dist/bin/main.js]

import { spawnSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { summarize } from "./stats.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: {
    root: { type: "string" },
    check: { type: "string", default: "check" },
    rounds: { type: "string", default: "20" },
    vouch: { type: "string", default: join(REPO, "dist", "bin", "main.js") },
  },
});
if (!values.root) throw new Error("--root DIR is required: a project with a CURRENT receipt");
const root = resolve(values.root);
const vouch = resolve(values.vouch);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function timed(args) {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { cwd: root, encoding: "utf8" });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${args.join(" ")} exited ${result.status}\n${result.stderr}`);
  return { ms, output: result.stdout + result.stderr };
}

const started = timed([vouch, "start"]);
const samples = { floor: [], observer: [], scan: [] };
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    await sleep(700);
    samples.floor.push(timed(["-e", "0"]).ms);
    await sleep(700);
    const observed = timed([vouch, "run", values.check, "--if-due"]);
    if (!/skipped/.test(observed.output)) throw new Error(`the check was not skipped: ${observed.output}`);
    samples.observer.push(observed.ms);
    await sleep(700);
    samples.scan.push(timed([vouch, "run", values.check, "--if-due", "--no-observer"]).ms);
  }
} finally {
  timed([vouch, "stop"]);
}
const log = JSON.parse(spawnSync(process.execPath, [vouch, "log", values.check, "--json"], { cwd: root, encoding: "utf8" }).stdout);
const checkMs = log.receipts.find((receipt) => receipt.result === "PASS")?.duration_ms;
const out = Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, summarize(list)]));
console.log(JSON.stringify({ root, started_ms: Math.round(started.ms), check_ms: checkMs, ...out }, null, 2));
for (const name of ["observer", "scan"]) {
  const overFloor = (out[name].p50 - out.floor.p50).toFixed(1);
  console.log(`--if-due (${name}): p50 ${out[name].p50} ms (${overFloor} ms over the Node floor of ${out.floor.p50} ms) = ${((100 * out[name].p50) / checkMs).toFixed(1)} % of the ${checkMs} ms check; 2 % holds for checks of ${((50 * out[name].p50) / 1000).toFixed(1)} s and longer`);
}
