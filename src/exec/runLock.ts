import { closeSync, constants, lstatSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { bootId, processAlive, processStart } from '../fs/processStart.js';
import { ensureStateDir, ensureStateSubdir, notWritable } from '../store/stateDir.js';

export interface LockHolder {
  pid: number;
  runId: string;
  check: string;
  startedAt: number;
  /** The kernel's start time of the process, so a reused pid is not mistaken for the holder. */
  processStart: string | null;
  /** The check's process group (its leader's pid) once it runs; absent in locks taken before it starts. */
  checkPgid?: number | null;
  /** The kernel's start time of the group's leader, so a reused pid is not mistaken for it. */
  checkStart?: string | null;
  /** The boot the group was recorded in: a lock file a repository carries cannot name it. */
  bootId?: string | null;
}

export interface RunLock {
  /** Records the running check's process group in the holder record, for a run that finds this lock stale. */
  recordGroup(pgid: number): void;
  release(): void;
}

const POLL_MS = 100;
const HALF_WRITTEN_GRACE_MS = 2_000;

/**
 * A per-check run lock: an exclusively created file naming its holder. A lock
 * whose holder is gone is recovered; stealing it takes a second lock file, so
 * two waiters can never both remove it and then both run.
 */
export async function acquireRunLock(
  stateDir: string,
  holder: Omit<LockHolder, 'pid' | 'processStart'>,
  onWait: (current: LockHolder) => void,
): Promise<RunLock> {
  // The lock may come before the store: the state dir and its .gitignore are made here too.
  ensureStateDir(stateDir);
  const dir = ensureStateSubdir(stateDir, 'locks');
  const path = join(dir, lockFileName(holder.check));
  const mine: LockHolder = { ...holder, pid: process.pid, processStart: processStart(process.pid) };
  const text = JSON.stringify(mine);
  // What the file may hold while it is ours: the record as created, and as rewritten with the check's group.
  const ours = [text];
  let announced = false;
  for (;;) {
    try {
      createLockFile(path, text);
      return {
        recordGroup(pgid) {
          const updated = JSON.stringify({ ...mine, checkPgid: pgid, checkStart: processStart(pgid), bootId: bootId() });
          ours.push(updated);
          rewriteLockFile(path, updated);
        },
        release: () => releaseIfMine(path, ours),
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw notWritable(stateDir, error);
    }
    const current = readHolder(path);
    if (current === 'gone') continue;
    if (current === 'unreadable' ? halfWrittenLongAgo(path) : !alive(current)) {
      // Its vouch died; the check it started may still run, and must not run twice.
      if (current !== 'unreadable') killOrphanedCheck(current);
      try {
        stealFrom(path, current);
      } catch (error) {
        throw notWritable(stateDir, error);
      }
      await delay(10);
      continue;
    }
    if (current !== 'unreadable' && !announced) {
      onWait(current);
      announced = true;
    }
    await delay(POLL_MS);
  }
}

/**
 * The lock's file name: a root check's name as it is, a package check's
 * (`@scope/a#test`) with each character outside [A-Za-z0-9._:-] as %XX, so
 * that "/" never makes a path and names stay distinct.
 */
export function lockFileName(check: string): string {
  return `${check.replace(/[^A-Za-z0-9._:-]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)}.lock`;
}

/** Whether a live process holds the check's lock now. Reads only: it makes no event for a watcher. */
export function runLockHeld(stateDir: string, check: string): boolean {
  const current = readHolder(join(stateDir, 'locks', lockFileName(check)));
  if (current === 'gone') return false;
  return current === 'unreadable' || alive(current);
}

/**
 * O_EXCL creates the file or fails, and never follows a link. A lock created
 * but not written (ENOSPC on its first block) is removed, not left behind.
 */
function createLockFile(path: string, text: string) {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    writeSync(fd, text);
  } catch (error) {
    closeSync(fd);
    try {
      unlinkSync(path);
    } catch {
      // the write's error is the one to report
    }
    throw error;
  }
  closeSync(fd);
}

/**
 * Rewrites the holder record in place. It only grows (the same fields and
 * more) and stays within the block it already has, so a full disk cannot
 * refuse it, and no second file can be left behind. A waiter that reads it
 * half-written finds it unreadable, which counts as held. If it fails, the old
 * record stays, and the reaper alone covers the check.
 */
function rewriteLockFile(path: string, text: string) {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_NOFOLLOW);
  } catch {
    return;
  }
  try {
    writeSync(fd, text, 0);
  } catch {
    // the old record stays
  } finally {
    closeSync(fd);
  }
}

/**
 * Ends the process group a dead holder's check ran in, once it is certain to
 * be that group. While its leader lives, the leader's start time must match.
 * Once the leader is gone, any member still found by kill(-pgid, 0) belongs to
 * the recorded group: while the group has a member, no new process can get its
 * number as a pid ("the child process ID also shall not match any active
 * process group ID", https://pubs.opengroup.org/onlinepubs/9799919799/functions/fork.html;
 * Linux keeps the pid allocated while any task refers to it as its group). So
 * a leaderless group of that number is the recorded one, unless the recorded
 * group ended, the pid counter wrapped around to this very number, and that new
 * leader made a group and died too, all between the crash and this run.
 */
function killOrphanedCheck(holder: LockHolder) {
  const pgid = holder.checkPgid;
  if (typeof pgid !== 'number' || !Number.isInteger(pgid) || pgid <= 1) return;
  // A lock file may have come with a cloned repository: only a group recorded on this boot is signalled.
  const boot = bootId();
  if (boot === null || holder.bootId !== boot) return;
  const leaderStart = processStart(pgid);
  let leaderExists = true;
  try {
    process.kill(pgid, 0);
  } catch (error) {
    leaderExists = (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (leaderExists) {
    // A leader that cannot be identified (no /proc, no recorded start) is left alone.
    if (leaderStart === null || !holder.checkStart || leaderStart !== holder.checkStart) return;
  } else {
    try {
      process.kill(-pgid, 0);
    } catch {
      return; // no member left
    }
  }
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // ended meanwhile, or not ours to signal
  }
}

function releaseIfMine(path: string, ours: readonly string[]) {
  try {
    if (ours.includes(readLockText(path))) unlinkSync(path);
  } catch {
    // already gone
  }
}

/** Never through a link (ELOOP): one planted at a lock's path is an unreadable lock, cleared as such. */
function readLockText(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

function readHolder(path: string): LockHolder | 'gone' | 'unreadable' {
  let text: string;
  try {
    text = readLockText(path);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ELOOP' ? 'unreadable' : 'gone';
  }
  try {
    return JSON.parse(text) as LockHolder;
  } catch {
    return 'unreadable';
  }
}

function halfWrittenLongAgo(path: string): boolean {
  try {
    return Date.now() - lstatSync(path).mtimeMs > HALF_WRITTEN_GRACE_MS;
  } catch {
    return false;
  }
}

function alive(holder: LockHolder): boolean {
  return processAlive(holder.pid, holder.processStart);
}

function stealFrom(path: string, seen: LockHolder | 'unreadable') {
  const steal = `${path}.steal`;
  try {
    createLockFile(steal, String(process.pid));
  } catch (error) {
    // Not "someone else is on it" (ENOSPC): retrying would spin for good.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Someone else is recovering it; a stealer that died leaves a file we clear after a while.
    if (halfWrittenLongAgo(steal)) {
      try {
        unlinkSync(steal);
      } catch {
        // raced with another clearer
      }
    }
    return;
  }
  try {
    const again = readHolder(path);
    const same = again === 'unreadable' || seen === 'unreadable' ? again === seen : again !== 'gone' && JSON.stringify(again) === JSON.stringify(seen);
    if (same) unlinkSync(path);
  } finally {
    unlinkSync(steal);
  }
}
