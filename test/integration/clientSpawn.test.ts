import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { clientSpawner, frame } from '../../src/cli/clientSpawn.js';
import type { SpawnRequest } from '../../src/exec/spawnCheck.js';
import { REPO } from '../helpers/project.js';

/*
 * The server's side of a check the native client starts (src/cli/clientSpawn.ts), over a real
 * unix socket, with this test as the client: what each of the client's answers makes of the run.
 * The real client is in test/e2e/runThroughClient.test.ts; the answers here are the ones it gives
 * only on failures a test cannot bring about (a log it cannot open).
 */

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A connected pair: the server's socket, and the one this test answers on as the client. */
async function pair(): Promise<{ server: Socket; client: Socket }> {
  const dir = mkdtempSync(join(REPO, '.tmp', 'client-spawn-'));
  const path = join(dir, 's.sock');
  const accepted = new Promise<Socket>((resolve) => {
    const listener: Server = createServer(resolve);
    listener.listen(path);
    cleanups.push(() => {
      listener.close();
      rmSync(dir, { recursive: true, force: true });
    });
  });
  const client = createConnection(path);
  const server = await accepted;
  cleanups.push(() => {
    client.destroy();
    server.destroy();
  });
  return { server, client };
}

function request(groups: number[] = []): SpawnRequest {
  return {
    executable: '/bin/true',
    argv: ['true'],
    cwd: '/',
    env: { A: '1' },
    log: { write: () => {}, close: () => null },
    logPath: '/nowhere/run.log',
    stdout: { write: () => {} },
    stderr: { write: () => {} },
    onGroup: (pgid) => groups.push(pgid),
  };
}

/** The client's first frame from the server: the check to start. */
const started = (client: Socket) => new Promise<Buffer>((resolve) => client.once('data', resolve));

describe('clientSpawner', () => {
  it('a log the client cannot open is vouch\'s own failure, before the check: no outcome, so no receipt', async () => {
    const { server, client } = await pair();
    const outcome = clientSpawner(server)(request());
    expect((await started(client)).subarray(0, 1).toString()).toBe('s');
    client.write(frame('l', "cannot open the run's log /nowhere/run.log: Permission denied"));
    await expect(outcome).rejects.toMatchObject({ code: 'state-dir-not-writable', message: expect.stringContaining('/nowhere/run.log') });
  });

  it('a check that could not start is its exit 127, as a spawn error in this process is', async () => {
    const { server, client } = await pair();
    const outcome = clientSpawner(server)(request());
    await started(client);
    client.write(frame('f', 'spawn /bin/true ENOENT'));
    await expect(outcome).resolves.toEqual({ exitCode: 127, signal: null, interruptedBy: null, spawnError: 'spawn /bin/true ENOENT', logFailure: null });
  });

  it('the group, then how the check ended: exit code or signal, the signal forwarded, the log\'s failure', async () => {
    const { server, client } = await pair();
    const groups: number[] = [];
    const outcome = clientSpawner(server)(request(groups));
    await started(client);
    const group = Buffer.alloc(4);
    group.writeUInt32LE(4242);
    const done = Buffer.alloc(16 + 6);
    done.writeInt32LE(-1, 0);
    done.writeUInt32LE(15, 4);
    done.writeUInt32LE(2, 8);
    done.writeUInt32LE(6, 12);
    done.write('ENOSPC', 16);
    // Both in one write: frames split or joined anyhow by the stream are read whole.
    client.write(Buffer.concat([frame('p', group), frame('d', done)]));
    await expect(outcome).resolves.toEqual({ exitCode: null, signal: 'SIGTERM', interruptedBy: 'SIGINT', spawnError: null, logFailure: 'ENOSPC' });
    expect(groups).toEqual([4242]);
  });

  it('a client gone before the check ends fails the run: nothing says how the check ended', async () => {
    const { server, client } = await pair();
    const outcome = clientSpawner(server)(request());
    await started(client);
    client.destroy();
    await expect(outcome).rejects.toThrow(/ended while true ran/);
  });

  it('a client gone before its check was started is refused at once', async () => {
    const { server, client } = await pair();
    client.destroy();
    await new Promise((resolve) => server.once('close', resolve));
    await expect(clientSpawner(server)(request())).rejects.toThrow(/ended before its check started/);
  });
});
