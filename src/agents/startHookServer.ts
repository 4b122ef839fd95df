import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { FAILED_MARK, FULL_MARK, MARK_MS } from './hookSocket.js';

/*
 * Starts a resident hook server (agents/hookServer.ts) for the next calls, once
 * the native client found none at `socket`. Detached and unwaited for, like
 * SessionStart's observer (agents/startObserverDetached.ts): ignored stdio, its
 * own session, unref'd. Its environment is this hook's exactly, which is what
 * the server answers for.
 */
/**
 * V8 flags, not environment variables: the server's environment must stay the caller's. A small
 * young generation and slow heap growth, as the observer daemon runs (observer/launch.ts): a
 * process that lives for many calls keeps what each call leaves behind to a few MB.
 */
function recent(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs < MARK_MS;
  } catch {
    return false;
  }
}

const SERVER_FLAGS = ['--max-semi-space-size=1', '--heap-growing-percent=20'];

export function startHookServer(socket: string, env: NodeJS.ProcessEnv, entry: string | undefined): boolean {
  if (entry === undefined || entry === '') return false;
  // A server that could not be made here, or a directory full of them, a moment ago: not again yet.
  if (recent(`${socket}${FAILED_MARK}`) || recent(join(dirname(socket), FULL_MARK))) return false;
  try {
    const child = spawn(process.execPath, [...SERVER_FLAGS, entry, 'hook', 'serve', socket], { cwd: '/', env, detached: true, stdio: 'ignore' });
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}
