import { closeSync, lstatSync, readdirSync, realpathSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { sha256 } from '../core/digest.js';
import type { EvidenceEntry } from '../core/evidence.js';
import type { InputEntry } from '../core/manifest.js';
import { reason, type Reason } from '../core/reason.js';
import type { TracedRecord } from '../core/receiptBuilder.js';
import type { StatCache } from '../core/statCache.js';
import { fingerprintRun } from '../fs/runEvidence.js';
import { ensureStateSubdir, openStateFile } from '../store/stateDir.js';
import { readTraceLog, tracedArgv, traceAvailability } from './trace/tracer.js';

export { endLeftovers } from './trace/leftovers.js';
export { probeTracingSoon } from './trace/tracer.js';

/** A trace log left by a vouch that died mid-run, of another check, is removed by a later traced run after this long. */
const ABANDONED_LOG_MS = 24 * 60 * 60 * 1000;

/** At most this many files are named in a read-outside-inputs note; the rest are counted. */
const NAMED_OUTSIDE = 5;

export type TracePlan =
  | { traced: true; logPath: string; argv: string[] }
  /** Tracing cannot run here: the declared inputs stand in, and the receipt says why. */
  | { traced: false; record: TracedRecord };

/**
 * Prepares a traced check's run: the tracer's argv around the check's, and a new log for it in
 * the state dir (owner-only, through no link). Tracing is probed once per process.
 */
export function planTrace(stateDir: string, check: string, runId: string, executable: string, argv: readonly string[]): TracePlan {
  const availability = traceAvailability();
  if (!availability.available) {
    return { traced: false, record: { kind: 'fallback', note: reason('trace-unavailable', `not traced, so its declared inputs stand in: ${availability.message}`) } };
  }
  const dir = ensureStateSubdir(stateDir, 'traces');
  // Named by the check, whose lock the caller holds: any other log of it is a dead run's.
  const prefix = `${sha256(check).slice(0, 16)}-`;
  removeAbandoned(dir, prefix);
  const logPath = join(dir, `${prefix}${runId}.trace`);
  closeSync(openStateFile(logPath, 'exclusive', stateDir));
  // The resolved executable, as the untraced spawn runs it: strace would otherwise look it up again.
  return { traced: true, logPath, argv: tracedArgv([executable, ...argv.slice(1)], logPath, availability.strace) };
}

/**
 * Waits, at most a few tens of milliseconds, until the root's last change is older than the clock
 * slack with which the run's evidence tells a change made while it ran (fs/runEvidence.ts). vouch
 * makes its state dir in the root just before the first run of a project, and a check that lists
 * the root would otherwise find that change held against it.
 */
export async function settleRoot(root: string, slackMs = 25): Promise<void> {
  let ctimeMs: number;
  try {
    ctimeMs = lstatSync(root).ctimeMs;
  } catch {
    return;
  }
  const wait = Math.ceil(ctimeMs + slackMs - Date.now());
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(wait, slackMs)));
}

export interface TraceFinish {
  root: string;
  stateDir: string;
  statCache: StatCache;
  startedAt: number;
  env: NodeJS.ProcessEnv;
  /** The declared inputs after the run: which reads they would have missed. */
  declared: readonly InputEntry[];
}

/**
 * Reads a finished run's trace into its evidence. A trace that never started the check, or that
 * is incomplete, is a fallback with a reason, never evidence of "read nothing".
 */
export async function finishTrace(plan: Extract<TracePlan, { traced: true }>, finish: TraceFinish): Promise<{ record: TracedRecord; entries: EvidenceEntry[] | null }> {
  try {
    const read = await readTraceLog(plan.logPath, realpathSync.native(finish.root));
    if (!read.started) return fallback('trace-incomplete', 'the tracer did not start the check (see its log)');
    if (read.facts.kind === 'overflow') return fallback('trace-incomplete', `the trace is incomplete (${read.facts.detail})`);
    const { evidence, changedDuringRun } = fingerprintRun(read.facts.paths, finish, read.facts.compilers);
    const notes: Reason[] = [];
    const note = readOutsideNote(evidence.entries, finish.declared);
    if (note) notes.push(note);
    return { record: { kind: 'traced', digest: evidence.digest, count: evidence.entries.length, changedDuringRun, notes }, entries: evidence.entries };
  } finally {
    try {
      unlinkSync(plan.logPath);
    } catch {
      // removed later by removeAbandoned
    }
  }
}

function fallback(code: 'trace-incomplete', why: string): { record: TracedRecord; entries: null } {
  return { record: { kind: 'fallback', note: reason(code, `${why}, so its declared inputs stand in`) }, entries: null };
}

/**
 * Files the run read (not its own) that its declared inputs miss: inside the root, named, since
 * the user could add them; outside it, counted, since no glob can.
 */
function readOutsideNote(entries: readonly EvidenceEntry[], declared: readonly InputEntry[]): Reason | null {
  const paths = new Set(declared.map((entry) => entry.path));
  const inside: string[] = [];
  let outsideRoot = 0;
  for (const entry of entries) {
    if (entry.use !== 'read' || entry.own || entry.type !== 'file' || paths.has(entry.path) || isGitOwn(entry.path)) continue;
    if (entry.path.startsWith('/')) outsideRoot++;
    else inside.push(entry.path);
  }
  if (inside.length === 0) return null;
  const named = inside.slice(0, NAMED_OUTSIDE).join(', ');
  const more = inside.length > NAMED_OUTSIDE ? ` and ${inside.length - NAMED_OUTSIDE} more` : '';
  const beyond = outsideRoot === 0 ? '' : `; and ${outsideRoot} file${outsideRoot === 1 ? '' : 's'} outside the root`;
  return reason('read-outside-inputs', `the run read ${inside.length} file${inside.length === 1 ? '' : 's'} in the root that its declared inputs do not match, which tracing covers: ${named}${more}${beyond}`);
}

/** git's own files (.git/info/exclude, read by linters that honour it): no glob may name them. */
function isGitOwn(path: string): boolean {
  return path === '.git' || path.startsWith('.git/');
}

function removeAbandoned(dir: string, ours: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const now = Date.now();
  for (const name of names) {
    if (!name.endsWith('.trace')) continue;
    try {
      if (name.startsWith(ours) || now - statSync(join(dir, name)).mtimeMs > ABANDONED_LOG_MS) unlinkSync(join(dir, name));
    } catch {
      // gone already
    }
  }
}
