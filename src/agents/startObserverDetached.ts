import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CONFIG_FILE } from '../core/config.js';

/*
 * SessionStart: start the checkout's observer, so the session's first
 * questions are answered from a warm index, and return at once.
 *
 * The hook spawns `vouch start` rather than the daemon itself: start already
 * knows to leave a running observer of the same build alone, to replace one
 * of another build, and to wait for the first index. It runs fully detached:
 * ignored stdio (a child holding the host's stdout makes the host wait for it,
 * anthropics/claude-code#43123), its own session (no SIGTTOU/SIGHUP from the
 * host's terminal), and unref'd, so the hook exits without waiting for it.
 */
export function startObserverDetached(cwd: string, env: NodeJS.ProcessEnv, entry: string | undefined): boolean {
  if (entry === undefined || entry === '') return false;
  // No config, nothing to observe: not even a process is spent on it.
  if (!hasConfig(cwd)) return false;
  const child = spawn(process.execPath, [entry, 'start'], { cwd, env, detached: true, stdio: 'ignore' });
  // A spawn failure arrives as an event; unheard, it would crash the hook.
  child.on('error', () => undefined);
  child.unref();
  return true;
}

/** Whether vouch.config.json is in cwd or a directory above it, as `vouch start` will look. */
function hasConfig(cwd: string): boolean {
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (existsSync(join(dir, CONFIG_FILE))) return true;
    if (dirname(dir) === dir) return false;
  }
}
