// What the workspace and agent-replay benchmarks share: a step in its own process group with a
// timeout, the group killed when the benchmark stops early, and the hook as Claude Code calls it.

import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** Process groups started and not yet closed: killAll() ends them when a benchmark stops early. */
const running = new Set();

export function killGroup(pid) {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

export function killAll() {
  for (const pid of running) killGroup(pid);
}

/** The last lines of a step's output, for an error message. */
export function tail(result) {
  return (result.stderr + result.stdout).trim().split("\n").slice(-8).join("\n");
}

/**
 * Runs argv in its own process group, stdin from `input` (or none), and kills the whole group when it
 * outlives the timeout. Wall time from spawn to exit.
 * @returns {Promise<{ms: number, code: number | null, signal: string | null, stdout: string, stderr: string}>}
 */
export function step(argv, { cwd, timeoutMs, input, env }) {
  return new Promise((resolvePromise, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"], detached: true });
    if (child.pid !== undefined) running.add(child.pid);
    const out = [];
    const err = [];
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.on("data", (c) => err.push(c));
    if (input !== undefined) child.stdin.end(input);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    let ms = 0;
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("exit", () => {
      ms = Number(process.hrtime.bigint() - started) / 1e6;
      clearTimeout(timer);
    });
    child.on("close", (code, signal) => {
      running.delete(child.pid);
      const result = { ms, code, signal, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") };
      if (timedOut) reject(new Error(`${argv.join(" ")} took longer than ${timeoutMs / 1000} s (--step-timeout); killed.\n${tail(result)}`));
      else resolvePromise(result);
    });
  });
}

/** Claude Code's PreToolUse input for its Bash tool (hooks reference, "Common input fields"). */
export function preToolUse(cwd, command, session = "bench") {
  return {
    session_id: session,
    transcript_path: "/home/user/.claude/projects/bench/transcript.jsonl",
    cwd,
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command, description: "Run a check", timeout: 600000, run_in_background: false },
    tool_use_id: "toolu_bench",
  };
}

/** The hook's answer as the host reads it: nothing printed is a pass; JSON is a deny or an updatedInput. */
export function readDecision(stdout) {
  if (stdout.trim() === "") return { decision: "pass", command: null, reason: null };
  const output = JSON.parse(stdout).hookSpecificOutput ?? {};
  if (output.permissionDecision === "deny") return { decision: "deny", command: null, reason: output.permissionDecisionReason ?? "" };
  if (typeof output.updatedInput?.command === "string") return { decision: "rewrite", command: output.updatedInput.command, reason: null };
  if (output.permissionDecision) return { decision: output.permissionDecision, command: null, reason: null };
  throw new Error(`the hook printed an answer the host would not understand: ${stdout.slice(0, 400)}`);
}

/** The native hook client beside an entry script (dist/bin/main.js → build/Release/vouch_hook), or null. */
export function hookClientOf(vouch) {
  const client = join(dirname(dirname(dirname(resolve(vouch)))), "build", "Release", "vouch_hook");
  return process.platform === "linux" && existsSync(client) ? client : null;
}

/** Stops the hook servers whose socket is under dir (their command line is `… hook serve SOCKET`). */
export function stopHookServers(dir) {
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      const at = argv.indexOf("serve");
      if (at > 0 && argv[at - 1] === "hook" && argv[at + 1]?.startsWith(dir)) process.kill(Number(name), "SIGTERM");
    } catch {
      // gone
    }
  }
}
