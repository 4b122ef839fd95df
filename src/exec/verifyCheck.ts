import { spawn } from 'node:child_process';
import type { CheckConfig, PackageManagerName } from '../core/config.js';
import { scriptArgv } from '../core/packageManagerGrammar.js';
import { startGroupReaper } from './groupReaper.js';
import { checkPlace } from './checkPlan.js';

/** What one run of a proposed check did (init's VerifyOutcome). */
export interface VerifyRun {
  passed: boolean;
  exitCode: number | null;
  signal: string | null;
  /** Why it did not finish on its own (it could not start, it ran out of time), or null. */
  error: string | null;
  durationMs: number;
  outputHead: string[];
}

/** Output kept from a run: enough for its first lines. */
const KEPT_BYTES = 64 * 1024;
const HEAD_LINES = 10;
const LINE_MAX = 300;

/**
 * Runs a proposed check once, as `vouch run` would spawn it (the same argv,
 * PATH and working directory), but records nothing: `vouch init --verify`
 * only asks whether it passes on the tree as it is. Its own process group,
 * which vouch's death or the time limit ends.
 */
export function verifyCheck(
  root: string,
  check: CheckConfig,
  packageManager: PackageManagerName,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<VerifyRun> {
  const argv = check.script !== undefined ? scriptArgv(packageManager, check.script) : (check.command ?? []);
  // Where and how vouch run spawns it: a check that passes here passes there.
  const { cwd, env: childEnv } = checkPlace(root, check.package, env);
  const started = Date.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    const keep = (chunk: Buffer) => {
      if (kept >= KEPT_BYTES) return;
      chunks.push(chunk.subarray(0, KEPT_BYTES - kept));
      kept += Math.min(chunk.length, KEPT_BYTES - kept);
    };
    let error: string | null = null;
    const reaper = startGroupReaper();
    const child = spawn(argv[0] ?? '', argv.slice(1), { cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const pgid = child.pid;
    if (pgid !== undefined) reaper.arm(pgid);
    const timer = setTimeout(() => {
      error = `still running after ${Math.round(timeoutMs / 1000)} s, so it was stopped`;
      try {
        if (pgid !== undefined) process.kill(-pgid, 'SIGKILL');
      } catch {
        // the group has ended
      }
    }, timeoutMs);
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (spawnError) => {
      error = `cannot start ${argv[0]}: ${spawnError.message}`;
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      reaper.disarm();
      resolve({
        passed: exitCode === 0 && error === null,
        exitCode: error !== null && exitCode === null && signal === null ? null : exitCode,
        signal,
        error,
        durationMs: Date.now() - started,
        outputHead: headLines(Buffer.concat(chunks).toString('utf8')),
      });
    });
  });
}

/** What npm, pnpm and yarn classic print before a script's own output: "> name@1.0.0 test", "> vitest run", "$ jest". */
const PACKAGE_MANAGER_BANNER = /^(> |\$ |yarn run v)/;

/** The first non-blank lines of an output, without terminal escapes, each cut to a readable length. */
export function headLines(text: string): string[] {
  return text
    // oxlint-disable-next-line no-control-regex -- terminal escape sequences (ECMA-48 CSI) are what is removed
    .replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, '')
    .split(/\r?\n|\r/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '')
    .filter((line, index, lines) => !(PACKAGE_MANAGER_BANNER.test(line) && lines.slice(0, index).every((before) => PACKAGE_MANAGER_BANNER.test(before))))
    .slice(0, HEAD_LINES)
    .map((line) => (line.length > LINE_MAX ? `${line.slice(0, LINE_MAX)}…` : line));
}
