import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readlinkSync, realpathSync, unlinkSync, writeFileSync, type Stats } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import type { Claim, Draft } from '../core/claim.js';
import { ClaimError } from '../core/claimError.js';
import { isInside } from '../core/pathInside.js';

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
 * Refuses a claim path whose real location leaves the workspace: each
 * existing prefix of `path` (every parent, and the file itself when it
 * exists) is resolved, and one that resolves outside the workspace's real
 * path names the symbolic link that leads there. A link that stays inside is
 * allowed (a monorepo's linked package, say). A dangling link is refused:
 * where it would lead cannot be known until something creates its target.
 * The lexical check (containDraftPath) must have passed first.
 */
export function containDraftPathOnDisk(workspace: string, path: string, member: string): void {
  const realRoot = realpathSync(workspace);
  const refuse = (link: string, where: string): never => {
    let points = '';
    try {
      points = ` (-> ${readlinkSync(link)})`;
    } catch {
      // Gone since the lstat; the refusal stands on what was seen.
    }
    throw new ClaimError('workspace', 'refused', `${member} "${path}" crosses the symbolic link ${link}${points}, which ${where}; vouch judges and sweeps only files inside the workspace ${realRoot}: name a path without the link, or remove it`);
  };
  let current = workspace;
  for (const segment of path.split('/')) {
    current = join(current, segment);
    let stat: Stats;
    try {
      stat = lstatSync(current);
    } catch (error) {
      // Nothing below a missing entry (or below a file) exists to lead anywhere.
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      // Unreadable (EACCES, say): where the path leads cannot be known, so it is not judged.
      throw new ClaimError('workspace', 'refused', `${member} "${path}" runs through ${current}, which vouch cannot look at (${code ?? String(error)}); vouch judges only paths it can follow inside the workspace`);
    }
    if (!stat.isSymbolicLink()) continue;
    let real: string;
    try {
      real = realpathSync(current);
    } catch (error) {
      return refuse(current, `cannot be resolved (${(error as NodeJS.ErrnoException).code ?? String(error)}: a dangling link or a loop)`);
    }
    if (!isInside(realRoot, real)) refuse(current, `leads to ${real}, outside the workspace`);
  }
}

/** The same on every path in a claim (already contained by containClaimPaths); the refusal names its member. */
export function containClaimPathsOnDisk(workspace: string, claim: Claim): void {
  claim.case.drafts.forEach((draft, index) => containDraftPathOnDisk(workspace, draft.path, `case.drafts[${index}].path`));
  containDraftPathOnDisk(workspace, claim.case.test.path, 'case.test.path');
  claim.control.drafts.forEach((draft, index) => containDraftPathOnDisk(workspace, draft.path, `control.drafts[${index}].path`));
  containDraftPathOnDisk(workspace, claim.project, 'project');
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

/** The directory a sweep works in, reached from the workspace's real path without crossing a link. */
interface SweptDirectory {
  /** The absolute path spelled from the workspace's real path: what realpath must answer for it. */
  path: string;
  dev: number;
  ino: number;
}

/**
 * Walks from the workspace's real path down `dir` one component at a time,
 * with lstat: a link, a non-directory or a missing entry anywhere ends the
 * walk with null, so the sweep never reaches through a link. The walk is then
 * confirmed by realpath, which sees a link swapped in for a component already
 * walked.
 */
function walkToSweep(realRoot: string, segments: readonly string[]): SweptDirectory | null {
  let current = realRoot;
  let stat = lstatSync(realRoot);
  for (const segment of segments) {
    current = join(current, segment);
    try {
      stat = lstatSync(current);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw error;
    }
    if (stat.isSymbolicLink() || !stat.isDirectory()) return null;
  }
  const found = { path: current, dev: stat.dev, ino: stat.ino };
  return unchanged(found) ? found : null;
}

/** Whether `dir` is still the directory walked: its path resolves to itself (no link on the way) and names the same inode. */
function unchanged(dir: SweptDirectory): boolean {
  try {
    const stat = lstatSync(dir.path);
    return realpathSync(dir.path) === dir.path && stat.isDirectory() && stat.dev === dir.dev && stat.ino === dir.ino;
  } catch {
    return false;
  }
}

/**
 * Removes, from `dir` alone (not below it), the regular files that carry
 * vouch's marker and whose pid no longer runs. A live pid's file may be in
 * use; anything without the marker is not vouch's. A reused pid keeps a dead
 * owner's file for now, which errs on the side of keeping.
 *
 * `dir` must lie inside `workspace`, and it is reached from the workspace's
 * real path without following a link (walkToSweep): a directory that is, or
 * runs through, a link is not swept at all, wherever it leads. Only a file
 * with one link is removed: a leftover-shaped name with a second hard link
 * may be another name of a file outside the workspace, and unlinking ours
 * would still change that file (its link count and ctime), so it is left.
 *
 * What remains: Node has no unlinkat(2) on a directory descriptor, so each
 * unlink goes by path. The directory is re-checked (realpath and inode)
 * before every unlink, which leaves a window of a few system calls in which
 * a process racing vouch could swap a component for a link. Closing it takes
 * openat/unlinkat (https://man7.org/linux/man-pages/man2/unlinkat.2.html).
 */
export function sweepLeftovers(dir: string, workspace: string, alive: (pid: number) => boolean): string[] {
  const removed: string[] = [];
  const realRoot = realpathSync(workspace);
  const rel = relative(workspace, dir);
  if (!isInside(workspace, dir)) {
    throw new ClaimError('instrument', 'refused', `vouch will not sweep ${dir}: it is outside the workspace ${workspace}`);
  }
  const target = walkToSweep(realRoot, rel === '' ? [] : rel.split(sep));
  if (target === null) return removed;
  let entries;
  try {
    entries = readdirSync(target.path, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return removed;
    throw error;
  }
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const pid = leftoverPid(entry.name);
    if (pid === null || alive(pid)) continue;
    const file = join(target.path, entry.name);
    try {
      const stat = lstatSync(file);
      if (!stat.isFile() || stat.nlink !== 1) continue;
      if (!unchanged(target)) return removed;
      unlinkSync(file);
      removed.push(entry.name);
    } catch (error) {
      // Another start swept it first; that is the outcome wanted.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return removed;
}
