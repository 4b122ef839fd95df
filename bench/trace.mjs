#!/usr/bin/env node
// What tracing a check costs: real tsc --noEmit, eslint, vitest run and oxlint over a generated
// project, each run untraced and traced side by side (paired, the order alternating per round),
// with this repository's own tools. Three ways per tool and round:
//   plain    the tool alone;
//   stops    strace -f --seccomp-bpf -c over the same calls: every ptrace stop the trace costs,
//            but no decoding of fds and no log (the floor a native tracer built on ptrace +
//            seccomp RET_TRACE would still pay);
//   native   bench/traceFloor.c, the floor of a native tracer (ptrace + seccomp RET_TRACE +
//            process_vm_readv, as the C addon could do it): the same calls stopped on, each path
//            read, nothing kept; compiled with `cc` when there is one (x86-64 only), else skipped;
//   notify   bench/traceNotify.c, a tracer without ptrace: a seccomp user-notification supervisor
//            (seccomp_unotify(2)), one round trip per call, the path read from /proc/TID/mem,
//            the call let go on with SECCOMP_USER_NOTIF_FLAG_CONTINUE; it cannot see results;
//   notify2  the same with two supervisor threads receiving from the one listener;
//   notifysp the same (one thread) reading with process_vm_readv (-p) and asking the kernel for
//            synchronous wake-ups (-s, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, Linux 6.6);
//   lookup   notify (one thread) with the supervisor stat-ing each path itself before letting
//            the call go on (what it would do to know the answer); all four built with `cc` and
//            skipped like native, and also when the kernel refuses user notification;
//   traced   the tracer as vouch runs it (tracedArgv: -y, a log of every call), plus reading
//            the log into run facts (reported apart as "parse").
// The overhead is (traced + parse - plain) / plain, against the goal of <= 10 %.
//
//   npm run build && node bench/trace.mjs [--sources 400] [--rounds 5] [--out .tmp/bench-trace] [--tools tsc,eslint,vitest,oxlint]

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { generate } from "./generate.mjs";
import { summarize } from "./stats.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: {
    sources: { type: "string", default: "400" },
    rounds: { type: "string", default: "5" },
    out: { type: "string", default: join(REPO, ".tmp", "bench-trace") },
    tools: { type: "string", default: "tsc,eslint,vitest,oxlint" },
  },
});
const TRACER = join(REPO, "dist", "exec", "trace", "tracer.js");
if (!existsSync(TRACER)) throw new Error(`${TRACER} is missing: run npm run build first`);
const { readTraceLog, traceAvailability, tracedArgv, TRACE_FILTER } = await import(TRACER);
const availability = traceAvailability();
if (!availability.available) throw new Error(`tracing cannot run here: ${availability.code}: ${availability.message}`);

// Under the repo (its .tmp/ is ignored), so `vitest` and `eslint` resolve from the repo's node_modules.
const project = generate({ sources: Number(values.sources), installed: 0, out: resolve(values.out), check: "typecheck", force: true });
const root = project.root;
const bin = (path) => join(REPO, "node_modules", path);
const node = process.execPath;

// eslint without a TypeScript parser reads JavaScript: the sources compiled once, untimed.
const emit = spawnSync(node, [bin("typescript/bin/tsc"), "-p", ".", "--noEmit", "false", "--outDir", "js"], { cwd: root, encoding: "utf8" });
if (emit.status !== 0) throw new Error(`tsc could not emit the JavaScript for eslint:\n${emit.stdout}${emit.stderr}`);
writeFileSync(
  join(root, "eslint.config.mjs"),
  `export default [{ files: ["js/**/*.js"], rules: { "no-unused-vars": "error", "no-var": "error", "prefer-const": "error", eqeqeq: "error", "no-constant-condition": "error" } }];\n`,
);
// Test files that import modules of the tree, so vitest transforms and loads a real import graph.
const TEST_FILES = 20;
mkdirSync(join(root, "test"), { recursive: true });
// Its own config, so vitest does not take this repository's from a parent directory.
writeFileSync(join(root, "vitest.config.mjs"), `export default { test: { include: ["test/**/*.test.ts"], maxWorkers: 2 } };\n`);
for (let i = 0; i < TEST_FILES; i++) {
  const index = Math.floor(((i + 1) * project.sources) / (TEST_FILES + 1));
  const dir = Math.floor(index / 16);
  const module = `../src/area${Math.floor(dir / 64)}/mod${Math.floor(dir / 8) % 8}/part${dir % 8}/file${index % 16}.js`;
  writeFileSync(
    join(root, "test", `m${i}.test.ts`),
    `import { expect, it } from "vitest";\nimport * as m from "${module}";\nit("exports functions", () => {\n  expect(Object.values(m).some((v) => typeof v === "function")).toBe(true);\n});\n`,
  );
}

const TOOLS = {
  tsc: [node, bin("typescript/bin/tsc"), "--noEmit", "-p", "."],
  eslint: [node, bin("eslint/bin/eslint.js"), "js"],
  vitest: [node, bin("vitest/vitest.mjs"), "run", "--root", "."],
  oxlint: [bin(".bin/oxlint"), "src"],
};
const tools = values.tools.split(",").filter(Boolean);
for (const tool of tools) if (!TOOLS[tool]) throw new Error(`unknown tool ${tool}; one of ${Object.keys(TOOLS).join(", ")}`);

const logs = join(root, ".trace-logs");
rmSync(logs, { recursive: true, force: true });
mkdirSync(logs);
// Vitest's own cache would make every run after the first cheaper than the first.
const env = { ...process.env, CI: "1", NO_COLOR: "1" };

function timed(argv) {
  const started = process.hrtime.bigint();
  const result = spawnSync(argv[0], argv.slice(1), { cwd: root, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return { ms, status: result.status, output: `${result.stdout}${result.stderr}` };
}

let serial = 0;
async function traced(argv) {
  const logPath = join(logs, `${++serial}.log`);
  writeFileSync(logPath, "", { flag: "wx" });
  const run = timed(tracedArgv(argv, logPath));
  const parseStarted = process.hrtime.bigint();
  const read = await readTraceLog(logPath, root);
  const parseMs = Number(process.hrtime.bigint() - parseStarted) / 1e6;
  const logBytes = statSync(logPath).size;
  const lines = readFileSync(logPath, "utf8").split("\n").length - 1;
  rmSync(logPath);
  if (!read.started) throw new Error(`strace did not start ${argv.join(" ")}:\n${run.output}`);
  const facts = read.facts.kind === "facts" ? read.facts.paths.length : `overflow (${read.facts.reason}: ${read.facts.detail})`;
  return { ...run, parseMs, logBytes, lines, facts };
}

// The native floor, built once per run into the logs directory.
const floorBinary = join(logs, "traceFloor");
const floorBuild = process.arch === "x64" ? spawnSync("cc", ["-O2", "-o", floorBinary, join(REPO, "bench", "traceFloor.c")], { encoding: "utf8" }) : null;
const native = floorBuild?.status === 0;
if (!native) console.error(`native floor skipped: ${floorBuild ? floorBuild.error?.message ?? floorBuild.stderr : "not x86-64"}`);
const nativeArgv = (argv) => [floorBinary, ...argv];

// The user-notification supervisor, built the same way; skipped too when the kernel refuses it
// (before Linux 5.5, or seccomp turned off), which the probe run shows.
const notifyBinary = join(logs, "traceNotify");
const notifyBuild = process.arch === "x64" ? spawnSync("cc", ["-O2", "-pthread", "-o", notifyBinary, join(REPO, "bench", "traceNotify.c")], { encoding: "utf8" }) : null;
const notifyProbe = notifyBuild?.status === 0 ? spawnSync(notifyBinary, ["true"], { encoding: "utf8" }) : null;
const notify = notifyProbe?.status === 0;
if (!notify) console.error(`notify skipped: ${notifyProbe ? notifyProbe.error?.message ?? notifyProbe.stderr : notifyBuild ? notifyBuild.error?.message ?? notifyBuild.stderr : "not x86-64"}`);
const notifyArgv = (argv) => [notifyBinary, "--", ...argv];
const notify2Argv = (argv) => [notifyBinary, "-t", "2", "--", ...argv];
const notifyspArgv = (argv) => [notifyBinary, "-s", "-p", "--", ...argv];
const lookupArgv = (argv) => [notifyBinary, "-l", "--", ...argv];
const NOTIFY_WAYS = { notify: notifyArgv, notify2: notify2Argv, notifysp: notifyspArgv, lookup: lookupArgv };

const stopsArgv = (argv) => ["strace", "-f", "-qq", "--seccomp-bpf", "-c", "-e", TRACE_FILTER, "-o", "/dev/null", "--", ...argv];

const rounds = Number(values.rounds);
const loadBefore = loadavg();
const results = {};
for (const tool of tools) {
  const argv = TOOLS[tool];
  const plain0 = timed(argv);
  const samples = { plain: [], stops: [], native: [], notify: [], notify2: [], notifysp: [], lookup: [], traced: [], parse: [], total: [] };
  let last = null;
  let notifiedCalls = null;
  // One warm-up of each, untimed: the first run pays for cold caches.
  timed(stopsArgv(argv));
  if (native) timed(nativeArgv(argv));
  if (notify) for (const way of Object.values(NOTIFY_WAYS)) timed(way(argv));
  await traced(argv);
  for (let round = 0; round < rounds; round++) {
    const ways = ["plain", "stops", ...(native ? ["native"] : []), ...(notify ? Object.keys(NOTIFY_WAYS) : []), "traced"];
    const order = round % 2 === 0 ? ways : [...ways].reverse();
    for (const way of order) {
      if (way === "plain") {
        const run = timed(argv);
        if (run.status !== plain0.status) throw new Error(`${tool} exited ${run.status}, first ${plain0.status}`);
        samples.plain.push(run.ms);
      } else if (way === "stops") samples.stops.push(timed(stopsArgv(argv)).ms);
      else if (way === "native") {
        const run = timed(nativeArgv(argv));
        if (run.status !== plain0.status) throw new Error(`${tool} under traceFloor exited ${run.status}, untraced ${plain0.status}:\n${run.output}`);
        samples.native.push(run.ms);
      } else if (NOTIFY_WAYS[way]) {
        const run = timed(NOTIFY_WAYS[way](argv));
        if (run.status !== plain0.status) throw new Error(`${tool} under traceNotify (${way}) exited ${run.status}, untraced ${plain0.status}:\n${run.output}`);
        samples[way].push(run.ms);
        if (way === "notify") notifiedCalls = Number(/(\d+) notified calls/.exec(run.output)?.[1]);
      } else {
        last = await traced(argv);
        if (last.status !== plain0.status) throw new Error(`${tool} traced exited ${last.status}, untraced ${plain0.status}:\n${last.output}`);
        samples.traced.push(last.ms);
        samples.parse.push(last.parseMs);
        samples.total.push(last.ms + last.parseMs);
      }
    }
  }
  const p50 = (xs) => summarize(xs).p50;
  const plain = p50(samples.plain);
  const percent = (x) => `${Math.round(((x - plain) / plain) * 1000) / 10} %`;
  results[tool] = {
    exit: plain0.status,
    plain_ms: summarize(samples.plain),
    stops_ms: summarize(samples.stops),
    native_ms: summarize(samples.native),
    notify_ms: summarize(samples.notify),
    notify2_ms: summarize(samples.notify2),
    notifysp_ms: summarize(samples.notifysp),
    lookup_ms: summarize(samples.lookup),
    traced_ms: summarize(samples.traced),
    parse_ms: summarize(samples.parse),
    overhead_stops: percent(p50(samples.stops)),
    overhead_native: native ? percent(p50(samples.native)) : null,
    overhead_notify: notify ? percent(p50(samples.notify)) : null,
    overhead_notify2: notify ? percent(p50(samples.notify2)) : null,
    overhead_notifysp: notify ? percent(p50(samples.notifysp)) : null,
    overhead_lookup: notify ? percent(p50(samples.lookup)) : null,
    overhead_traced: percent(p50(samples.traced)),
    overhead_total: percent(p50(samples.total)),
    ratio_total: Math.round((p50(samples.total) / plain) * 100) / 100,
    facts: last.facts,
    notified_calls: notifiedCalls,
    log_lines: last.lines,
    log_bytes: last.logBytes,
  };
  console.error(`${tool}: ${JSON.stringify(results[tool])}`);
}

console.log(
  JSON.stringify(
    {
      sources: project.sources,
      rounds,
      node: process.version,
      strace: spawnSync("strace", ["-V"], { encoding: "utf8" }).stdout.split("\n")[0],
      load_before: loadBefore.map((x) => Math.round(x * 100) / 100),
      load_after: loadavg().map((x) => Math.round(x * 100) / 100),
      results,
    },
    null,
    2,
  ),
);
