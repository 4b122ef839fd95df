import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configText, type Json } from '../helpers/answers.js';
import { inProcess, type AsyncProject } from '../helpers/inProcess.js';
import { ObserverTracker, rpcExchange } from '../helpers/observer.js';
import { CLI, cleanEnv, tempProject, type TempProject } from '../helpers/project.js';

/*
 * With an observer up, `vouch run` takes the inputs before the spawn from the observer's answer
 * (a digest, after its barrier) and scans only after the check. What moved while the check ran
 * must still be found: each check below changes one file of its own while it runs, in one way,
 * and its receipt must not be reusable. The runs are in process; the observer is a process.
 */

/** Each mode changes src/MODE.js (or its directory) while the check runs; most put it back. */
const MUTATE = `
const fs = require('fs');
const mode = process.argv[2];
const file = 'src/' + mode + '.js';
const original = fs.existsSync(file) ? fs.readFileSync(file) : null;
switch (mode) {
  case 'nothing':
    fs.readFileSync('src/a.js');
    break;
  case 'rewrite-restore':
    fs.writeFileSync(file, 'export const x = "other";\\n');
    fs.writeFileSync(file, original);
    break;
  case 'same-size-times-back': {
    const { atime, mtime } = fs.statSync(file);
    fs.writeFileSync(file, Buffer.from(original.toString().replace(/1/, '2')));
    fs.writeFileSync(file, original);
    fs.utimesSync(file, atime, mtime);
    break;
  }
  case 'delete-restore':
    fs.unlinkSync(file);
    fs.writeFileSync(file, original);
    break;
  case 'rename-back':
    fs.renameSync(file, file + '.away');
    fs.renameSync(file + '.away', file);
    break;
  case 'chmod-back':
    fs.chmodSync(file, 0o755);
    fs.chmodSync(file, 0o644);
    break;
  case 'symlink-back':
    fs.renameSync(file, 'kept.js');
    fs.symlinkSync('../kept.js', file);
    fs.unlinkSync(file);
    fs.renameSync('kept.js', file);
    break;
  case 'hard-link-outside': {
    // Written through a second name outside the root: no event names the file, its ctime moves.
    const outside = process.env.OUTSIDE + '/linked.js';
    fs.linkSync(file, outside);
    fs.writeFileSync(outside, 'export const x = "other";\\n');
    fs.writeFileSync(outside, original);
    fs.unlinkSync(outside);
    break;
  }
  case 'add':
    fs.writeFileSync('src/added.js', 'export const added = 1;\\n');
    break;
  case 'delete':
    fs.unlinkSync(file);
    break;
  default:
    throw new Error('unknown mode ' + mode);
}
`;

const RESTORED = ['rewrite-restore', 'same-size-times-back', 'delete-restore', 'rename-back', 'chmod-back', 'symlink-back', 'hard-link-outside'];
const MODES = ['nothing', ...RESTORED, 'add', 'delete'];

const observers = new ObserverTracker();
let p: TempProject;
let inside: AsyncProject;
let outside: TempProject;
let env: NodeJS.ProcessEnv;
let socket: string;

/** The manifest the receipts store holds under `digest`, inflated; null when it holds none. */
function storedLines(digest: string): Buffer | null {
  const db = new Database(join(p.root, '.vouch', 'state.db'), { readonly: true });
  try {
    const row = db.prepare('SELECT entries FROM manifests WHERE digest = ?').get(digest) as { entries: Buffer } | undefined;
    return row ? inflateRawSync(row.entries) : null;
  } finally {
    db.close();
  }
}

beforeAll(() => {
  outside = tempProject('run-observed-outside', {});
  env = cleanEnv({ OUTSIDE: outside.root });
  const files: Record<string, string> = {
    'vouch.config.json': configText(MODES.map((mode) => ({ name: mode, kind: 'custom', command: ['node', 'mutate.cjs', mode], env: ['OUTSIDE'] }))),
    'mutate.cjs': MUTATE,
    'src/a.js': 'export const a = 1;\n',
  };
  for (const mode of MODES) files[`src/${mode}.js`] = 'export const x = 1;\n';
  p = tempProject('run-observed', files);
  inside = inProcess(p);
  socket = observers.start(p, [], { env }).socket;
});

afterAll(async () => {
  expect(await observers.cleanup(), 'observers that would not stop').toEqual([]);
  p.remove();
  outside.remove();
});

const STRACE = process.platform === 'linux' && spawnSync('strace', ['-V']).status === 0;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(check: string, args: string[] = []): Promise<Json> {
  // Past the file system clock's tick after the last change: a file changed just before vouch asked counts as changed during the run.
  await sleep(120);
  const ran = await inside.json(['run', check, ...args], { env });
  expect(ran.runs, JSON.stringify(ran)).toHaveLength(1);
  return ran.runs[0];
}

function changedDuringRun(entry: Json): string[] {
  return (entry.receipt?.reasons ?? entry.reasons ?? []).filter((r: Json) => r.code === 'inputs-changed-during-run').map((r: Json) => r.message);
}

describe('vouch run with the observer up', () => {
  it('records a reusable receipt when nothing moved, which status and --if-due then find CURRENT', async () => {
    const entry = await run('nothing');
    expect(entry.action).toBe('ran');
    expect(entry.receipt.reuse_eligible, JSON.stringify(entry)).toBe(true);
    const status = (await inside.json(['status', 'nothing'], { env })).checks[0];
    expect(status).toMatchObject({ freshness: 'CURRENT', result: 'PASS' });
    expect((await inside.json(['status', '--json'], { env })).observation.source).toBe('observer');
    expect((await run('nothing', ['--if-due'])).action).toBe('skipped');
  });

  it.skipIf(!STRACE)('scans nothing itself: no git listing, before the check or after it; without the observer, one each', async () => {
    const gitRuns = async (args: string[]) => {
      await sleep(120);
      const trace = join(outside.root, `execve-${args.length}.txt`);
      const traced = spawnSync('strace', ['-f', '-qq', '-e', 'trace=execve', '-o', trace, process.execPath, CLI, 'run', 'nothing', ...args], { cwd: p.root, env, encoding: 'utf8' });
      expect(traced.status, traced.stderr).toBe(0);
      expect(traced.stderr).toMatch(/nothing PASS/);
      // A successful exec of git: the scan's source listing (fs/sourceFiles.ts).
      return readFileSync(trace, 'utf8').split('\n').filter((line) => /execve\("[^"]*\/git", .*\) = 0$/.test(line)).length;
    };
    expect(await gitRuns([])).toBe(0);
    expect(await gitRuns(['--no-observer'])).toBe(2);
  });

  it('answers a run\'s follow-up: the sources written since it was asked, and stores the manifest the store lacked', async () => {
    await run('nothing');
    await sleep(120);
    const follow = async (since?: number) => {
      const request = { jsonrpc: '2.0', id: 1, method: 'observe', params: { checks: [{ name: 'nothing', inputs: ['**'], installed: ['node_modules/**'] }], mode: 'sync', ...(since === undefined ? {} : { since }) } };
      const answer = await rpcExchange(socket, `${JSON.stringify(request)}\n`);
      expect(answer?.result?.healthy, JSON.stringify(answer)).toBe(true);
      return answer.result.checks[0];
    };
    const since = Date.now();
    const unchanged = await follow(since);
    expect(unchanged).toMatchObject({ written: [], stored: true });
    const original = readFileSync(join(p.root, 'src/a.js'));
    writeFileSync(join(p.root, 'src/a.js'), 'export const a = 2;\n');
    try {
      const plain = await follow();
      expect(plain.written, 'a plain question answers no follow-up').toBeUndefined();
      expect(storedLines(plain.manifestDigest), 'and stores nothing').toBeNull();
      const edited = await follow(since);
      expect(edited.written).toEqual(['src/a.js']);
      expect(edited.manifestDigest).not.toBe(unchanged.manifestDigest);
      expect(edited.stored).toBe(true);
      // Stored as its lines, which hash to the manifest's digest.
      const lines = storedLines(edited.manifestDigest);
      expect(lines).not.toBeNull();
      expect(createHash('sha256').update(lines!).digest('hex')).toBe(edited.manifestDigest);
    } finally {
      writeFileSync(join(p.root, 'src/a.js'), original);
    }
    const restored = await follow(since);
    expect(restored).toMatchObject({ manifestDigest: unchanged.manifestDigest, stored: true, written: ['src/a.js'] });
  });

  it('stores the manifest a run is about to need once it has answered the question before the run, while the check runs', async () => {
    await run('nothing');
    await sleep(120);
    const ask = async (params: Record<string, unknown>) => rpcExchange(socket, `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'observe', params: { checks: [{ name: 'nothing', inputs: ['**'], installed: ['node_modules/**'] }], mode: 'sync', ...params } })}\n`);
    const wrong = await ask({ beforeRun: 'yes' });
    expect(wrong?.error?.code, JSON.stringify(wrong)).toBe(-32602);
    const original = readFileSync(join(p.root, 'src/a.js'));
    writeFileSync(join(p.root, 'src/a.js'), 'export const a = 3;\n');
    try {
      const answer = await ask({ beforeRun: true });
      expect(answer?.result?.healthy, JSON.stringify(answer)).toBe(true);
      const [check] = answer.result.checks;
      expect(check.written, 'no follow-up before the run').toBeUndefined();
      expect(check.stored).toBeUndefined();
      // The answer comes first, then the store: the next question waits for it, so it is stored by then.
      const next = await ask({});
      expect(next.result.checks[0].manifestDigest).toBe(check.manifestDigest);
      const lines = storedLines(check.manifestDigest);
      expect(lines, 'stored after the answer').not.toBeNull();
      expect(createHash('sha256').update(lines!).digest('hex')).toBe(check.manifestDigest);
    } finally {
      writeFileSync(join(p.root, 'src/a.js'), original);
    }
  });

  it.each(RESTORED)('%s: a file changed and put back while the check ran makes its receipt not reusable, and is named', async (mode) => {
    const entry = await run(mode);
    expect(entry.action).toBe('ran');
    expect(entry.receipt.reuse_eligible, JSON.stringify(entry.receipt)).toBe(false);
    // Named alone: no other file counts as changed, so the finding is this mode's.
    expect(changedDuringRun(entry)).toEqual([`inputs changed while the check ran: src/${mode}.js`]);
    const status = (await inside.json(['status', mode], { env })).checks[0];
    expect(status.freshness).toBe('STALE');
  });

  it('a file added while the check ran: not reusable, and named by its ctime', async () => {
    const entry = await run('add');
    expect(entry.receipt.reuse_eligible).toBe(false);
    expect(changedDuringRun(entry)).toEqual(['inputs changed while the check ran: src/added.js']);
    rmSync(`${p.root}/src/added.js`);
  });

  it('a file deleted while the check ran: not reusable; the observer\'s digest cannot name it, a scan before the spawn does', async () => {
    const observed = await run('delete');
    expect(observed.receipt.reuse_eligible).toBe(false);
    expect(changedDuringRun(observed)).toEqual(['inputs changed while the check ran: an input added or removed']);
    writeFileSync(`${p.root}/src/delete.js`, 'export const x = 1;\n');
    const scanned = await run('delete', ['--no-observer']);
    expect(scanned.receipt.reuse_eligible).toBe(false);
    expect(changedDuringRun(scanned)).toEqual(['inputs changed while the check ran: src/delete.js']);
  });
});
