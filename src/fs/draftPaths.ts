import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { Claim, Draft } from '../core/claim.js';
import { ClaimError } from '../core/claimError.js';
import { processAlive } from './processStart.js';

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/**
 * A draft path as the one workspace-relative, '/'-separated spelling, or a
 * claimant/refused error naming the member. Checked lexically, before any
 * file is touched: what a path names must not depend on what is on disk.
 * Backslashes are refused even on POSIX, where they are legal in names,
 * because the same claim on Windows would name a different file.
 */
export function containDraftPath(path: unknown, member: string): string {
  const refuse = (why: string): never => {
    throw new ClaimError('claimant', 'refused', `${member} ${why}`);
  };
  if (typeof path !== 'string') return refuse('must be a string');
  const shown = JSON.stringify(path);
  if (path === '') return refuse('is empty; name a file relative to the workspace');
  if (path.includes('\0')) return refuse(`holds a NUL byte: ${shown}`);
  if (CONTROL_CHARACTERS.test(path)) return refuse(`holds a control character: ${shown}`);
  if (path.includes('\\')) return refuse(`holds a backslash: ${shown}; separate directories with "/"`);
  if (path.startsWith('/')) return refuse(`is absolute: ${shown}; name it relative to the workspace`);
  if (/^[A-Za-z]:/.test(path)) return refuse(`names a drive: ${shown}; name it relative to the workspace`);
  const segments = path.split('/');
  if (segments.some((segment) => segment === '')) return refuse(`has an empty segment (a doubled or trailing "/"): ${shown}`);
  // Walk the segments rather than trust normalize() alone: `a/../../b` must be refused, not folded to `../b` and then judged.
  let depth = 0;
  for (const segment of segments) {
    if (segment === '..') depth -= 1;
    else if (segment !== '.') depth += 1;
    if (depth < 0) return refuse(`leaves the workspace: ${shown}`);
  }
  const normal = posix.normalize(path);
  if (normal === '.' || depth === 0) return refuse(`names the workspace itself, not a file: ${shown}`);
  return normal;
}

/** Every path in a claim, contained and canonical; each refusal names its member (e.g. `case.drafts[2].path`). */
export function containClaimPaths(claim: Claim): Claim {
  const drafts = (list: readonly Draft[], member: string): Draft[] =>
    list.map((draft, index) => ({ path: containDraftPath(draft.path, `${member}[${index}].path`), text: draft.text }));
  return {
    case: {
      drafts: drafts(claim.case.drafts, 'case.drafts'),
      test: { path: containDraftPath(claim.case.test.path, 'case.test.path'), text: claim.case.test.text },
    },
    control: { ...claim.control, drafts: drafts(claim.control.drafts, 'control.drafts') },
    project: containDraftPath(claim.project, 'project'),
  };
}

/**
 * Creates `path` (contained, relative to `workspace`) holding `text`, never
 * through a symbolic link and never over an existing file. Each parent under
 * the workspace is lstat'ed, so a link planted in the workspace cannot steer
 * the write outside it; missing parents are made one at a time so each new
 * one is known to be a real directory. The 'wx' flag (O_CREAT|O_EXCL) refuses
 * an existing file and a link in the last component, atomically. A link swapped
 * in between the lstat and the open remains possible; that needs a hostile
 * process racing vouch, which is outside what this guards.
 */
export function createExclusive(workspace: string, path: string, text: string, member = 'path'): string {
  const relative = containDraftPath(path, member);
  const segments = relative.split('/');
  let current = workspace;
  for (const segment of segments.slice(0, -1)) {
    current = join(current, segment);
    let stat;
    try {
      stat = lstatSync(current);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      mkdirSync(current);
      continue;
    }
    if (stat.isSymbolicLink()) {
      throw new ClaimError('workspace', 'refused', `${member} "${relative}" crosses the symbolic link ${current}; vouch writes only through real directories`);
    }
    if (!stat.isDirectory()) {
      throw new ClaimError('workspace', 'refused', `${member} "${relative}" runs through ${current}, which is not a directory`);
    }
  }
  const target = join(workspace, relative);
  try {
    writeFileSync(target, text, { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new ClaimError('workspace', 'refused', `${member} "${relative}" already exists at ${target}; vouch never overwrites a file`);
    }
    throw error;
  }
  return target;
}

/** `<name>.vouch-<pid>-<random>.<ext>`: the pid says whose it is; the marker says it is vouch's to sweep. */
const LEFTOVER = /^(.+)\.vouch-([1-9][0-9]{0,9})-([0-9a-f]{12})\.([A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*)$/;

/** A name for a file vouch leaves behind, so a later start can tell it is vouch's and whether its owner is gone. */
export function leftoverName(name: string, ext: string, pid = process.pid): string {
  const fileName = `${name}.vouch-${pid}-${randomBytes(6).toString('hex')}.${ext}`;
  // A name the sweep would not recognise would be left behind for good.
  if (name.includes('/') || leftoverPid(fileName) === null) throw new Error(`vouch cannot name a leftover "${name}" . "${ext}" for pid ${pid}`);
  return fileName;
}

/** The pid a leftover's name records, or null when the name is not vouch's. */
export function leftoverPid(fileName: string): number | null {
  const match = LEFTOVER.exec(fileName);
  return match === null ? null : Number(match[2]);
}

/**
 * Removes, from `dir` alone (not below it), the regular files that carry
 * vouch's marker and whose pid no longer runs. A live pid's file may be in
 * use; anything without the marker is not vouch's. A reused pid keeps a dead
 * owner's file for now, which errs on the side of keeping.
 */
export function sweepLeftovers(dir: string): string[] {
  const removed: string[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return removed;
    throw error;
  }
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const pid = leftoverPid(entry.name);
    if (pid === null || processAlive(pid, null)) continue;
    try {
      unlinkSync(join(dir, entry.name));
      removed.push(entry.name);
    } catch (error) {
      // Another start swept it first; that is the outcome wanted.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return removed;
}
