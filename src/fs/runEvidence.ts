import { lstatSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { compareEvidencePaths, evidenceOf, evidencePath, isSkippedPath, useOf, type Evidence, type EvidenceEntry } from '../core/evidence.js';
import type { CompilerProcess, LookupAnswer, PathFacts } from '../core/runFacts.js';
import type { StatCache } from '../core/statCache.js';
import { nowNs } from '../core/identity.js';
import { CHANGING, EvidenceLooker } from './evidenceLook.js';
import { listingFilterOf } from './listingFilter.js';

export interface RunEvidenceOptions {
  /** The root, as given. */
  root: string;
  /** Never in the evidence: vouch's own state dir, written by other runs meanwhile. */
  stateDir: string;
  statCache: StatCache;
  /** When the check started, in ms since the epoch (Date.now()). */
  startedAt: number;
  /** The check's environment: where npm keeps its logs. */
  env?: NodeJS.ProcessEnv;
}

export interface RunEvidence {
  evidence: Evidence;
  /** Paths the run did not write that changed while it ran: the receipt cannot say what it checked. */
  changedDuringRun: string[];
}

/**
 * The kernel stamps ctime from its coarse clock, up to one tick (at most 10 ms, HZ=100) behind
 * the real time (time(7), "The software clock"): a change made just after the check started can
 * carry a ctime a little before it. The slack makes a change made just before the start count
 * as during the run: a receipt not reusable, never a false CURRENT.
 */
const CLOCK_SLACK_NS = 20_000_000n;

/**
 * Fingerprints a finished run's facts: each path it read, listed or looked up, as it is now.
 *
 * Looking after the run is sound only if nothing else changed those paths while it ran, so a
 * path the run did not write is "changed during the run" when:
 * - what is there now has a ctime after the run started (the kernel sets ctime on every change
 *   and nobody can set it back: a write, a rename onto it, a new link to it), the path's own link
 *   included;
 * - inside the root, a directory on its way there does (a directory swapped for an older one by
 *   two renames, a linked directory retargeted: what the path names now is older than the run,
 *   but it is not what the run read);
 * - it is absent now but the run found it, or present now but the run found nothing there; or a
 *   link the run read now points elsewhere.
 * A path the run wrote is its own: what it left there is the evidence.
 */
export function fingerprintRun(facts: readonly PathFacts[], options: RunEvidenceOptions, compilers: readonly CompilerProcess[] = []): RunEvidence {
  const realRoot = realpathSync.native(options.root);
  const skipped = skippedPrefixes(realRoot, options.stateDir, options.env ?? process.env);
  const looker = new EvidenceLooker(realRoot, options.statCache, nowNs());
  const startedNs = BigInt(options.startedAt) * 1_000_000n - CLOCK_SLACK_NS;
  const entries: EvidenceEntry[] = [];
  const changed: string[] = [];
  const canonical = canonicalPaths();
  // A file written by one name and read by another (through a linked directory, as a package
  // manager's node_modules often is) is the run's own under both.
  const written = new Set<string>();
  for (const fact of facts) if (fact.written) written.add(canonical(fact.path));
  const wayMoved = movedDirectories(realRoot, startedNs, (dir) => written.has(canonical(dir)));
  // A file looked up by one name and read by another (a package through pnpm's links, looked up
  // by the resolver and read at its real path) is bound by its bytes; its size and time, which
  // a reinstall of the same bytes changes, are asked only of files no name of which was read.
  const read = new Set<string>();
  for (const fact of facts) if (useOf(fact) === 'read') read.add(canonical(fact.path));
  const filter = listingFilterOf(facts, compilers, options.env ?? process.env);
  const readDigests = new Map<string, string | undefined>();
  for (const fact of facts) {
    let use = useOf(fact);
    if (use === null || isSkippedPath(fact.path, skipped)) continue;
    const path = evidencePath(fact.path, realRoot);
    if (use === 'listed' && path.startsWith('/') && isSharedScratch(fact.path)) use = 'lookup';
    const own = fact.written === true || written.has(canonical(fact.path));
    const { entry, ctimeNs } = looker.look(path, use, own, use !== 'lookup' || !read.has(canonical(fact.path)), use === 'read' && fact.executed === true, filter.names.get(fact.path));
    entries.push(entry);
    if (filter.configs.has(fact.path)) readDigests.set(fact.path, entry.use === 'read' ? entry.digest : undefined);
    if (entry.type === 'error' && entry.digest === CHANGING) changed.push(path);
    else if (!own && (movedUnderRun(fact, entry, ctimeNs, startedNs) || (bindsState(entry) && wayMoved(fact.path)))) changed.push(path);
  }
  // The listings' filter rests on the configs as read for it: the evidence must bind those bytes.
  for (const [path, digest] of filter.configs) {
    if (readDigests.has(path) && readDigests.get(path) !== digest) changed.push(evidencePath(path, realRoot));
  }
  entries.sort(compareEvidencePaths);
  return { evidence: evidenceOf(entries), changedDuringRun: changed };
}

/**
 * A world-writable directory with the sticky bit (/tmp, /var/tmp: chmod(2), S_ISVTX), outside the
 * root: everyone's scratch space, whose names change all the time. Tools that look for their
 * configuration list every directory above a project (oxlint does), and a listing of /tmp would
 * make every such check STALE for a project under it. Its listing is left out; the files a run
 * reads there are still recorded by their bytes, and the directory by its answer.
 */
function isSharedScratch(path: string): boolean {
  try {
    const mode = lstatSync(path).mode;
    return (mode & 0o1002) === 0o1002 && (mode & 0o170000) === 0o040000;
  } catch {
    return false;
  }
}

/**
 * A path with every link resolved, as it is now; for a path that no longer exists (a file the
 * run removed), its directory's links resolved and the last name as it is. Each path is resolved
 * once: a run's facts ask for most of them several times.
 */
function canonicalPaths(): (path: string) => string {
  const parents = new Map<string, string>();
  const known = new Map<string, string>();
  const real = (path: string): string | null => {
    try {
      return realpathSync.native(path);
    } catch {
      return null;
    }
  };
  const resolve = (path: string): string => {
    const whole = real(path);
    if (whole !== null) return whole;
    if (path === '/') return path;
    const parent = dirname(path);
    let resolved = parents.get(parent);
    if (resolved === undefined) {
      resolved = real(parent) ?? parent;
      parents.set(parent, resolved);
    }
    return `${resolved === '/' ? '' : resolved}/${basename(path)}`;
  };
  return (path) => {
    let canonical = known.get(path);
    if (canonical === undefined) {
      canonical = resolve(path);
      known.set(path, canonical);
    }
    return canonical;
  };
}

/**
 * Whether a directory between the root and a path inside it (the root included) changed since the
 * run started, by lstat: a renamed or retargeted directory, or one whose entries changed. Each
 * directory is asked once. Directories the run itself changed are its own doing.
 */
function movedDirectories(realRoot: string, startedNs: bigint, ownDoing: (dir: string) => boolean): (path: string) => boolean {
  const moved = new Map<string, boolean>();
  const dirMoved = (dir: string): boolean => {
    let answer = moved.get(dir);
    if (answer === undefined) {
      let ctimeNs: bigint | null = null;
      try {
        ctimeNs = lstatSync(dir, { bigint: true, throwIfNoEntry: false })?.ctimeNs ?? null;
      } catch {
        // unreadable now: the path's own look says so
      }
      answer = ctimeNs !== null && ctimeNs >= startedNs && !ownDoing(dir);
      moved.set(dir, answer);
    }
    return answer;
  };
  return (path) => {
    if (path === realRoot || !path.startsWith(`${realRoot}/`)) return false;
    for (let dir = dirname(path); ; dir = dirname(dir)) {
      if (dirMoved(dir)) return true;
      if (dir === realRoot || dir.length <= realRoot.length) return false;
    }
  };
}

/**
 * Whether an entry is bound to more than the kind of thing at its path: a read's bytes, a
 * listing's names, a looked-up file's size and time. What the run saw of those is what is there
 * now only if it has not changed since the start. A lookup bound to its answer alone (a
 * directory, an absent path) is held to the answers below, so a busy directory above the
 * project does not count.
 */
function bindsState(entry: EvidenceEntry): boolean {
  return entry.use !== 'lookup' || (entry.type === 'file' && entry.digest !== undefined);
}

function movedUnderRun(fact: PathFacts, entry: EvidenceEntry, ctimeNs: bigint | null, startedNs: bigint): boolean {
  if (bindsState(entry) && ctimeNs !== null && ctimeNs >= startedNs) return true;
  // A link the run read, now pointing elsewhere.
  if (fact.linkTarget !== undefined && entry.link !== undefined && entry.link !== fact.linkTarget.target) return true;
  const found = foundByRun(fact);
  if (found === null) return false;
  // A dangling link is absent to a lookup that follows links and present to one that does not.
  if (entry.type === 'absent' && entry.link !== undefined) return false;
  if (found !== (entry.type !== 'absent')) return true;
  // A file that became a directory, or the reverse; an answer about a link itself says nothing here.
  const kind = fact.lookup?.answer.kind;
  return entry.link === undefined && (kind === 'file' || kind === 'directory') && (entry.type === 'file' || entry.type === 'directory') && kind !== entry.type;
}

/** Whether the run found something at the path: true, false, or null when the trace does not say. */
function foundByRun(fact: PathFacts): boolean | null {
  // A read or a listing opened the path: it was there.
  if (fact.read !== undefined || fact.listed !== undefined || fact.executed) return true;
  if (fact.linkTarget !== undefined) return true;
  if (fact.lookup !== undefined) return answerFound(fact.lookup.answer);
  return null;
}

function answerFound(answer: LookupAnswer): boolean | null {
  switch (answer.kind) {
    case 'absent':
      return false;
    case 'error':
      return null;
    default:
      return true;
  }
}

/**
 * Left out besides the system's own files: the Node binary running this process (its version
 * is in the context; the rest of its installation, global packages included, is not left out),
 * and vouch's state dir.
 */
function skippedPrefixes(realRoot: string, stateDir: string, env: NodeJS.ProcessEnv): string[] {
  const skipped: string[] = [...npmLogDirs(env)];
  const node = nodeBinary();
  if (node !== null && !isWithin(realRoot, node)) skipped.push(node);
  try {
    skipped.push(realpathSync.native(stateDir));
  } catch {
    // Not there yet: nothing of it can be in the trace.
  }
  return skipped;
}

/**
 * npm writes its own debug log into its logs directory on every command and lists it to remove
 * old ones (https://docs.npmjs.com/cli/v10/using-npm/logging). Every npm command anywhere
 * would otherwise make every check run through npm STALE, and the log never decides a result.
 */
function npmLogDirs(env: NodeJS.ProcessEnv): string[] {
  const dirs = [join(homedir(), '.npm', '_logs')];
  if (env.npm_config_cache) dirs.push(join(env.npm_config_cache, '_logs'));
  if (env.npm_config_logs_dir) dirs.push(env.npm_config_logs_dir);
  const real: string[] = [];
  for (const dir of dirs) {
    try {
      real.push(realpathSync.native(dir));
    } catch {
      real.push(dir);
    }
  }
  return real;
}

let cachedNodeBinary: string | null | undefined;

/** The Node binary, links resolved. */
function nodeBinary(): string | null {
  if (cachedNodeBinary !== undefined) return cachedNodeBinary;
  try {
    cachedNodeBinary = realpathSync.native(process.execPath);
  } catch {
    cachedNodeBinary = null;
  }
  return cachedNodeBinary;
}

function isWithin(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}
