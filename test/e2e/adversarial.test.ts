import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inProcess } from '../helpers/inProcess.js';
import { tempProject, type TempProject } from '../helpers/project.js';
import { mulberry32, testSeed } from '../helpers/seed.js';

/*
 * Every command here runs in this process, through the CLI's own dispatch
 * (test/helpers/inProcess.ts): the same command modules, store and scans, each command with its own
 * session, so a damaged store is found, kept aside and reported (on the command's stderr) as a
 * process finds it, without a Node start each. Nothing here is about a process of vouch's own: no
 * exit by signal, no stdin, no PATH or umask of its own.
 */
const vouchIn = (p: TempProject, args: string[], options: { cwd?: string } = {}) => inProcess(p).vouch(args, options);
const jsonIn = (p: TempProject, args: string[]) => inProcess(p).json(args);

const PASSING = "process.exitCode = 0;\n";

function config(checks: object[]): string {
  return JSON.stringify({ schema: 1, checks }, null, 2);
}

const CHECK = { name: 't', kind: 'test', command: ['node', 'check.mjs'] };

function simpleProject(name: string, files: Record<string, string> = {}, checks: object[] = [CHECK]): TempProject {
  return tempProject(name, { 'vouch.config.json': config(checks), 'check.mjs': PASSING, 'src/a.txt': 'a\n', ...files });
}

/** The one file in the state dir kept aside under `prefix`, e.g. "state.db.corrupt-". */
function keptAside(project: TempProject, prefix: string): string {
  const kept = readdirSync(join(project.root, '.vouch')).filter((name) => name.startsWith(prefix) && !/-(wal|shm)$/.test(name));
  expect(kept, `exactly one ${prefix}* in .vouch`).toHaveLength(1);
  return join(project.root, '.vouch', kept[0] ?? '');
}

function receiptCount(stateDb: string): number {
  // Read-write, so that closing it checkpoints and removes the WAL as vouch's own close does.
  const db = new Database(stateDb, { fileMustExist: true });
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    return (db.prepare('SELECT count(*) AS n FROM receipts').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups) cleanup();
  cleanups = [];
});
function track(project: TempProject): TempProject {
  cleanups.push(() => project.remove());
  return project;
}

describe('a damaged or foreign state.db is kept aside and reported, never lost', () => {
  it('garbage bytes: the command works, the old file is kept byte-identical, new receipts go to a fresh db', async () => {
    const project = track(simpleProject('adv-garbage'));
    // Bytes drawn from VOUCH_SEED, or a fixed seed (test/helpers/seed.ts), after a header that is not SQLite's.
    const byte = mulberry32(testSeed(import.meta.url, 5).value);
    const garbage = Buffer.concat([Buffer.from('this is not sqlite\n'), Buffer.from(Array.from({ length: 8192 }, () => Math.floor(byte() * 256)))]);
    project.write('.vouch/state.db', garbage);

    const status = await vouchIn(project, ['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    // stdout stays pure JSON: the notice goes to stderr.
    expect(JSON.parse(status.stdout).checks[0]).toMatchObject({ name: 't', freshness: 'UNVERIFIED', result: null });
    const kept = keptAside(project, 'state.db.corrupt-');
    expect(status.stderr).toMatch(/^vouch: .*state\.db: it is not a readable SQLite database/m);
    expect(status.stderr).toContain(`kept as ${kept}`);
    expect(status.stderr).toMatch(/rename it to state\.db/);
    expect(readFileSync(kept).equals(garbage)).toBe(true);

    const run = await vouchIn(project, ['run', 't']);
    expect(run.code, run.stderr).toBe(0);
    // Reported once, when it was found; the fresh db is healthy from then on.
    expect(run.stderr).not.toMatch(/corrupt/);
    expect(receiptCount(join(project.root, '.vouch', 'state.db'))).toBe(1);
    expect(readFileSync(kept).equals(garbage)).toBe(true);
    expect((await jsonIn(project, ['status'])).checks[0]).toMatchObject({ freshness: 'CURRENT', result: 'PASS', reuse_eligible: true });
  });

  it('a real db truncated to half is kept aside as corrupt, and the next run records into a fresh one', async () => {
    const project = track(simpleProject('adv-truncated'));
    expect((await vouchIn(project, ['run', 't'])).code).toBe(0);
    project.write('src/a.txt', 'changed\n');
    expect((await vouchIn(project, ['run', 't'])).code).toBe(0);
    const stateDb = join(project.root, '.vouch', 'state.db');
    expect(receiptCount(stateDb)).toBe(2);
    // Closed cleanly, so everything is in the main file and no WAL is left to mask the damage.
    expect(existsSync(`${stateDb}-wal`)).toBe(false);
    const size = readFileSync(stateDb).length;
    truncateSync(stateDb, Math.floor(size / 2));
    const truncated = readFileSync(stateDb);

    const status = await vouchIn(project, ['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const kept = keptAside(project, 'state.db.corrupt-');
    expect(status.stderr).toContain(`kept as ${kept}`);
    expect(readFileSync(kept).equals(truncated)).toBe(true);
    // Receipts of the kept file are not trusted: nothing is CURRENT until a new run.
    expect(JSON.parse(status.stdout).checks[0]).toMatchObject({ freshness: 'UNVERIFIED', result: null });

    const run = await vouchIn(project, ['run', 't']);
    expect(run.code, run.stderr).toBe(0);
    expect(receiptCount(stateDb)).toBe(1);
    expect((await jsonIn(project, ['status'])).checks[0]).toMatchObject({ freshness: 'CURRENT', result: 'PASS' });
  });

  it('a db from a newer vouch (user_version 999) is kept aside as state.db.newer-* and reported', async () => {
    const project = track(simpleProject('adv-newer'));
    project.write('.vouch/.gitignore', '*\n');
    const stateDb = join(project.root, '.vouch', 'state.db');
    const future = new Database(stateDb);
    future.exec("CREATE TABLE future_receipts (x TEXT); INSERT INTO future_receipts VALUES ('from the future');");
    future.pragma('user_version = 999');
    future.close();
    const original = readFileSync(stateDb);

    const status = await vouchIn(project, ['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).checks[0]).toMatchObject({ freshness: 'UNVERIFIED', result: null });
    const kept = keptAside(project, 'state.db.newer-');
    expect(status.stderr).toMatch(/written by a newer vouch \(schema 999/);
    expect(status.stderr).toContain(`kept as ${kept}`);
    const keptBytes = readFileSync(kept);

    const fresh = new Database(stateDb, { readonly: true });
    try {
      expect(fresh.pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(1);
      expect(fresh.pragma('user_version', { simple: true })).toBeLessThan(999);
    } finally {
      fresh.close();
    }
    const old = new Database(kept, { readonly: true });
    try {
      expect(old.pragma('user_version', { simple: true })).toBe(999);
      expect(old.prepare('SELECT x FROM future_receipts').all()).toEqual([{ x: 'from the future' }]);
    } finally {
      old.close();
    }
    const run = await vouchIn(project, ['run', 't']);
    expect(run.code, run.stderr).toBe(0);
    expect(receiptCount(stateDb)).toBe(1);
    // Kept exactly as found: this vouch must not even switch a newer database's journal mode.
    expect(keptBytes.equals(original), 'the kept file is byte-identical to the newer state.db').toBe(true);
  });
});

describe('hostile file names', () => {
  const HOSTILE = [
    'with space.txt',
    'new\nline.txt',
    'tab\there.txt',
    `quote"double'single\\back.txt`,
    'ünïcödé-日本語-🙂.txt',
    '-leading-dash.txt',
    '--help',
    '*?[abc]{a,b}!glob.txt',
    'dir with space/-x [1]/inner?.txt',
    // 255 bytes, the usual limit of one name.
    `${'a'.repeat(251)}.txt`,
    // 254 bytes of two-byte characters.
    `${'é'.repeat(125)}.txt`,
  ];

  it('run and status work, every one is an input, and editing each one makes the check STALE', { timeout: 120_000 }, async () => {
    const files: Record<string, string> = {};
    HOSTILE.forEach((name, index) => (files[name] = `original ${index}\n`));
    const project = track(
      tempProject('adv-names', {
        'vouch.config.json': config([
          { name: 'all', kind: 'test', command: ['node', 'check.mjs'] },
          // Explicit globs go through the matcher rather than the "**" shortcut.
          { name: 'globbed', kind: 'test', command: ['node', 'check.mjs'], inputs: ['**/*', 'check.mjs'] },
        ]),
        'check.mjs': PASSING,
        ...files,
      }),
    );
    for (const name of HOSTILE) expect(Buffer.byteLength(name.split('/').pop() ?? '')).toBeLessThanOrEqual(255);

    const run = await vouchIn(project, ['run', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const counts = JSON.parse(run.stdout).runs.map((entry: { receipt: { input_count: number } }) => entry.receipt.input_count);
    expect(counts).toEqual([HOSTILE.length + 1, HOSTILE.length + 1]);
    const status = await jsonIn(project, ['status']);
    expect(status.checks.map((c: { freshness: string; reuse_eligible: boolean }) => [c.freshness, c.reuse_eligible])).toEqual([
      ['CURRENT', true],
      ['CURRENT', true],
    ]);

    for (const [index, name] of HOSTILE.entries()) {
      project.write(name, `edited ${index}\n`);
      const explained = await jsonIn(project, ['explain', 'all']);
      expect(explained.check.freshness, name).toBe('STALE');
      expect(explained.input_changes.map((c: { change: string; path: string }) => [c.change, c.path])).toEqual([['modified', name]]);
      project.write(name, `original ${index}\n`);
    }

    // Every edit undone: the same bytes again, so CURRENT again.
    const restored = await jsonIn(project, ['status']);
    expect(restored.checks.map((c: { freshness: string }) => c.freshness)).toEqual(['CURRENT', 'CURRENT']);

    // The globbed check, too, sees each name exactly.
    HOSTILE.forEach((name, index) => project.write(name, `edited again ${index}\n`));
    const globbed = await jsonIn(project, ['explain', 'globbed']);
    expect(globbed.check.freshness).toBe('STALE');
    expect(globbed.input_changes.map((c: { path: string }) => c.path).sort()).toEqual([...HOSTILE].sort());
  });
});

describe('symlinks', () => {
  it('a link to a file outside the root is UNVERIFIED input-outside-root, and excluding it as suggested works', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'vouch-outside-'));
    cleanups.push(() => rmSync(outside, { recursive: true, force: true }));
    writeFileSync(join(outside, 'secret.txt'), 'outside\n');
    const project = track(simpleProject('adv-outside'));
    symlinkSync(join(outside, 'secret.txt'), join(project.root, 'src', 'escape.txt'));
    symlinkSync('../../', join(project.root, 'src', 'up-and-out'));

    const run = await vouchIn(project, ['run', 't', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const receipt = JSON.parse(run.stdout).runs[0].receipt;
    expect(receipt.reuse_eligible).toBe(false);
    expect(receipt.reasons.map((r: { code: string }) => r.code)).toContain('input-outside-root');

    const check = (await jsonIn(project, ['status'])).checks[0];
    expect(check.freshness).toBe('UNVERIFIED');
    expect(check.reuse_eligible).toBe(false);
    const outsideReasons = check.reasons.filter((r: { code: string }) => r.code === 'input-outside-root');
    expect(outsideReasons.map((r: { message: string }) => r.message.split(' ')[0]).sort()).toEqual(['src/escape.txt', 'src/up-and-out']);
    expect(outsideReasons[0].message).toMatch(/outside the project root/);
    expect(outsideReasons[0].message).toMatch(/exclude it with "!src\//);

    project.write('vouch.config.json', config([{ ...CHECK, inputs: ['**', '!src/escape.txt', '!src/up-and-out'] }]));
    expect((await vouchIn(project, ['run', 't'])).code).toBe(0);
    expect((await jsonIn(project, ['status'])).checks[0]).toMatchObject({ freshness: 'CURRENT', result: 'PASS', reuse_eligible: true });
  });

  it('many links that leave the root: the first are named, the rest counted in one reason, and the answer is the same', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'vouch-outside-'));
    cleanups.push(() => rmSync(outside, { recursive: true, force: true }));
    const project = track(simpleProject('adv-outside-many'));
    for (let n = 0; n < 8; n++) {
      writeFileSync(join(outside, `t${n}.txt`), `${n}\n`);
      symlinkSync(join(outside, `t${n}.txt`), join(project.root, 'src', `link${n}.txt`));
    }
    const run = await vouchIn(project, ['run', 't']);
    expect(run.code, run.stderr).toBe(0);
    const check = (await jsonIn(project, ['status'])).checks[0];
    expect(check).toMatchObject({ freshness: 'UNVERIFIED', reuse_eligible: false });
    const messages = check.reasons.filter((r: { code: string }) => r.code === 'input-outside-root').map((r: { message: string }) => r.message);
    expect(messages).toHaveLength(4);
    expect(messages.slice(0, 3).every((m: string) => /^src\/link\d\.txt is a link to /.test(m))).toBe(true);
    expect(messages[3]).toBe('and 5 more paths for the same reason (input-outside-root)');
    expect(run.stderr.length).toBeLessThan(2_000);
  });

  it('a dangling link inside the root is recorded as a link: CURRENT after run, STALE when retargeted', async () => {
    const project = track(simpleProject('adv-dangling'));
    symlinkSync('does-not-exist.txt', join(project.root, 'src', 'dangling'));
    const run = await vouchIn(project, ['run', 't']);
    expect(run.code, run.stderr).toBe(0);
    expect((await jsonIn(project, ['status'])).checks[0]).toMatchObject({ freshness: 'CURRENT', result: 'PASS', reuse_eligible: true, reasons: [] });

    unlinkSync(join(project.root, 'src', 'dangling'));
    symlinkSync('also-missing.txt', join(project.root, 'src', 'dangling'));
    const explained = await jsonIn(project, ['explain', 't']);
    expect(explained.check.freshness).toBe('STALE');
    expect(explained.input_changes).toMatchObject([{ change: 'modified', path: 'src/dangling' }]);
  });
});

describe('receipts are immutable', () => {
  it('UPDATE and DELETE on receipts are refused by the store itself', async () => {
    const project = track(tempProject('adv-immutable', {
      'vouch.config.json': config([{ ...CHECK, command: ['node', '-e', 'process.exit(1)'] }]),
      'check.mjs': PASSING,
    }));
    expect((await vouchIn(project, ['run', 't'])).code).toBe(1);
    const db = new Database(join(project.root, '.vouch', 'state.db'));
    try {
      expect(() => db.prepare("UPDATE receipts SET result = 'PASS'").run()).toThrow(/immutable/);
      expect(() => db.prepare('UPDATE receipts SET reuse_eligible = 1').run()).toThrow(/immutable/);
      expect(() => db.prepare('DELETE FROM receipts').run()).toThrow(/kept/);
      expect(db.prepare('SELECT result, reuse_eligible FROM receipts').all()).toEqual([{ result: 'FAIL', reuse_eligible: 0 }]);
    } finally {
      db.close();
    }
    expect((await jsonIn(project, ['status'])).checks[0]).toMatchObject({ result: 'FAIL', reuse_eligible: false });
  });
});

describe('a project inside an enclosing git repository', () => {
  // A project with no .git of its own, in a directory the enclosing repo ignores (a scratch or
  // vendored directory): git lists none of its files, yet the check reads them all.
  it('still sees its files: an edit is never CURRENT', async () => {
    const outer = track(tempProject('adv-enclosing', { '.gitignore': 'inner/\n', 'README.md': 'outer\n' }));
    outer.write('inner/vouch.config.json', config([CHECK]));
    outer.write('inner/check.mjs', PASSING);
    outer.write('inner/src/a.txt', 'a\n');
    const cwd = join(outer.root, 'inner');
    const run = await vouchIn(outer, ['run', 't'], { cwd });
    expect(run.code, run.stderr).toBe(0);
    outer.write('inner/src/a.txt', 'edited\n');
    const status = JSON.parse((await vouchIn(outer, ['status', '--json'], { cwd })).stdout);
    expect(status.checks[0].freshness).not.toBe('CURRENT');
  });
});
