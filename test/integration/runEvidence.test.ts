import { spawnSync } from 'node:child_process';
import { chmodSync, linkSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evidenceOf, type EvidenceEntry } from '../../src/core/evidence.js';
import type { PathFacts } from '../../src/core/runFacts.js';
import { MemoryStatCache } from '../../src/core/statCache.js';
import { finishTrace } from '../../src/exec/traceRun.js';
import { runTraced } from '../../src/exec/trace/tracer.js';
import { executableIdentity } from '../../src/exec/resolveExecutable.js';
import { fingerprintRun } from '../../src/fs/runEvidence.js';
import { verifyEvidence } from '../../src/fs/verifyEvidence.js';

/*
 * A traced run's evidence over real files and real traced processes: what fingerprintRun keeps
 * after a run, what it holds against the run (changes made while it ran by anyone else), and
 * what verifyEvidence sees change later. Skipped where strace is missing (CI installs it).
 */

const STRACE = process.platform === 'linux' && spawnSync('strace', ['-V']).status === 0;
const TITLE = STRACE ? 'evidence of traced runs' : 'evidence of traced runs (SKIPPED: strace is not on PATH; apt-get install strace)';

let dir: string;
let logs: string;

beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'vouch-evidence-')));
  logs = join(dir, 'logs');
  mkdirSync(logs);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function project(name: string, files: Record<string, string>): string {
  const root = join(dir, name);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  mkdirSync(join(root, '.vouch'), { recursive: true });
  return root;
}

async function traceFacts(root: string, script: string, during?: () => void): Promise<{ facts: PathFacts[]; startedAt: number }> {
  writeFileSync(join(root, 'script.cjs'), script);
  // What the test set up is older than the run, as a project's files are: a change within the
  // clock's slack before the start counts as made during the run.
  await new Promise((resolve) => setTimeout(resolve, 40));
  const startedAt = Date.now();
  const running = runTraced({ argv: [process.execPath, 'script.cjs'], cwd: root, logDir: logs });
  if (during) setTimeout(during, 400);
  const run = await running;
  if (!run.traced) throw new Error(`not traced: ${run.refusal.message}`);
  expect(run.exitCode, run.stderr).toBe(0);
  if (run.facts.kind !== 'facts') throw new Error(`incomplete: ${run.facts.detail}`);
  return { facts: run.facts.paths, startedAt };
}

function fingerprint(root: string, facts: PathFacts[], startedAt: number, statCache = new MemoryStatCache()) {
  return fingerprintRun(facts, { root, stateDir: join(root, '.vouch'), statCache, startedAt, env: {} });
}

const byPath = (entries: readonly EvidenceEntry[]) => new Map(entries.map((entry) => [entry.path, entry]));

describe.skipIf(!STRACE)(TITLE, () => {
  it('keeps what the run read, listed and looked up, inside and outside the root, and leaves the system and the state dir out', async () => {
    const outside = join(dir, 'outside.txt');
    writeFileSync(outside, 'outside');
    const root = project('kinds', { 'src/a.ts': 'a', '.env': 'SECRET=1', 'listed/x': '', '.vouch/state.db': 'not read by the check' });
    symlinkSync('src/a.ts', join(root, 'alias'));
    const { facts, startedAt } = await traceFacts(
      root,
      `const fs = require('node:fs');
fs.readFileSync('src/a.ts'); fs.readFileSync('.env'); fs.readFileSync(${JSON.stringify(outside)});
fs.readdirSync('listed'); fs.existsSync('src/b.ts'); fs.readlinkSync('alias'); fs.statSync('.vouch/state.db');
fs.readFileSync('/proc/self/status');`,
    );
    const { evidence, changedDuringRun } = fingerprint(root, facts, startedAt);
    const at = byPath(evidence.entries);
    expect(changedDuringRun).toEqual([]);
    expect(at.get('src/a.ts')).toMatchObject({ use: 'read', type: 'file' });
    expect(at.get('src/a.ts')?.digest).toMatch(/^[0-9a-f]{64}$/);
    // Ignored or not, tracked or not, a read is a read.
    expect(at.get('.env')).toMatchObject({ use: 'read', type: 'file' });
    expect(at.get(outside)).toMatchObject({ use: 'read', type: 'file' });
    expect(at.get('listed')).toMatchObject({ use: 'listed', type: 'directory' });
    expect(at.get('src/b.ts')).toEqual({ path: 'src/b.ts', use: 'lookup', type: 'absent' });
    expect(at.get('alias')).toMatchObject({ use: 'lookup', link: 'src/a.ts', type: 'file' });
    const paths = [...at.keys()];
    expect(paths.filter((path) => path.startsWith('/proc') || path.startsWith('/usr') || path.startsWith('/dev'))).toEqual([]);
    expect(paths.filter((path) => path.startsWith('.vouch'))).toEqual([]);
    expect(evidence.digest).toBe(evidenceOf(evidence.entries).digest);
  });

  it('holds a file the run only stat-ed, changed while the run ran, against it: a tool that trusts stat decided on what it saw then', async () => {
    const root = project('stat-during', { 'src/x.ts': 'x' });
    const { facts, startedAt } = await traceFacts(
      root,
      `const fs = require('node:fs'); fs.statSync('src/x.ts');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1200);`,
      () => writeFileSync(join(root, 'src/x.ts'), 'changed after the stat, with another size'),
    );
    const { evidence, changedDuringRun } = fingerprint(root, facts, startedAt);
    expect(byPath(evidence.entries).get('src/x.ts')).toMatchObject({ use: 'lookup', type: 'file' });
    expect(changedDuringRun).toContain('src/x.ts');
  });

  it('holds a directory swapped by two renames, or a linked directory retargeted, while the run ran against it: what the path names now is older than the run', async () => {
    const root = project('swapped', { 'cfg/app.json': 'first', 'cfg-next/app.json': 'next', 'v1/index.js': 'one', 'v2/index.js': 'two' });
    symlinkSync('v1', join(root, 'pkg'));
    await new Promise((resolve) => setTimeout(resolve, 40));
    const { facts, startedAt } = await traceFacts(
      root,
      `const fs = require('node:fs');
fs.readFileSync('cfg/app.json'); fs.readFileSync('pkg/index.js');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1200);`,
      () => {
        renameSync(join(root, 'cfg'), join(root, 'cfg-previous'));
        renameSync(join(root, 'cfg-next'), join(root, 'cfg'));
        unlinkSync(join(root, 'pkg'));
        symlinkSync('v2', join(root, 'pkg'));
      },
    );
    const { changedDuringRun } = fingerprint(root, facts, startedAt);
    expect(changedDuringRun).toEqual(expect.arrayContaining(['cfg/app.json', 'pkg/index.js']));
  });

  it("counts a file written through a linked directory and read through its real path as the run's own, not as moved under it", async () => {
    const root = project('alias', { 'real/keep.txt': '' });
    symlinkSync('real', join(root, 'linked'));
    const { facts, startedAt } = await traceFacts(
      root,
      `const fs = require('node:fs');
fs.writeFileSync('linked/cache.json', '{"n":1}');
fs.readFileSync(fs.realpathSync('linked/cache.json'));
fs.unlinkSync('linked/cache.json');`,
    );
    const { evidence, changedDuringRun } = fingerprint(root, facts, startedAt);
    expect(changedDuringRun).toEqual([]);
    expect(byPath(evidence.entries).get('real/cache.json')).toMatchObject({ own: true, type: 'absent' });
  });

  it('holds a change made by another process while the run ran against the run: a file it read, and one appearing where it found nothing', async () => {
    const root = project('moved', { 'input.txt': 'before' });
    const { facts, startedAt } = await traceFacts(
      root,
      `const fs = require('node:fs');
fs.readFileSync('input.txt'); fs.existsSync('later.txt');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1200);`,
      () => {
        writeFileSync(join(root, 'input.txt'), 'during');
        writeFileSync(join(root, 'later.txt'), 'appeared');
      },
    );
    const { changedDuringRun } = fingerprint(root, facts, startedAt);
    // The root's entries changed too (later.txt): everything read below it is doubtful as well.
    expect(changedDuringRun).toEqual(expect.arrayContaining(['input.txt', 'later.txt', 'script.cjs']));
  });

  it("does not hold the run's own cache against it: written, then read, then compared with what it left", async () => {
    const root = project('cache', {});
    const script = `const fs = require('node:fs');
fs.mkdirSync('node_modules/.cache/tool', { recursive: true });
let seen = ''; try { seen = fs.readFileSync('node_modules/.cache/tool/state', 'utf8'); } catch {}
fs.writeFileSync('node_modules/.cache/tool/state', 'run ' + (seen.length + 1));`;
    await traceFacts(root, script);
    // The second run reads the cache the first left before writing it again.
    const { facts, startedAt } = await traceFacts(root, script);
    const statCache = new MemoryStatCache();
    const { evidence, changedDuringRun } = fingerprint(root, facts, startedAt, statCache);
    expect(changedDuringRun).toEqual([]);
    expect(byPath(evidence.entries).get('node_modules/.cache/tool/state')).toMatchObject({ use: 'read', own: true, type: 'file' });
    expect(verifyEvidence(root, evidence.entries, statCache).changes).toEqual([]);
    writeFileSync(join(root, 'node_modules/.cache/tool/state'), 'someone else');
    expect(verifyEvidence(root, evidence.entries, statCache).changes.map((change) => change.path)).toEqual(['node_modules/.cache/tool/state']);
  });

  it('sees later changes to what the run read, listed, looked up and followed, and nothing else', async () => {
    const root = project('later', { 'src/a.ts': 'a', 'listed/x': '', 'unread.md': 'readme', 'target1': 'one', 'target2': 'one' });
    symlinkSync('target1', join(root, 'link'));
    const { facts, startedAt } = await traceFacts(
      root,
      `const fs = require('node:fs');
fs.readFileSync('src/a.ts'); fs.readdirSync('listed'); fs.existsSync('probe.js'); fs.readlinkSync('link');`,
    );
    const statCache = new MemoryStatCache();
    const { evidence } = fingerprint(root, facts, startedAt, statCache);
    const changed = () => verifyEvidence(root, evidence.entries, statCache).changes.map((change) => change.path);
    expect(changed()).toEqual([]);
    writeFileSync(join(root, 'unread.md'), 'edited');
    writeFileSync(join(root, 'listed', 'x'), 'content of a listed file is not read');
    expect(changed()).toEqual([]);
    writeFileSync(join(root, 'listed', 'y'), '');
    expect(changed()).toEqual(['listed']);
    unlinkSync(join(root, 'listed', 'y'));
    writeFileSync(join(root, 'probe.js'), '');
    expect(changed()).toEqual(['probe.js']);
    unlinkSync(join(root, 'probe.js'));
    unlinkSync(join(root, 'link'));
    // The same bytes behind another target: a retargeted link is still a change.
    symlinkSync('target2', join(root, 'link'));
    expect(changed()).toEqual(['link']);
    unlinkSync(join(root, 'link'));
    symlinkSync('target1', join(root, 'link'));
    writeFileSync(join(root, 'src/a.ts'), 'b');
    expect(changed()).toEqual(['src/a.ts']);
    writeFileSync(join(root, 'src/a.ts'), 'a');
    expect(changed()).toEqual([]);
  });

  it("binds a script the run executed by its execute bit too, and a listing by its entries' kinds as well as their names", async () => {
    const root = project('exec-kinds', { 'tool.sh': '#!/bin/sh\nexit 0\n', 'listed/a': '', 'listed/b': '' });
    chmodSync(join(root, 'tool.sh'), 0o755);
    const { facts, startedAt } = await traceFacts(root, `const fs = require('node:fs'); require('node:child_process').execFileSync('./tool.sh'); fs.readdirSync('listed');`);
    const statCache = new MemoryStatCache();
    const { evidence } = fingerprint(root, facts, startedAt, statCache);
    expect(byPath(evidence.entries).get('tool.sh')).toMatchObject({ use: 'read', executable: true });
    const changed = () => verifyEvidence(root, evidence.entries, statCache).changes.map((change) => change.path);
    chmodSync(join(root, 'tool.sh'), 0o644);
    expect(changed()).toEqual(['tool.sh']);
    chmodSync(join(root, 'tool.sh'), 0o755);
    expect(changed()).toEqual([]);
    // Same names, one of another kind: a walker keeping files alone finds one fewer.
    rmSync(join(root, 'listed/b'));
    mkdirSync(join(root, 'listed/b'));
    expect(changed()).toEqual(['listed']);
  });

  it('records /tmp, listed from a project outside it, by its answer alone: a shared scratch directory whose names change all the time', async () => {
    const root = project('scratch-listing', { 'a.txt': 'a' });
    const { facts, startedAt } = await traceFacts(root, `const fs = require('node:fs'); fs.readdirSync(${JSON.stringify(tmpdir())}); fs.readdirSync('.');`);
    const { evidence } = fingerprint(root, facts, startedAt);
    const at = byPath(evidence.entries);
    expect(at.get(realpathSync(tmpdir()))).toEqual({ path: realpathSync(tmpdir()), use: 'lookup', type: 'directory' });
    expect(at.get('.')).toMatchObject({ use: 'listed', type: 'directory' });
  });

  it('binds a file the run only stat-ed by its size and modification time, as a tool that trusts stat (eslint --cache, make) decides', async () => {
    const root = project('stat-only', { 'src/x.ts': 'x', 'src/y.ts': 'y' });
    const { facts, startedAt } = await traceFacts(root, `const fs = require('node:fs'); fs.statSync('src/x.ts'); fs.statSync('src/y.ts'); fs.readFileSync(fs.realpathSync('src/y.ts'));`);
    const statCache = new MemoryStatCache();
    const { evidence } = fingerprint(root, facts, startedAt, statCache);
    const at = byPath(evidence.entries);
    expect(at.get('src/x.ts')).toMatchObject({ use: 'lookup', type: 'file', digest: expect.stringMatching(/^1:\d+$/) });
    const changed = () => verifyEvidence(root, evidence.entries, statCache).changes.map((change) => change.path);
    expect(changed()).toEqual([]);
    writeFileSync(join(root, 'src/x.ts'), 'edited, never read');
    expect(changed()).toEqual(['src/x.ts']);
  });

  it('takes a hard link count change or a reinstall of the same bytes as no change, and a version change as one', async () => {
    const store = join(dir, 'store');
    mkdirSync(store, { recursive: true });
    writeFileSync(join(store, 'index.js'), 'module.exports = 1;');
    const root = project('store', {});
    const pkg = join(root, 'node_modules/.pnpm/pkg@1.0.0/node_modules/pkg');
    mkdirSync(pkg, { recursive: true });
    linkSync(join(store, 'index.js'), join(pkg, 'index.js'));
    symlinkSync('.pnpm/pkg@1.0.0/node_modules/pkg', join(root, 'node_modules/pkg'));
    const { facts, startedAt } = await traceFacts(root, `require('pkg');`);
    const statCache = new MemoryStatCache();
    const { evidence } = fingerprint(root, facts, startedAt, statCache);
    const changed = () => verifyEvidence(root, evidence.entries, statCache).changes.map((change) => change.path);
    expect(evidence.entries.some((entry) => entry.path.endsWith('pkg/index.js') && entry.use === 'read')).toBe(true);
    // Another checkout installs from the same store: one more link, a new ctime.
    const other = join(dir, 'other-checkout');
    mkdirSync(other, { recursive: true });
    linkSync(join(store, 'index.js'), join(other, 'index.js'));
    expect(changed()).toEqual([]);
    // Reinstalled: a new file of the same bytes.
    unlinkSync(join(pkg, 'index.js'));
    writeFileSync(join(pkg, 'index.js'), readFileSync(join(store, 'index.js')));
    expect(changed()).toEqual([]);
    writeFileSync(join(pkg, 'index.js'), 'module.exports = 2;');
    expect(changed().filter((path) => path.endsWith('index.js')).length).toBeGreaterThan(0);
  });
});

describe('finishTrace: a trace that is not whole is never evidence', () => {
  it.each([
    ['a log that does not start with the check', '1234 openat(AT_FDCWD</x>, "a", O_RDONLY) = 3</x/a>\n'],
    ['a line the parser cannot read', '1234 execve("/bin/true", ["true"], 0x0 /* 0 vars */) = 0\n1234 garbage that is no call\n'],
  ])('%s gives trace-incomplete and no entries', async (_name, text) => {
    const root = project(`incomplete-${Math.random().toString(16).slice(2)}`, {});
    const logPath = join(root, '.vouch', 'run.trace');
    writeFileSync(logPath, text);
    const finished = await finishTrace({ traced: true, logPath, argv: [] }, { root, stateDir: join(root, '.vouch'), statCache: new MemoryStatCache(), startedAt: Date.now(), env: {}, declared: [] });
    expect(finished.entries).toBeNull();
    expect(finished.record).toMatchObject({ kind: 'fallback', note: { code: 'trace-incomplete' } });
    expect(finished.record.kind === 'fallback' && finished.record.note.message).toMatch(/declared inputs stand in/);
  });
});

describe("a check's executable identity", () => {
  it('of a traced check ignores a new link to its file in a shared store (its bytes are in the evidence), and of a declared check does not', () => {
    const root = project('identity', { 'store/tool': '#!/bin/sh\nexit 0\n' });
    chmodSync(join(root, 'store/tool'), 0o755);
    mkdirSync(join(root, 'node_modules/.bin'), { recursive: true });
    linkSync(join(root, 'store/tool'), join(root, 'node_modules/.bin/tool'));
    const tool = join(root, 'node_modules/.bin/tool');
    const traced = executableIdentity(tool, true);
    const declared = executableIdentity(tool, false);
    linkSync(join(root, 'store/tool'), join(root, 'another-checkout-tool'));
    expect(executableIdentity(tool, true)).toEqual(traced);
    expect(executableIdentity(tool, false)).not.toEqual(declared);
    chmodSync(tool, 0o644);
    expect(executableIdentity(tool, true)).not.toEqual(traced);
  });

  it('of a traced check under /usr keeps the whole identity: the evidence leaves system files out', () => {
    const sh = realpathSync('/bin/sh');
    expect(executableIdentity(sh, true)).toEqual(executableIdentity(sh, false));
  });
});
