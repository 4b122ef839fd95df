import { spawn } from 'node:child_process';

export interface GroupReaper {
  /** From now on vouch's death kills this process group. */
  arm(pgid: number): void;
  /** The check ended on its own (or never started): the reaper exits without killing anything. */
  disarm(): void;
}

/*
 * Started before the check, and told its group by one write right after the
 * spawn returns: the window in which vouch could die with the check running and
 * the reaper not told is that write, not a fork and exec. The reaper's stdin
 * is a pipe (a socketpair) whose other end only vouch holds: libuv opens it
 * close-on-exec, so the check never inherits it. When vouch dies, by kill -9
 * too, the kernel closes that end, `read` sees EOF and fails, and the reaper
 * kills the check's whole process group. A second line means the check ended
 * on its own. The reaper ignores the signals a terminal or a group kill would
 * send, and lives in its own session, so whatever ends vouch does not end it
 * first. `kill -s KILL -- -PGID` is the POSIX spelling for a group
 * (https://pubs.opengroup.org/onlinepubs/9799919799/utilities/kill.html); dash
 * refuses `kill -9 -- -PGID`.
 */
const SCRIPT = 'trap "" INT TERM HUP; IFS= read -r group || exit 0; IFS= read -r _ || kill -s KILL -- -"$group"';

/**
 * Makes vouch's death reach the check's process group. PR_SET_PDEATHSIG would
 * need a native launcher and reaches only the direct child; the reaper reaches
 * the group, grandchildren included. Best effort: a reaper that cannot start
 * leaves the group recorded in the run lock, which the next run kills.
 */
export function startGroupReaper(): GroupReaper {
  let reaper: ReturnType<typeof spawn>;
  try {
    reaper = spawn('/bin/sh', ['-c', SCRIPT, 'vouch-reaper'], {
      detached: true,
      // No stdout or stderr: the reaper must hold none of the check's pipes, or vouch would wait for it.
      stdio: ['pipe', 'ignore', 'ignore'],
    });
  } catch {
    return { arm: () => {}, disarm: () => {} };
  }
  reaper.on('error', () => {});
  reaper.stdin?.on('error', () => {});
  // Neither the reaper nor its pipe keeps vouch's event loop alive.
  reaper.unref();
  (reaper.stdin as unknown as { unref?(): void } | null)?.unref?.();
  let armed = false;
  return {
    arm(pgid) {
      armed = true;
      reaper.stdin?.write(`${pgid}\n`);
    },
    disarm() {
      // Unarmed, EOF on the first line is enough: there is no group to spare.
      reaper.stdin?.end(armed ? '\n' : '');
    },
  };
}
