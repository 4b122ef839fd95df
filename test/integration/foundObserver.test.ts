import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { processStart } from '../../src/fs/processStart.js';
import { findObserver } from '../../src/observer/client.js';
import { observerFiles } from '../../src/observer/observerFiles.js';

/*
 * findObserver decides which socket status, run and the hook send a check's definition to. A cloned
 * repository may carry its state dir: the observer directory with the umask's modes, a record naming
 * a live process, and a link where the socket goes. None of that may make a client connect.
 */

const dir = mkdtempSync(join(tmpdir(), 'vouch-found-'));
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CONFIG = '/somewhere/vouch.config.json';

async function listen(socket: string): Promise<void> {
  const server = createServer();
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  chmodSync(socket, 0o600);
}

/** A state dir as a checkout makes it (mode 0755), with a record naming this live process and the natural socket path. */
function stateDir(name: string) {
  const state = join(dir, name);
  const files = observerFiles(state, CONFIG);
  mkdirSync(files.dir, { recursive: true, mode: 0o755 });
  chmodSync(state, 0o755);
  chmodSync(files.dir, 0o755);
  writeFileSync(files.record, JSON.stringify({ schema: 1, pid: process.pid, processStart: processStart(process.pid), socket: files.socket, configPath: CONFIG, stateDir: state }));
  return files;
}

describe('findObserver: the socket a client sends a check to', () => {
  it('is the observer’s own socket at the natural path', async () => {
    const files = stateDir('own');
    await listen(files.socket);
    expect(findObserver(files.stateDir, CONFIG)?.record.socket).toBe(files.socket);
  });

  it('is never a link a repository checked out there, nor a socket others may use', async () => {
    const elsewhere = join(dir, 'elsewhere.sock');
    await listen(elsewhere);
    const linked = stateDir('linked');
    symlinkSync(elsewhere, linked.socket);
    expect(findObserver(linked.stateDir, CONFIG)).toBeNull();

    const open = stateDir('open');
    await listen(open.socket);
    chmodSync(open.socket, 0o777);
    expect(findObserver(open.stateDir, CONFIG)).toBeNull();

    // A plain file where the socket goes: git can check out that as well.
    const file = stateDir('file');
    writeFileSync(file.socket, '');
    chmodSync(file.socket, 0o600);
    expect(findObserver(file.stateDir, CONFIG)).toBeNull();
  });
});
