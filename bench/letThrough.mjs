#!/usr/bin/env node
// A run that vouch lets through: `vouch run CHECK --if-due` right after a source edit, so the check
// runs, against the same check typed (`npm run -s CHECK`), with the observer up and without it.
// Each round edits one source file before each of the three, waits 700 ms of quiet (longer than
// the watcher's batching window), and runs them in turn; the edits are undone at the end.
// Where the native hook client is built, a fourth: the run as a rewrite made through the client
// runs it (`vouch_hook NODE MAIN run CHECK --if-due`), answered by a resident server started first.
//
//   node bench/letThrough.mjs --root DIR [--check check] [--rounds 15] [--vouch dist/bin/main.js]
//
// DIR is a project from bench/generate.mjs (its check is the npm script `check`).

import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { summarize } from "./stats.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: {
    root: { type: "string" },
    check: { type: "string", default: "check" },
    rounds: { type: "string", default: "15" },
    vouch: { type: "string", default: join(REPO, "dist", "bin", "main.js") },
  },
});
if (!values.root) throw new Error("--root DIR is required: a project from bench/generate.mjs");
const root = resolve(values.root);
const vouch = resolve(values.vouch);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function firstSource(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      const found = firstSource(path);
      if (found) return found;
    } else if (/\.(ts|js)$/.test(name)) return path;
  }
  return null;
}

function timed(command, args) {
  const started = process.hrtime.bigint();
  const result = spawnSync(command, args, { cwd: root, encoding: "utf8" });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${result.status}\n${result.stdout}${result.stderr}`);
  return { ms, output: result.stdout + result.stderr };
}

const file = firstSource(join(root, "src"));
if (!file) throw new Error(`no source file under ${root}/src`);
const original = readFileSync(file);
let edits = 0;
const edit = async () => {
  // Unique: an edit that repeats an earlier state would be answered by that state's receipt.
  writeFileSync(file, `${original}// edit ${++edits} ${process.pid} ${Date.now()}\n`);
  await sleep(700);
};

const ran = (output) => {
  if (/skipped/.test(output)) throw new Error(`the check was skipped after an edit: ${output}`);
};
timed(process.execPath, [vouch, "start"]);
const client = join(dirname(dirname(dirname(vouch))), "build", "Release", "vouch_hook");
const viaClient = existsSync(client) ? [process.execPath, vouch, "run", values.check, "--if-due"] : null;
const samples = { typed: [], observer: [], scan: [], ...(viaClient ? { client: [] } : {}) };
if (viaClient) {
  // The first call finds no server for this environment: Node runs it and starts one.
  await edit();
  timed(client, viaClient);
  await sleep(2000);
}
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    await edit();
    samples.typed.push(timed("npm", ["run", "-s", values.check]).ms);
    await edit();
    const observed = timed(process.execPath, [vouch, "run", values.check, "--if-due"]);
    ran(observed.output);
    samples.observer.push(observed.ms);
    await edit();
    const scanned = timed(process.execPath, [vouch, "run", values.check, "--if-due", "--no-observer"]);
    ran(scanned.output);
    samples.scan.push(scanned.ms);
    if (viaClient) {
      await edit();
      const served = timed(client, viaClient);
      ran(served.output);
      samples.client.push(served.ms);
    }
  }
} finally {
  timed(process.execPath, [vouch, "stop"]);
  writeFileSync(file, original);
}
const out = Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, summarize(list)]));
console.log(JSON.stringify({ root, vouch, edited: file, ...out }, null, 2));
for (const name of ["observer", "scan", ...(viaClient ? ["client"] : [])]) {
  const over = out[name].p50 - out.typed.p50;
  console.log(`--if-due after an edit (${name}): p50 ${out[name].p50} ms, ${over.toFixed(1)} ms (${((100 * over) / out.typed.p50).toFixed(0)} %) over the ${out.typed.p50} ms of the check typed`);
}
