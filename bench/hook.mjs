#!/usr/bin/env node
// The hook benchmark: `vouch hook claude` end to end, as the host runs it, a fresh process with real
// PreToolUse JSON on stdin, for three decisions, against `node -e 0` as the floor:
//   - a command that runs no check (`git status --short`): nothing printed;
//   - a current check (`npm run check`): deny;
//   - a stale check (`npm run check 2>&1 | tail -30`): updatedInput with the rewritten command;
// plus two start-up references: `vouch --version` (the CLI's own boot) and a PreToolUse event for
// another tool (Read), which the hook ignores without loading the decision code.
//
// Two generated projects of the same seed: in one the check's receipt is CURRENT, in the other a
// source file changed after the run, so it is STALE. Each case is measured with the observers up
// (what SessionStart arranges) and with none (the direct-scan fallback). All cases of a mode run
// round-robin, so they meet the same machine load. Each hook's stdout is checked on every run: a
// wrong decision fails the benchmark.
//
//   node bench/hook.mjs [--runs 30] [--warmup 3] [--sources 1000] [--installed 10000]
//                       [--modes observer,scan] [--vouch dist/bin/main.js] [--baseline OTHER/main.js]
//                       [--env NAME=VALUE] [--out FILE] [--keep]
//
// Where this install has the native hook client (build/Release/vouch_hook, native/hookClient.c), each
// hook case runs through it too ("[client]"), in the same rounds: the program `vouch agent setup`
// writes then. Its first call finds no hook server and starts one; the warm-up rounds cover that.
// The servers live in a directory of the benchmark's own (XDG_RUNTIME_DIR) and are stopped at the end.
//
// --baseline adds each vouch case again, run by another build (an older checkout's dist/bin/main.js),
// and --env each again with a variable set (VOUCH_OBSERVER_TIMEOUT_MS=1, say), in the
// same rounds, so that a change is measured side by side under the same load.
//
// Every observer it starts is stopped before it exits, also on an error or Ctrl-C.

import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, release, tmpdir, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { generate } from "./generate.mjs";
import { summarize } from "./stats.mjs";
import { hookClientOf, stopHookServers } from "./steps.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const BUDGET_P50_MS = 150; // DESIGN.md: a hook decision as a fresh process, under 150 ms p50
const EDIT = join("src", "area0", "mod0", "part0", "file1.ts");

function parseOptions() {
  const { values } = parseArgs({
    options: {
      runs: { type: "string", default: "30" },
      warmup: { type: "string", default: "3" },
      sources: { type: "string", default: "1000" },
      installed: { type: "string", default: "10000" },
      modes: { type: "string", default: "observer,scan" },
      vouch: { type: "string", default: join(REPO, "dist", "bin", "main.js") },
      baseline: { type: "string" },
      env: { type: "string" },
      out: { type: "string" },
      keep: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log("usage: node bench/hook.mjs [--runs N] [--warmup N] [--sources N] [--installed N] [--modes observer,scan] [--vouch PATH] [--baseline PATH] [--env NAME=VALUE] [--out FILE] [--keep]");
    process.exit(0);
  }
  const whole = (flag, min) => {
    const n = Number(values[flag]);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${flag} wants a whole number of at least ${min}`);
    return n;
  };
  const modes = values.modes.split(",").map((m) => m.trim());
  for (const mode of modes) if (mode !== "observer" && mode !== "scan") throw new Error(`--modes takes observer and/or scan, not "${mode}"`);
  return {
    runs: whole("runs", 1),
    warmup: whole("warmup", 0),
    sources: whole("sources", 1),
    installed: whole("installed", 0),
    modes,
    vouch: resolve(values.vouch),
    baseline: values.baseline === undefined ? undefined : resolve(values.baseline),
    extraEnv: values.env === undefined ? undefined : envPair(values.env),
    out: values.out ?? join(tmpdir(), `vouch-bench-hook-${Date.now()}.json`),
    keep: values.keep,
  };
}

function envOption(options) {
  return options.extraEnv === undefined ? null : `${options.extraEnv.name}=${options.extraEnv.value}`;
}

function envPair(text) {
  const at = text.indexOf("=");
  if (at < 1) throw new Error(`--env wants NAME=VALUE, not "${text}"`);
  return { name: text.slice(0, at), value: text.slice(at + 1) };
}

/** Claude Code's PreToolUse input for its Bash tool (hooks reference, "Common input fields"). */
function preToolUse(cwd, toolName, toolInput) {
  return {
    session_id: "abc123",
    prompt_id: "550e8400-e29b-41d4-a716-446655440000",
    transcript_path: "/home/user/.claude/projects/bench/transcript.jsonl",
    cwd,
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: toolName,
    tool_input: toolInput,
    tool_use_id: "toolu_01ABC123",
  };
}
const bash = (cwd, command) => preToolUse(cwd, "Bash", { command, description: "Run the check", timeout: 120000, run_in_background: false });

/** Runs argv with stdin read from a file, as a host's pipe would feed it; wall time from spawn to exit. */
function timed(argv, stdinFile, cwd, env) {
  return new Promise((resolvePromise, reject) => {
    const fd = openSync(stdinFile, "r");
    const started = process.hrtime.bigint();
    const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: [fd, "pipe", "pipe"] });
    closeSync(fd);
    const out = [];
    const err = [];
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.on("data", (c) => err.push(c));
    child.on("error", reject);
    let ms = 0;
    child.on("exit", () => {
      ms = Number(process.hrtime.bigint() - started) / 1e6;
    });
    child.on("close", (code) => resolvePromise({ ms, code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") }));
  });
}

function vouchSync(vouch, cwd, args, env) {
  const result = spawnSync(process.execPath, [vouch, ...args], { cwd, env, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`vouch ${args.join(" ")} in ${cwd} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

function main() {
  return run(parseOptions());
}

async function run(options) {
  const work = mkdtempSync(join(tmpdir(), "vouch-bench-hook-"));
  const runtime = join(work, "run");
  mkdirSync(runtime, { mode: 0o700 });
  const env = { ...process.env, VOUCH_HOOK_LOG: "", VOUCH_FORCE: "", XDG_RUNTIME_DIR: runtime };
  const started = [];
  const stopAll = () => {
    for (const root of started.splice(0)) spawnSync(process.execPath, [options.vouch, "stop"], { cwd: root, env, stdio: "ignore" });
    stopHookServers(runtime);
  };
  const onSignal = () => {
    stopAll();
    process.exit(130);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    console.error(`generating two projects of ${options.sources} sources + ${options.installed} installed files in ${work}…`);
    const current = generate({ sources: options.sources, installed: options.installed, out: join(work, "current"), checkMs: 100 }).root;
    const stale = generate({ sources: options.sources, installed: options.installed, out: join(work, "stale"), checkMs: 100 }).root;
    for (const root of [current, stale]) vouchSync(options.vouch, root, ["run", "check"], env);
    appendFileSync(join(stale, EDIT), "export const benchEdit = 1;\n");

    const input = (name, value) => {
      const file = join(work, `${name}.json`);
      writeFileSync(file, JSON.stringify(value));
      return file;
    };
    const hookArgv = [process.execPath, options.vouch, "hook", "claude"];
    const cases = [
      { name: "node -e 0 (floor)", argv: [process.execPath, "-e", "0"], stdin: input("floor", bash(current, "true")), cwd: current, expect: (out) => out === "" },
      { name: "vouch --version", argv: [process.execPath, options.vouch, "--version"], stdin: input("version", {}), cwd: current, expect: (out) => /^\d+\.\d+\.\d+/.test(out) },
      { name: "hook, another tool (Read)", argv: hookArgv, stdin: input("read", preToolUse(current, "Read", { file_path: join(current, "package.json") })), cwd: current, expect: (out) => out === "" },
      { name: "hook, no check (`git status --short`)", argv: hookArgv, stdin: input("nomatch", bash(current, "git status --short")), cwd: current, expect: (out) => out === "" },
      { name: "hook, current check: deny", argv: hookArgv, stdin: input("deny", bash(current, "npm run check")), cwd: current, expect: (out) => JSON.parse(out).hookSpecificOutput.permissionDecision === "deny" },
      {
        name: "hook, stale check: rewrite",
        argv: hookArgv,
        stdin: input("rewrite", bash(stale, "npm run check 2>&1 | tail -30")),
        cwd: stale,
        expect: (out) => JSON.parse(out).hookSpecificOutput.updatedInput.command.endsWith(" run check --if-due 2>&1 | tail -30"),
      },
    ];

    const client = hookClientOf(options.vouch);
    if (client !== null) {
      for (const c of cases.filter((item) => item.argv === hookArgv)) cases.push({ ...c, name: `${c.name} [client]`, argv: [client, ...hookArgv] });
    }
    const own = cases.slice(1);
    if (options.baseline !== undefined) {
      for (const c of own) cases.push({ ...c, name: `${c.name} [baseline]`, argv: c.argv.map((arg) => (arg === options.vouch ? options.baseline : arg)) });
    }
    if (options.extraEnv !== undefined) {
      const { name, value } = options.extraEnv;
      for (const c of own) cases.push({ ...c, name: `${c.name} [${name}=${value}]`, env: { ...env, [name]: value } });
    }

    const results = {
      machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? null, memory_gb: Math.round(totalmem() / 2 ** 30), kernel: release(), node: process.version, load_average_at_start: loadavg().map((x) => Math.round(x * 100) / 100) },
      options: { runs: options.runs, warmup: options.warmup, sources: options.sources, installed: options.installed, vouch: options.vouch, baseline: options.baseline ?? null, env: envOption(options) },
      modes: {},
    };
    for (const mode of options.modes) {
      if (mode === "observer") {
        for (const root of [current, stale]) {
          started.push(root);
          vouchSync(options.vouch, root, ["start"], env);
        }
      }
      const samples = new Map(cases.map((c) => [c.name, []]));
      for (let round = 0; round < options.warmup + options.runs; round++) {
        for (const c of cases) {
          const result = await timed(c.argv, c.stdin, c.cwd, c.env ?? env);
          let ok = false;
          try {
            ok = result.code === 0 && c.expect(result.stdout);
          } catch {
            ok = false;
          }
          if (!ok) throw new Error(`${mode}: "${c.name}" answered wrongly (exit ${result.code}):\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
          if (round >= options.warmup) samples.get(c.name).push(result.ms);
        }
      }
      if (mode === "observer") stopAll();
      const floor = summarize(samples.get(cases[0].name));
      results.modes[mode] = cases.map((c) => {
        const s = summarize(samples.get(c.name));
        return { case: c.name, ...s, p50_over_floor: Math.round((s.p50 / floor.p50) * 100) / 100, p50_minus_floor_ms: Math.round((s.p50 - floor.p50) * 10) / 10 };
      });
    }
    results.machine.load_average_at_end = loadavg().map((x) => Math.round(x * 100) / 100);
    writeFileSync(options.out, JSON.stringify(results, null, 2) + "\n");
    report(results);
    console.log(`\nJSON: ${options.out}`);
    // Per mode: the observer is the normal state (SessionStart starts it); the scan is the fallback.
    for (const [mode, rows] of Object.entries(results.modes)) {
      const over = rows.filter((r) => r.case.startsWith("hook, ") && !r.case.includes("Read") && r.p50 >= BUDGET_P50_MS);
      console.log(`budget p50 < ${BUDGET_P50_MS} ms, ${mode}: ${over.length === 0 ? "met by every decision" : `OVER for ${over.map((r) => r.case).join("; ")}`}`);
    }
  } finally {
    stopAll();
    if (!options.keep) rmSync(work, { recursive: true, force: true });
    else console.error(`kept ${work}`);
  }
}

function report(results) {
  const m = results.machine;
  console.log(`machine: ${m.cpus} × ${m.cpu_model}, ${m.memory_gb} GB, Linux ${m.kernel}, Node ${m.node}; load ${m.load_average_at_start.join(" ")} → ${m.load_average_at_end.join(" ")}`);
  console.log(`project: ${results.options.sources} sources + ${results.options.installed} installed files; ${results.options.runs} runs per case after ${results.options.warmup} warm-up rounds, round-robin\n`);
  for (const [mode, rows] of Object.entries(results.modes)) {
    console.log(`### ${mode === "observer" ? "observer running (after SessionStart)" : "no observer (direct scan)"}\n`);
    console.log("| case | p50 ms | p90 ms | min | max | p50 / floor | p50 − floor ms |");
    console.log("|---|---:|---:|---:|---:|---:|---:|");
    for (const r of rows) console.log(`| ${r.case} | ${r.p50} | ${r.p90} | ${r.min} | ${r.max} | ${r.p50_over_floor.toFixed(2)} | ${r.p50_minus_floor_ms} |`);
    console.log("");
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
