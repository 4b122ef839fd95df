#!/usr/bin/env node
// The agent replay benchmark: scripted agent sessions (edits and the shell commands agents type),
// each run twice on fresh copies of one project, in one run:
//
//   - as typed: every command through `bash -c`;
//   - through the hook: each command is first given to `vouch hook claude` as Claude Code's
//     PreToolUse event, and what it answers is carried out as the host would: a deny runs nothing,
//     a rewrite runs its updatedInput command, a pass runs the command as typed. An observer runs
//     beside the session (`vouch start`), as SessionStart would start it.
//
// The project is examples/demo-app (real tsc, oxlint and vitest from this repository), with the
// config `vouch init` proposes (--evidence declared or traced sets every check's mode instead). Both copies go through the same edits in the same order, so the
// as-typed run of a step is the ground truth for the hooked one: a skip (deny) whose stated result
// differs from what the command did as typed is a wrong skip. A rerun is redundant when each check it
// runs already ran in the session on exactly the same inputs (for this project: src/, test/, the
// configs, package.json and the lockfile, read from the files), whether just before or before an edit
// and its revert; the report counts how many redundant reruns the hook avoided.
//
//   node bench/agentReplay.mjs [--sessions all|NAME,...] [--evidence init|declared|traced]
//                              [--step-timeout 300] [--vouch dist/bin/main.js]
//                              [--hook setup|node] [--out FILE] [--keep]
//
// --hook setup (the default) calls the hook as `vouch agent setup` writes it: through the native
// client (build/Release/vouch_hook) where it is built, which asks a resident hook server; --hook node
// starts `node main.js hook claude` for every command, as before the client.
//
// The copies live under .tmp/ in this repository (so that the project's tools resolve to the
// repository's own), and are removed on exit unless --keep.

import { execFileSync } from "node:child_process";
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { checkName, dependencyTree, generateWorkspace, packageNames, sourceFile } from "./generateWorkspace.mjs";
import { hookClientOf, killAll, preToolUse, readDecision, step as stepIn, stopHookServers } from "./steps.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const EXAMPLE = join(REPO, "examples", "demo-app");
const BIN = join(REPO, "node_modules", ".bin");

/** Which check each command stands for, and the files that check reads in this project (the ground truth of "inputs"). */
const CHECK_INPUTS = {
  typecheck: (path) => /^(src|test)\/.*\.ts$/.test(path) || /^(tsconfig\.json|package\.json|package-lock\.json|vitest\.config\.ts)$/.test(path),
  lint: (path) => path.startsWith("src/") || /^(package\.json|\.oxlintrc\.json)$/.test(path),
  test: (path) => /^(src|test)\//.test(path) || /^(package\.json|package-lock\.json|vitest\.config\.ts|tsconfig\.json)$/.test(path),
};

const append = (path, text) => (root) => appendFileSync(join(root, path), text);
/** An edit and, later, its revert to the file's bytes before the edit. */
function editAndRevert(path, text) {
  const before = new Map();
  return {
    edit: (root) => {
      before.set(root, readFileSync(join(root, path)));
      appendFileSync(join(root, path), text);
    },
    revert: (root) => writeFileSync(join(root, path), before.get(root)),
  };
}
const money = editAndRevert("src/money.ts", "\nexport const ZERO = 0;\n");
const write = (path, text) => (root) => writeFileSync(join(root, path), text);
const FAILING_TEST = "import { expect, it } from 'vitest';\nit('fails until fixed', () => expect(1).toBe(2));\n";
const PASSING_TEST = "import { expect, it } from 'vitest';\nit('fails until fixed', () => expect(1).toBe(1));\n";

// The workspace session: a generated pnpm workspace (bench/generateWorkspace.mjs) of six packages,
// p01 at the top of a small tree, each test about 300 ms; an edit to one leaf, and fan-outs.
const WORKSPACE_PACKAGES = 6;
const WORKSPACE_TEST_MS = 300;
const ALL_PACKAGE_CHECKS = packageNames(WORKSPACE_PACKAGES).map(checkName);
const leaf = packageNames(WORKSPACE_PACKAGES).at(-1);
const WORKSPACE_SESSION = [
  { run: "pnpm -r test", checks: ALL_PACKAGE_CHECKS },
  { edit: append(sourceFile(leaf), "\n// edited\n") },
  { run: "pnpm -r test 2>&1 | tail -20", checks: ALL_PACKAGE_CHECKS },
  { run: `pnpm --filter @bench/${leaf} test`, checks: [checkName(leaf)] },
  { run: "pnpm -r test", checks: ALL_PACKAGE_CHECKS },
  { run: `cd packages/${leaf} && pnpm test`, checks: [checkName(leaf)] },
];

/**
 * A session: steps an agent takes. `run` steps name the checks the command runs (for the ground
 * truth), in order; an `edit` step changes the tree. Each session starts from a fresh copy.
 */
const SESSIONS = {
  workspace: WORKSPACE_SESSION,
  // Test, read the tail again, typecheck, lint, then a docs edit and the checks again.
  "read-again": [
    { run: "npm test 2>&1 | tail -30", checks: ["test"] },
    { run: "npm test 2>&1 | tail -5", checks: ["test"] },
    { run: "npm run typecheck", checks: ["typecheck"] },
    { run: "npm run lint", checks: ["lint"] },
    { edit: append("README.md", "\nMore words.\n") },
    { run: "npm run typecheck", checks: ["typecheck"] },
    { run: "npm test", checks: ["test"] },
    { run: "npm run typecheck && npm run lint && npm test", checks: ["typecheck", "lint", "test"] },
  ],
  // The checks, a source edit, the checks, its revert, the checks again, a forced rerun.
  "edit-revert": [
    { run: "npm run typecheck && npm test", checks: ["typecheck", "test"] },
    { edit: money.edit },
    { run: "npm run typecheck", checks: ["typecheck"] },
    { run: "npm test 2>&1 | tail -20", checks: ["test"] },
    { edit: money.revert },
    { run: "npm test", checks: ["test"] },
    { run: "npm run typecheck", checks: ["typecheck"] },
    { run: "VOUCH_FORCE=1 npm test", checks: ["test"], forced: true },
    { run: "npm run lint", checks: ["lint"] },
    { run: "npm run typecheck && npm run lint && npm test", checks: ["typecheck", "lint", "test"] },
  ],
  // A failing test: run, rerun without an edit, fix, rerun, and the tool's own form.
  "failing-test": [
    { edit: write("test/todo.test.ts", FAILING_TEST) },
    { run: "npm test 2>&1 | tail -20", checks: ["test"] },
    { run: "npm test 2>&1 | tail -40", checks: ["test"] },
    { edit: write("test/todo.test.ts", PASSING_TEST) },
    { run: "npm test", checks: ["test"] },
    { run: "npx vitest run", checks: ["test"] },
    { run: "npm run typecheck", checks: ["typecheck"] },
    { run: "npm run typecheck", checks: ["typecheck"] },
  ],
};

function parseOptions() {
  const { values } = parseArgs({
    options: {
      sessions: { type: "string", default: "all" },
      evidence: { type: "string", default: "init" },
      "step-timeout": { type: "string", default: "300" },
      vouch: { type: "string", default: join(REPO, "dist", "bin", "main.js") },
      hook: { type: "string", default: "setup" },
      out: { type: "string" },
      keep: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(`usage: node bench/agentReplay.mjs [--sessions all|${Object.keys(SESSIONS).join(",")}] [--step-timeout SECONDS] [--vouch PATH] [--hook setup|node] [--out FILE] [--keep]`);
    process.exit(0);
  }
  const names = values.sessions === "all" ? Object.keys(SESSIONS) : values.sessions.split(",");
  for (const name of names) if (!SESSIONS[name]) throw new Error(`no session named ${name}; sessions: ${Object.keys(SESSIONS).join(", ")}`);
  if (!["init", "declared", "traced"].includes(values.evidence)) throw new Error("--evidence is init (what vouch init proposes), declared or traced");
  if (!["setup", "node"].includes(values.hook)) throw new Error("--hook is setup (what vouch agent setup writes: the native client where it is built) or node");
  const timeout = Number(values["step-timeout"]);
  if (!Number.isInteger(timeout) || timeout < 1) throw new Error("--step-timeout wants a whole number of seconds");
  return {
    names,
    evidence: values.evidence,
    stepTimeoutMs: timeout * 1000,
    vouch: resolve(values.vouch),
    hook: values.hook,
    out: values.out ? resolve(values.out) : join(tmpdir(), `vouch-bench-agent-replay-${new Date().toISOString().replace(/[:.]/g, "-")}.json`),
    keep: values.keep,
  };
}

const ENV = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("npm_") && !name.startsWith("VITEST") && name !== "VOUCH_FORCE")),
  PATH: [BIN, process.env.PATH ?? ""].join(delimiter),
  npm_config_update_notifier: "false",
  npm_config_fund: "false",
  npm_config_audit: "false",
  GIT_AUTHOR_NAME: "bench",
  GIT_AUTHOR_EMAIL: "bench@example.invalid",
  GIT_COMMITTER_NAME: "bench",
  GIT_COMMITTER_EMAIL: "bench@example.invalid",
};

const step = (argv, options) => stepIn(argv, { env: ENV, ...options });

// pipefail: `npm test 2>&1 | tail -20` then exits with the check's status, not tail's, so that the
// as-typed exit code is the ground truth for what a skip claimed. Both ways run under it; it changes
// no output.
const SHELL = (command) => ["bash", "-o", "pipefail", "-c", command];

/** A fresh copy of the demo project, committed, with the config `vouch init` proposes. */
async function freshProject(parent, name, options) {
  const root = join(parent, name);
  if (name.startsWith("workspace-")) {
    const pnpmVersion = execFileSync(join(BIN, "pnpm"), ["--version"], { env: ENV, encoding: "utf8" }).trim();
    generateWorkspace({ root, packages: WORKSPACE_PACKAGES, testMs: WORKSPACE_TEST_MS, pnpm: join(BIN, "pnpm"), pnpmVersion, env: ENV });
    if (options.evidence === "traced") {
      const config = JSON.parse(readFileSync(join(root, "vouch.config.json"), "utf8"));
      for (const check of config.checks) check.mode = "traced";
      writeFileSync(join(root, "vouch.config.json"), `${JSON.stringify(config, null, 2)}\n`);
      execFileSync("git", ["commit", "-qam", "traced"], { cwd: root, env: ENV });
    }
    return root;
  }
  cpSync(EXAMPLE, root, { recursive: true });
  // As in scripts/demo.mjs: an installed project has its own node_modules, where vitest keeps its
  // cache. Without one, vitest's first run would make it, and every traced check that lists the
  // project's root (tsc, oxlint) would see a new entry: an artefact of the copy, not a change.
  mkdirSync(join(root, "node_modules"));
  const git = (...args) => execFileSync("git", args, { cwd: root, env: ENV, stdio: "ignore" });
  git("init", "-q");
  const init = await step([process.execPath, options.vouch, "init", "--json"], { cwd: root, timeoutMs: options.stepTimeoutMs });
  if (init.code !== 0) throw new Error(`vouch init failed in ${root}:\n${init.stderr}`);
  if (options.evidence !== "init") {
    const config = JSON.parse(readFileSync(join(root, "vouch.config.json"), "utf8"));
    for (const check of config.checks) {
      if (options.evidence === "traced") check.mode = "traced";
      else delete check.mode;
    }
    writeFileSync(join(root, "vouch.config.json"), `${JSON.stringify(config, null, 2)}\n`);
  }
  git("add", "-A");
  git("commit", "-qm", "start");
  return root;
}

/** The content of every file a check reads, by check: equal means a rerun of that check would see nothing new. */
function inputsState(root) {
  const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], { cwd: root, env: ENV }).toString("utf8").split("\0").filter(Boolean).sort();
  const state = {};
  const tree = dependencyTree(WORKSPACE_PACKAGES);
  const reads = { ...CHECK_INPUTS };
  for (const name of tree.keys()) {
    // A package's test reads its package and, through its imports, every package it depends on.
    const closure = [];
    for (let at = name; at !== null; at = tree.get(at)) closure.push(`packages/${at}/`);
    reads[checkName(name)] = (path) => closure.some((dir) => path.startsWith(dir)) || /^(package\.json|pnpm-lock\.yaml|pnpm-workspace\.yaml)$/.test(path);
  }
  for (const [check, reads_] of Object.entries(reads)) {
    const reads = reads_;
    state[check] = files.filter(reads).map((path) => `${path}\0${existsSync(join(root, path)) ? readFileSync(join(root, path)).toString("base64") : "-"}`).join("\n");
  }
  return state;
}

async function replay(name, mode, parent, options) {
  const root = await freshProject(parent, `${name}-${mode}`, options);
  const session = `bench-${name}-${mode}-${process.pid}`;
  const vouch = (args, extra = {}) => step([process.execPath, options.vouch, ...args], { cwd: root, timeoutMs: options.stepTimeoutMs, ...extra });
  if (mode === "hooked") {
    const started = await vouch(["start"]);
    if (started.code !== 0) throw new Error(`vouch start failed:\n${started.stderr}`);
  }
  const seen = {};
  const steps = [];
  const sessionStarted = process.hrtime.bigint();
  try {
    for (const item of SESSIONS[name]) {
      if (item.edit) {
        item.edit(root);
        continue;
      }
      const state = inputsState(root);
      // Redundant: every check it runs already ran on exactly these inputs in this session (then, or before an edit and its revert).
      const redundantChecks = item.forced ? [] : item.checks.filter((check) => seen[check]?.has(state[check]));
      const redundant = redundantChecks.length === item.checks.length;
      for (const check of item.checks) (seen[check] ??= new Set()).add(state[check]);
      const record = { command: item.run, checks: item.checks, redundant, redundantChecks, forced: item.forced === true };
      if (mode === "typed") {
        const ran = await step(SHELL(item.run), { cwd: root, timeoutMs: options.stepTimeoutMs });
        Object.assign(record, { decision: "typed", ms: ran.ms, code: ran.code, ran: item.checks });
      } else {
        const hook = await step([...options.hookProgram, "hook", "claude"], { cwd: root, timeoutMs: options.stepTimeoutMs, input: JSON.stringify(preToolUse(root, item.run, session)) });
        if (hook.code !== 0) throw new Error(`the hook exited ${hook.code}:\n${hook.stderr}`);
        const answer = readDecision(hook.stdout);
        record.hookMs = hook.ms;
        record.decision = answer.decision;
        if (answer.decision === "deny") {
          Object.assign(record, { ms: hook.ms, code: null, ran: [], claimed: /\bFAIL/.test(answer.reason) && !/\bPASS/.test(answer.reason) ? "FAIL" : "PASS" });
        } else {
          const ran = await step(SHELL(answer.command ?? item.run), { cwd: root, timeoutMs: options.stepTimeoutMs });
          // A rewrite's `vouch run … --if-due` says which checks it ran ("vouch: running NAME: …"); as typed, all of them ran.
          const started = [...`${ran.stderr}\n${ran.stdout}`.matchAll(/^vouch: running (\S+):/gm)].map((match) => match[1]);
          Object.assign(record, { ms: hook.ms + ran.ms, runMs: ran.ms, code: ran.code, rewritten: answer.command, ran: answer.command ? item.checks.filter((check) => started.includes(check)) : item.checks });
        }
      }
      steps.push(record);
    }
  } finally {
    if (mode === "hooked") await vouch(["stop"]).catch(() => {});
  }
  return { session: name, mode, wallMs: Number(process.hrtime.bigint() - sessionStarted) / 1e6, steps };
}

/** Joins the two runs of a session step by step. */
function compare(typed, hooked) {
  const rows = typed.steps.map((t, i) => ({ typed: t, hooked: hooked.steps[i] }));
  const problems = [];
  let avoided = 0;
  let redundant = 0;
  let wrongSkips = 0;
  let hookMs = 0;
  let overheadMs = 0;
  let savedMs = 0;
  for (const { typed: t, hooked: h } of rows) {
    hookMs += h.hookMs;
    // Counted by check run: a fan-out is several.
    redundant += t.redundantChecks.length;
    avoided += t.redundantChecks.filter((check) => !h.ran.includes(check)).length;
    if (h.decision === "deny") {
      const typedResult = t.code === 0 ? "PASS" : "FAIL";
      if (h.claimed !== typedResult) {
        wrongSkips += 1;
        problems.push(`${typed.session}: "${t.command}" was denied as ${h.claimed}, but as typed it ${typedResult === "PASS" ? "passed" : `failed (exit ${t.code})`}`);
      }
      savedMs += t.ms - h.ms;
    } else {
      overheadMs += h.ms - t.ms;
      const same = (h.code === 0) === (t.code === 0);
      if (!same) problems.push(`${typed.session}: "${t.command}" exited ${t.code} as typed and ${h.code} through the hook`);
    }
  }
  return { session: typed.session, steps: rows.length, redundant, avoided, wrongSkips, hookMs, overheadMs, savedMs, typedMs: typed.wallMs, hookedMs: hooked.wallMs, problems, rows };
}

const seconds = (ms) => (ms / 1000).toFixed(2);
const pct = (part, whole) => (whole === 0 ? "-" : `${Math.round((100 * part) / whole)} %`);

function render(results) {
  const lines = [
    "| session | commands | redundant check runs | avoided | wrong skips | as typed | through the hook | change | hook processes | overhead on runs let through |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const r of results) {
    lines.push(`| ${r.session} | ${r.steps} | ${r.redundant} | ${r.avoided} (${pct(r.avoided, r.redundant)}) | ${r.wrongSkips} | ${seconds(r.typedMs)} s | ${seconds(r.hookedMs)} s | ${pct(r.hookedMs - r.typedMs, r.typedMs)} | ${seconds(r.hookMs)} s | ${seconds(r.overheadMs)} s |`);
  }
  const total = (key) => results.reduce((sum, r) => sum + r[key], 0);
  lines.push(`| all | ${total("steps")} | ${total("redundant")} | ${total("avoided")} (${pct(total("avoided"), total("redundant"))}) | ${total("wrongSkips")} | ${seconds(total("typedMs"))} s | ${seconds(total("hookedMs"))} s | ${pct(total("hookedMs") - total("typedMs"), total("typedMs"))} | ${seconds(total("hookMs"))} s | ${seconds(total("overheadMs"))} s |`);
  return lines.join("\n");
}

async function main() {
  const options = parseOptions();
  if (!existsSync(options.vouch)) throw new Error(`no vouch build at ${options.vouch}: run \`npm run build\``);
  mkdirSync(join(REPO, ".tmp"), { recursive: true });
  const parent = mkdtempSync(join(REPO, ".tmp", "agent-replay-"));
  // The hook servers the native client starts live here, and are stopped at the end.
  ENV.XDG_RUNTIME_DIR = join(parent, "run");
  mkdirSync(ENV.XDG_RUNTIME_DIR, { mode: 0o700 });
  const client = options.hook === "setup" ? hookClientOf(options.vouch) : null;
  options.hookProgram = client === null ? [process.execPath, options.vouch] : [client, process.execPath, options.vouch];
  const cleanup = () => {
    killAll();
    stopHookServers(ENV.XDG_RUNTIME_DIR);
    if (!options.keep) rmSync(parent, { recursive: true, force: true });
  };
  process.on("SIGINT", () => {
    cleanup();
    process.exit(130);
  });
  try {
    console.log(`agent replay: ${options.names.join(", ")}; evidence ${options.evidence}; hook ${client === null ? "node" : "native client"}; ${availableParallelism()} cores, load ${loadavg()[0].toFixed(2)}; in ${parent}`);
    const results = [];
    for (const name of options.names) {
      const typed = await replay(name, "typed", parent, options);
      const hooked = await replay(name, "hooked", parent, options);
      const result = compare(typed, hooked);
      results.push(result);
      for (const { typed: t, hooked: h } of result.rows) {
        console.log(`  ${name}: ${t.command}  typed ${seconds(t.ms)} s, ${h.decision} ${seconds(h.ms)} s${t.redundant ? " (redundant)" : ""}`);
      }
    }
    console.log("");
    console.log(render(results));
    const problems = results.flatMap((r) => r.problems);
    writeFileSync(options.out, JSON.stringify({ when: new Date().toISOString(), cores: availableParallelism(), evidence: options.evidence, results }, null, 2));
    console.log(`\nJSON: ${options.out}`);
    if (problems.length > 0) {
      console.log(`\nProblems seen:\n  ${problems.join("\n  ")}`);
      process.exitCode = 1;
    }
  } finally {
    cleanup();
  }
}

main().catch((error) => {
  console.error(`agent replay: ${error.message}`);
  process.exit(1);
});
