import { readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { processAlive, processStart } from '../fs/processStart.js';
import { ensureStateDir, ensureStateSubdir, notWritable } from '../store/stateDir.js';

export interface LockHolder {
  pid: number;
  runId: string;
  check: string;
  startedAt: number;
  /** The kernel's start time of the process, so a reused pid is not mistaken for the holder. */
  processStart: string | null;
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
): Promise<() => void> {
  // The lock may come before the store: the state dir and its .gitignore are made here too.
  ensureStateDir(stateDir);
  const dir = ensureStateSubdir(stateDir, 'locks');
  const path = join(dir, `${holder.check}.lock`);
  const mine: LockHolder = { ...holder, pid: process.pid, processStart: processStart(process.pid) };
  const text = JSON.stringify(mine);
  let announced = false;
  for (;;) {
    try {
      // O_EXCL: a link planted at the lock's path is never followed (EEXIST), and the lock waits out as unreadable.
      writeFileSync(path, text, { flag: 'wx', mode: 0o600 });
      return () => releaseIfMine(path, text);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw notWritable(stateDir, error);
    }
    const current = readHolder(path);
    if (current === 'gone') continue;
    if (current === 'unreadable' ? halfWrittenLongAgo(path) : !alive(current)) {
      stealFrom(path, current);
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

/** Whether a live process holds the check's lock now. Reads only: it makes no event for a watcher. */
export function runLockHeld(stateDir: string, check: string): boolean {
  const current = readHolder(join(stateDir, 'locks', `${check}.lock`));
  if (current === 'gone') return false;
  return current === 'unreadable' || alive(current);
}

function releaseIfMine(path: string, text: string) {
  try {
    if (readFileSync(path, 'utf8') === text) unlinkSync(path);
  } catch {
    // already gone
  }
}

function readHolder(path: string): LockHolder | 'gone' | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return 'gone';
  }
  try {
    return JSON.parse(text) as LockHolder;
  } catch {
    return 'unreadable';
  }
}

function halfWrittenLongAgo(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > HALF_WRITTEN_GRACE_MS;
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
    writeFileSync(steal, String(process.pid), { flag: 'wx', mode: 0o600 });
  } catch {
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
