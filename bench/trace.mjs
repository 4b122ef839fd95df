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
//            the log into run facts (reported apart as "parse");
//   declared `vouch run TOOL` with the check declared (its default inputs): the product's path,
//            its own scans before and after the run included;
//   product  `vouch run TOOL` with the same check `"mode": "traced"`: traced as above, its facts
//            fingerprinted and its receipt written with its evidence. product against declared is
//            the overhead a user sees;
// and, asked for with --ways, variants of strace's flags (each times the run and reads the log,
// so a variant that loses what the parser needs shows as an unusable trace):
//   noprocess  TRACE_FILTER with %process narrowed to the calls the parser reads (clone, clone3,
//              fork, vfork, execve, execveat, exit, exit_group): no stops on wait4, kill, ...;
//   noy        tracedArgv without -y: what decoding fds (one readlink per fd argument) costs;
//              the parser needs the paths, so its trace is unusable (timed, not a candidate).
// The overhead is (traced + parse - plain) / plain, against the goal of <= 10 %. Each way also
// reports its CPU time (user + system of every process of the run, tracer included), which a busy
// machine disturbs far less than wall time.
//
//   npm run build && node bench/trace.mjs [--sources 400] [--rounds 5] [--out .tmp/bench-trace] [--tools tsc,eslint,vitest,oxlint]
//                                         [--ways plain,stops,native,notify,notify2,notifysp,lookup,traced,declared,product,noprocess,noy]

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
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
    ways: { type: "string", default: "plain,stops,native,notify,notify2,notifysp,lookup,traced,declared,product" },
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

// CPU time of the waited-for children (user + system, proc(5) /proc/self/stat cutime and cstime, in
// clock ticks): every process of the run once reaped, tracer and tracees alike. Wall time on a busy
// machine says as much about the other work as about the run; CPU time much less so.
const TICK_MS = 1000 / Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim() || 100);
function childrenCpuMs() {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 16 and 17 of the line, counted from 1; fields[0] is field 3.
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
}

function timed(argv) {
  const cpuBefore = childrenCpuMs();
  const started = process.hrtime.bigint();
  const result = spawnSync(argv[0], argv.slice(1), { cwd: root, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return { ms, cpu: childrenCpuMs() - cpuBefore, status: result.status, output: `${result.stdout}${result.stderr}` };
}

let serial = 0;
async function traced(argv, makeArgv = tracedArgv) {
  const logPath = join(logs, `${++serial}.log`);
  writeFileSync(logPath, "", { flag: "wx" });
  const run = timed(makeArgv(argv, logPath));
  const parseStarted = process.hrtime.bigint();
  const read = await readTraceLog(logPath, root);
  const parseMs = Number(process.hrtime.bigint() - parseStarted) / 1e6;
  const logBytes = statSync(logPath).size;
  const text = readFileSync(logPath, "utf8");
  const lines = text.split("\n").length - 1;
  // Calls by name, each once (a split call's resumed half is not counted again): what the stops are spent on.
  const calls = {};
  for (const match of text.matchAll(/^\d+ +([a-z_0-9]+)\(/gm)) calls[match[1]] = (calls[match[1]] ?? 0) + 1;
  rmSync(logPath);
  if (!read.started) throw new Error(`strace did not start ${argv.join(" ")}:\n${run.output}`);
  const facts = read.facts.kind === "facts" ? read.facts.paths.length : `unusable (${read.facts.reason}: ${String(read.facts.detail).slice(0, 120)})`;
  return { ...run, parseMs, logBytes, lines, facts, calls };
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

// Variants of strace's flags, measured to tune tracedArgv (see the header).
const NARROW_FILTER = TRACE_FILTER.replace("%process", "clone,clone3,?fork,?vfork,execve,execveat,exit,exit_group");
const VARIANTS = {
  noprocess: (argv, logPath) => tracedArgv(argv, logPath).map((arg) => (arg === TRACE_FILTER ? NARROW_FILTER : arg)),
  noy: (argv, logPath) => tracedArgv(argv, logPath).filter((arg) => arg !== "-y"),
};

// The product's own path: `vouch run TOOL`, the check declared and traced, with a config and a
// state dir each, kept beside the project (outside its root, so neither is an input).
const VOUCH = join(REPO, "dist", "bin", "main.js");
const product = {};
for (const mode of ["declared", "traced"]) {
  const config = { schema: 1, checks: Object.entries(TOOLS).map(([name, command]) => ({ name, kind: "custom", command, ...(mode === "traced" ? { mode } : {}) })) };
  const configPath = `${root}.vouch-${mode}.json`;
  writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
  const stateDir = `${root}.state-${mode}`;
  rmSync(stateDir, { recursive: true, force: true });
  product[mode] = (tool) => [node, VOUCH, "run", tool, "--config", configPath, "--root", root, "--state-dir", stateDir];
}

/** How many receipts of a state dir are traced, and their notes: a traced check that fell back to its declared inputs would measure nothing. */
function receiptModes(stateDir) {
  const Database = createRequire(join(REPO, "package.json"))("better-sqlite3");
  const db = new Database(join(stateDir, "state.db"), { readonly: true });
  try {
    return db.prepare("SELECT check_name, evidence FROM receipts").all().map((row) => ({ check: row.check_name, ...JSON.parse(row.evidence) }));
  } finally {
    db.close();
  }
}

const wanted = values.ways.split(",").filter(Boolean);
const KNOWN_WAYS = ["plain", "stops", "native", ...Object.keys(NOTIFY_WAYS), "traced", "declared", "product", ...Object.keys(VARIANTS)];
for (const way of wanted) if (!KNOWN_WAYS.includes(way)) throw new Error(`unknown way ${way}; one of ${KNOWN_WAYS.join(", ")}`);
const ways = KNOWN_WAYS.filter((way) => wanted.includes(way) && (way !== "native" || native) && (!NOTIFY_WAYS[way] || notify));
if (!ways.includes("plain")) ways.unshift("plain");

const rounds = Number(values.rounds);
const loadBefore = loadavg();
const results = {};
for (const tool of tools) {
  const argv = TOOLS[tool];
  const plain0 = timed(argv);
  const samples = Object.fromEntries([...ways, "parse", "total", ...Object.keys(VARIANTS).map((v) => `${v}_parse`)].map((way) => [way, []]));
  let last = null;
  const variantFacts = {};
  let notifiedCalls = null;
  const expectExit = (run, what) => {
    if (run.status !== plain0.status) throw new Error(`${tool} ${what} exited ${run.status}, untraced ${plain0.status}:\n${run.output.slice(-2000)}`);
    return run;
  };
  const runWay = async (way) => {
    if (way === "plain") return expectExit(timed(argv), "plain");
    if (way === "stops") return timed(stopsArgv(argv));
    if (way === "native") return expectExit(timed(nativeArgv(argv)), "under traceFloor");
    if (NOTIFY_WAYS[way]) {
      const run = expectExit(timed(NOTIFY_WAYS[way](argv)), `under traceNotify (${way})`);
      if (way === "notify") notifiedCalls = Number(/(\d+) notified calls/.exec(run.output)?.[1]);
      return run;
    }
    if (way === "declared" || way === "product") return expectExit(timed(product[way === "product" ? "traced" : "declared"](tool)), `through vouch run (${way})`);
    if (VARIANTS[way]) {
      const run = await traced(argv, VARIANTS[way]);
      expectExit(run, `traced (${way})`);
      samples[`${way}_parse`].push(run.parseMs);
      variantFacts[way] = run.facts;
      return run;
    }
    last = expectExit(await traced(argv), "traced");
    samples.parse.push(last.parseMs);
    samples.total.push(last.ms + last.parseMs);
    return last;
  };
  // One warm-up of each, untimed: the first run pays for cold caches (and makes the first receipts).
  for (const way of ways) await runWay(way);
  for (const key of Object.keys(samples)) samples[key] = [];
  const cpu = Object.fromEntries(ways.map((way) => [way, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ways : [...ways].reverse();
    for (const way of order) {
      const run = await runWay(way);
      samples[way].push(run.ms);
      cpu[way].push(run.cpu);
    }
  }
  const p50 = (xs) => summarize(xs)?.p50 ?? null;
  const plain = p50(samples.plain);
  const percent = (x, base = plain) => (x === null ? null : `${Math.round(((x - base) / base) * 1000) / 10} %`);
  const figure = {};
  const plainCpu = p50(cpu.plain);
  figure.plain_cpu_ms = summarize(cpu.plain);
  for (const way of ways) if (way !== "plain") {
    figure[`${way}_ms`] = summarize(samples[way]);
    figure[`overhead_${way}`] = percent(p50(samples[way]));
    figure[`${way}_cpu_ms`] = summarize(cpu[way]);
    figure[`cpu_overhead_${way}`] = percent(p50(cpu[way]), plainCpu);
  }
  if (ways.includes("traced")) {
    figure.parse_ms = summarize(samples.parse);
    figure.overhead_total = percent(p50(samples.total));
    figure.ratio_total = Math.round((p50(samples.total) / plain) * 100) / 100;
    figure.facts = last.facts;
    figure.log_lines = last.lines;
    figure.log_bytes = last.logBytes;
    figure.calls = Object.fromEntries(Object.entries(last.calls).sort((a, b) => b[1] - a[1]));
  }
  for (const variant of Object.keys(VARIANTS)) if (ways.includes(variant)) {
    figure[`${variant}_parse_ms`] = summarize(samples[`${variant}_parse`]);
    figure[`${variant}_facts`] = variantFacts[variant];
    if (ways.includes("traced")) figure[`${variant}_over_traced`] = percent(p50(samples[variant]), p50(samples.traced));
  }
  for (const variant of Object.keys(VARIANTS)) if (ways.includes(variant) && ways.includes("traced")) figure[`${variant}_cpu_over_traced`] = percent(p50(cpu[variant]), p50(cpu.traced));
  if (ways.includes("declared") && ways.includes("product")) {
    figure.product_cpu_over_declared = percent(p50(cpu.product), p50(cpu.declared));
    figure.product_over_declared = percent(p50(samples.product), p50(samples.declared));
    figure.product_minus_declared_ms = Math.round(p50(samples.product) - p50(samples.declared));
  }
  if (notifiedCalls !== null) figure.notified_calls = notifiedCalls;
  results[tool] = { exit: plain0.status, plain_ms: summarize(samples.plain), ...figure };
  console.error(`${tool}: ${JSON.stringify(results[tool])}`);
}

// Every product receipt of a traced check must be traced, or the product rows measured a fallback.
const productModes = ways.includes("product") ? receiptModes(`${root}.state-traced`) : [];
const fellBack = productModes.filter((receipt) => receipt.mode !== "traced");
if (fellBack.length > 0) throw new Error(`traced checks made declared receipts: ${JSON.stringify(fellBack.slice(0, 3))}`);

console.log(
  JSON.stringify(
    {
      sources: project.sources,
      rounds,
      ways,
      node: process.version,
      strace: spawnSync("strace", ["-V"], { encoding: "utf8" }).stdout.split("\n")[0],
      load_before: loadBefore.map((x) => Math.round(x * 100) / 100),
      load_after: loadavg().map((x) => Math.round(x * 100) / 100),
      product_receipts: productModes.length > 0 ? { traced: productModes.length, notes: [...new Set(productModes.flatMap((r) => r.notes.map((n) => n.code)))] } : null,
      results,
    },
    null,
    2,
  ),
);
