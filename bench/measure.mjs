// Runs one process and reports its wall time and peak memory (the largest resident set of the process
// or of any process it started). Peak memory comes from GNU time when it is installed, otherwise from
// polling /proc/<pid>/status VmHWM on Linux, otherwise it is not measured (null).

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const GNU_TIME = "/usr/bin/time";
const POLL_MS = 2;

let cachedMethod;

/** "gnu-time" | "proc-poll" | "none": how peak memory is measured on this machine. */
export function peakMemoryMethod() {
  if (cachedMethod !== undefined) return cachedMethod;
  // BENCH_PEAK_MEMORY=proc-poll (or none) forces a method, to compare them or to test the fallback.
  const forced = process.env.BENCH_PEAK_MEMORY;
  if (forced === "proc-poll" || forced === "none" || forced === "gnu-time") return (cachedMethod = forced);
  cachedMethod = "none";
  if (existsSync(GNU_TIME)) {
    const dir = mkdtempSync(join(tmpdir(), "vouch-bench-time-"));
    const out = join(dir, "rss");
    const probe = spawnSync(GNU_TIME, ["-o", out, "-f", "%M", "true"], { stdio: "ignore" });
    if (probe.status === 0 && /^\d+\s*$/.test(readFileSync(out, "utf8"))) cachedMethod = "gnu-time";
    rmSync(dir, { recursive: true, force: true });
  }
  if (cachedMethod === "none" && existsSync("/proc/self/status")) cachedMethod = "proc-poll";
  return cachedMethod;
}

function childrenOf(pid) {
  const found = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
      if (text) found.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // the process is gone; nothing to add
  }
  return found;
}

function highWaterKb(pid) {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** The largest VmHWM over pid and its descendants, as seen right now. */
function treeHighWaterKb(pid) {
  let peak = 0;
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.pop();
    peak = Math.max(peak, highWaterKb(next));
    queue.push(...childrenOf(next));
  }
  return peak;
}

/**
 * @param {string[]} argv
 * @param {{cwd: string, env?: NodeJS.ProcessEnv}} options
 * @returns {Promise<{ms: number, peak_kb: number | null, code: number | null, signal: string | null, stdout: string, stderr: string}>}
 */
export function measureProcess(argv, { cwd, env = process.env }) {
  const method = peakMemoryMethod();
  let timeDir;
  let command = argv;
  if (method === "gnu-time") {
    timeDir = mkdtempSync(join(tmpdir(), "vouch-bench-time-"));
    command = [GNU_TIME, "-o", join(timeDir, "rss"), "-f", "%M", ...argv];
  }
  return new Promise((resolvePromise, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command[0], command.slice(1), { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    const stdout = [];
    const stderr = [];
    child.stdout.on("data", (chunk) => stdout.push(chunk));
    child.stderr.on("data", (chunk) => stderr.push(chunk));
    let polledKb = 0;
    const poller =
      method === "proc-poll"
        ? setInterval(() => {
            polledKb = Math.max(polledKb, treeHighWaterKb(child.pid));
          }, POLL_MS)
        : undefined;
    child.on("error", (error) => {
      if (poller) clearInterval(poller);
      reject(error);
    });
    child.on("exit", () => {
      // Stamped at exit, before the pipes drain, so the figure is the process's own lifetime.
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (poller) clearInterval(poller);
      child.on("close", (code, signal) => {
        let peakKb = method === "proc-poll" ? polledKb || null : null;
        if (timeDir) {
          const text = existsSync(join(timeDir, "rss")) ? readFileSync(join(timeDir, "rss"), "utf8") : "";
          // GNU time prints "Command exited with non-zero status N" before the figure on failure.
          const last = text.trim().split("\n").pop();
          peakKb = /^\d+$/.test(last ?? "") ? Number(last) : null;
          rmSync(timeDir, { recursive: true, force: true });
        }
        resolvePromise({
          ms,
          peak_kb: peakKb,
          code,
          signal,
          stdout: Buffer.concat(stdout).toString("utf8"),
          stderr: Buffer.concat(stderr).toString("utf8"),
        });
      });
    });
  });
}
