import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadAddon } from '../../src/fs/nativeAddon.js';
import { allowBlockingObserverCalls } from '../../src/observer/callMode.js';
import { callObserver, ObserverUnavailable } from '../../src/observer/client.js';
import { MAX_LINE_BYTES } from '../../src/observer/protocol.js';

/*
 * One observer call, through both transports: the native blocking exchange a
 * one-shot command uses, and node:net, which the observer and the MCP server
 * use. Each must give the same answer, or the same reason for none, whatever
 * the other end does. The other end is a separate process, since a blocking
 * call would stall a server running on this thread.
 */

const dir = mkdtempSync(join(tmpdir(), 'vouch-call-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const servers: ChildProcess[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.kill('SIGKILL');
  allowBlockingObserverCalls(false);
});

/** How the fake observer answers each connection. */
type Behaviour = 'answer' | 'split' | 'silent' | 'close' | 'garbage' | 'other-id' | 'refuse' | 'oversized';

const SERVER = `
const net = require('node:net');
const [socket, behaviour, huge] = process.argv.slice(1);
const server = net.createServer((c) => {
  let buffer = '';
  c.setEncoding('utf8');
  c.on('error', () => {});
  c.on('data', (chunk) => {
    buffer += chunk;
    const end = buffer.indexOf('\\n');
    if (end < 0) return;
    const request = JSON.parse(buffer.slice(0, end));
    const answer = (result) => JSON.stringify({ jsonrpc: '2.0', id: request.id, result }) + '\\n';
    if (behaviour === 'answer') c.write(answer({ echo: request.method, params: request.params, text: 'ünïcode ✓' }));
    if (behaviour === 'split') {
      const line = answer({ echo: request.method, text: 'ünïcode ✓' });
      const bytes = Buffer.from(line);
      // Cut inside a multi-byte character, in pieces that arrive apart.
      const cut = bytes.indexOf(Buffer.from('ü')) + 1;
      c.write(bytes.subarray(0, cut));
      setTimeout(() => c.write(bytes.subarray(cut)), 50);
    }
    if (behaviour === 'close') c.destroy();
    if (behaviour === 'garbage') c.write('this is not json\\n');
    if (behaviour === 'other-id') c.write(JSON.stringify({ jsonrpc: '2.0', id: request.id + 1000, result: {} }) + '\\n');
    if (behaviour === 'refuse') c.write(JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: -32601, message: 'no such method' } }) + '\\n');
    if (behaviour === 'oversized') c.write('x'.repeat(Number(huge)));
  });
});
server.listen(socket, () => process.stdout.write('ready\\n'));
`;

let count = 0;
async function fakeObserver(behaviour: Behaviour): Promise<string> {
  const socket = join(dir, `${++count}.sock`);
  const server = spawn(process.execPath, ['-e', SERVER, socket, behaviour, String(64 * MAX_LINE_BYTES + 4096)], { stdio: ['ignore', 'pipe', 'inherit'] });
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.stdout!.once('data', () => resolve());
    server.once('exit', (code) => reject(new Error(`the fake observer exited ${code}`)));
  });
  return socket;
}

async function outcome(socket: string, deadlineMs = 2_000): Promise<{ result?: unknown; why?: string; message?: string; ms: number }> {
  const started = Date.now();
  try {
    const result = await callObserver(socket, 'info', {}, deadlineMs);
    return { result, ms: Date.now() - started };
  } catch (error) {
    if (!(error instanceof ObserverUnavailable)) throw error;
    return { why: error.why, message: error.message, ms: Date.now() - started };
  }
}

const TRANSPORTS = [
  { name: 'native', blocking: true },
  { name: 'node:net', blocking: false },
];

it('the addon is built here, so the native transport is what gets tested', () => {
  expect(loadAddon()?.callObserver).toBeTypeOf('function');
});

describe.each(TRANSPORTS)('an observer call through $name', ({ blocking }) => {
  const prepare = () => allowBlockingObserverCalls(blocking);

  it('returns the answer, whole and decoded, however it arrives', async () => {
    for (const behaviour of ['answer', 'split'] as const) {
      const socket = await fakeObserver(behaviour);
      prepare();
      const got = await outcome(socket);
      expect(got.why, got.message).toBeUndefined();
      expect(got.result).toMatchObject({ echo: 'info', text: 'ünïcode ✓' });
    }
  });

  it('says "refused" when there is no socket, or nobody listens on it', async () => {
    prepare();
    expect(await outcome(join(dir, 'absent.sock'))).toMatchObject({ why: 'refused', message: expect.stringContaining('ENOENT') });
    const socket = await fakeObserver('answer');
    servers.pop()!.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The socket file is left behind by the killed server.
    expect(await outcome(socket)).toMatchObject({ why: 'refused', message: expect.stringContaining('ECONNREFUSED') });
  });

  it('gives up at the deadline on an observer that never answers', async () => {
    const socket = await fakeObserver('silent');
    prepare();
    const got = await outcome(socket, 300);
    expect(got).toMatchObject({ why: 'timeout', message: 'the observer did not answer "info" within 300 ms' });
    expect(got.ms).toBeGreaterThanOrEqual(290);
    expect(got.ms).toBeLessThan(2_000);
  });

  it('says so when the observer hangs up, talks nonsense, answers another call or refuses', async () => {
    const expected: Array<[Behaviour, string, string]> = [
      ['close', 'error', 'the observer closed the connection before answering "info"'],
      ['garbage', 'protocol', 'the observer sent something that is not JSON'],
      ['other-id', 'protocol', 'the observer answered another request'],
      ['refuse', 'error', 'the observer refused "info": no such method'],
    ];
    for (const [behaviour, why, message] of expected) {
      const socket = await fakeObserver(behaviour);
      prepare();
      expect(await outcome(socket), behaviour).toMatchObject({ why, message });
    }
  });

  it('stops reading an answer past its size limit', async () => {
    const socket = await fakeObserver('oversized');
    prepare();
    expect(await outcome(socket, 10_000)).toMatchObject({ why: 'protocol', message: 'the observer sent an oversized answer' });
  });
});

it('the two transports give the same words for every failure', async () => {
  const words = async (blocking: boolean, behaviour: Behaviour) => {
    const socket = await fakeObserver(behaviour);
    allowBlockingObserverCalls(blocking);
    const got = await outcome(socket, 300);
    return { why: got.why, message: got.message };
  };
  for (const behaviour of ['silent', 'close', 'garbage', 'refuse'] as const) {
    expect(await words(true, behaviour), behaviour).toEqual(await words(false, behaviour));
  }
});
