import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { evaluateCommand } from '../../src/agents/evaluate.js';
import { intercept } from '../../src/agents/intercept.js';
import type { Json } from '../helpers/answers.js';
import { expectCurrentIn, inProcess } from '../helpers/inProcess.js';
import { ObserverTracker, until } from '../helpers/observer.js';
import { cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';
import { newestChangeMs, SETTLE_MS } from '../helpers/settle.js';

/*
 * evaluateCommand and intercept against a real temporary project: receipts
 * made by `vouch run` in this process (test/helpers/inProcess.ts), answers from
 * a direct scan and from a real observer.
 */

const CHECKS = [
  { name: 'typecheck', kind: 'typecheck', script: 'typecheck' },
  { name: 'unit', kind: 'test', command: ['node', 'unit.js'], env: ['MODE'], inputs: ['unit.js', 'src/**'] },
  { name: 'slow', kind: 'custom', command: ['node', 'slow.js'], inputs: ['slow.js'] },
];
const FILES: Record<string, string> = {
  'vouch.config.json': JSON.stringify({ schema: 1, packageManager: 'npm', checks: CHECKS }, null, 2) + '\n',
  'package.json': JSON.stringify({ name: 'ix', version: '1.0.0', private: true, scripts: { typecheck: 'node check.js' } }, null, 2) + '\n',
  '.gitignore': '.vouch/\n',
  'check.js': 'process.exit(0);\n',
  'unit.js': 'process.exit(0);\n',
  'src/a.js': 'export const a = 1;\n',
  'slow.js': 'setTimeout(() => {}, 4000);\n',
};

let p: TempProject;
let env: NodeJS.ProcessEnv;
const observers = new ObserverTracker();

/** `vouch run CHECK` in this process, once the last write is older than the racy window of its start. */
async function run(check: string): Promise<void> {
  const newest = newestChangeMs(p.root);
  await until(() => Date.now() > newest + SETTLE_MS, `the last change to be ${SETTLE_MS} ms old`, 5_000, 5);
  const result = await inProcess(p).vouch(['run', check], { env });
  expect(result.code, result.stderr).toBe(0);
}

beforeAll(async () => {
  p = tempProject('intercept', FILES);
  env = cleanEnv();
  for (const check of ['typecheck', 'unit']) await run(check);
});

afterAll(() => p?.remove());

afterEach(async () => {
  expect(await observers.cleanup()).toEqual([]);
});

async function runIdOf(check: string): Promise<string> {
  return (await expectCurrentIn(inProcess(p), check, env)).receipt.run_id as string;
}

const evaluate = (command: string, extra: Partial<Parameters<typeof evaluateCommand>[0]> = {}) =>
  evaluateCommand({ command, cwd: p.root, env, ...extra });

describe('evaluateCommand on a real project, by a direct scan', () => {
  it('denies a current check, naming its run id and how to force it', async () => {
    const runId = await runIdOf('typecheck');
    const { decision, source } = await evaluate('npm run typecheck 2>&1 | tail -30');
    expect(source).toBe('scan');
    expect(decision.kind).toBe('deny');
    if (decision.kind !== 'deny') return;
    expect(decision.checks).toEqual(['typecheck']);
    expect(decision.reason).toContain(runId);
    expect(decision.reason).toContain('VOUCH_FORCE=1 npm run typecheck 2>&1 | tail -30');
  });

  it('denies a chain of current checks whole', async () => {
    const { decision } = await evaluate('npm run typecheck && node unit.js');
    expect(decision).toMatchObject({ kind: 'deny', checks: ['typecheck', 'unit'] });
  });

  it('rewrites when the chain runs something else too', async () => {
    const { decision } = await evaluate('echo hi > /dev/null && node unit.js');
    expect(decision).toMatchObject({ kind: 'rewrite', command: 'echo hi > /dev/null && vouch run unit --if-due', checks: ['unit'] });
  });

  it('judges a part with an assignment to a context variable with that assignment applied', async () => {
    const changed = await evaluate('MODE=fast node unit.js');
    expect(changed.decision).toMatchObject({ kind: 'rewrite', command: 'MODE=fast vouch run unit --if-due' });
    expect((await evaluate('OTHER=1 node unit.js')).decision.kind).toBe('deny');
    expect((await evaluate('MODE=$FAST node unit.js')).decision.kind).toBe('pass');
  });

  it('passes what matches nothing or does not parse, and sends a forced check through vouch run, without observing', async () => {
    for (const command of ['git status', 'npm run typecheck -- --watch', 'npm test "', 'VOUCH_FORCE=1 vouch run typecheck', 'time npm run typecheck']) {
      const { decision, source } = await evaluate(command);
      expect(decision.kind, command).toBe('pass');
      expect(source, command).toBeNull();
    }
    // Forced, typed as the check: it runs through a plain `vouch run`, so its result is kept; nothing was observed.
    const forced = await evaluate('VOUCH_FORCE=1 npm run typecheck');
    expect(forced.decision).toMatchObject({ kind: 'rewrite', command: 'VOUCH_FORCE=1 vouch run typecheck' });
    expect(forced.source).toBeNull();
    expect((await evaluate('npm run typecheck', { env: { ...env, VOUCH_FORCE: '1' } })).decision.kind).toBe('pass');
  });

  it('passes outside any project, and on a broken config', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'vouch-noconfig-'));
    try {
      expect((await evaluateCommand({ command: 'npm test', cwd: outside, env })).decision).toMatchObject({ kind: 'pass' });
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
    const broken = tempProject('intercept-broken', { 'vouch.config.json': '{ "schema": 1, "checks": [', 'package.json': '{}' }, { git: false });
    try {
      const { decision } = await evaluateCommand({ command: 'npm test', cwd: broken.root, env });
      expect(decision.kind).toBe('pass');
      expect(await intercept({ kind: 'shell', command: 'npm test', cwd: broken.root, env })).toEqual({ kind: 'unchanged' });
    } finally {
      broken.remove();
    }
  });

  it('follows cd into the root from a subdirectory', async () => {
    const sub = join(p.root, 'src');
    expect((await evaluateCommand({ command: 'node unit.js', cwd: sub, env })).decision.kind).toBe('pass');
    expect((await evaluateCommand({ command: 'cd .. && node unit.js', cwd: sub, env })).decision.kind).toBe('deny');
  });

  it('rewrites after an input changed, naming the program given', async () => {
    p.write('src/a.js', 'export const a = 2;\n');
    try {
      const { decision } = await evaluate('node unit.js', { program: "'/opt/v v/vouch'" });
      expect(decision).toMatchObject({ kind: 'rewrite', command: "'/opt/v v/vouch' run unit --if-due", checks: ['unit'] });
      expect(decision.kind === 'rewrite' && decision.why).toContain('unit is STALE');
      // typecheck reads every file by default: it is stale too.
      expect(await intercept({ kind: 'shell', command: 'npm run typecheck', cwd: p.root, env })).toEqual({ kind: 'rewritten', command: 'vouch run typecheck --if-due' });
    } finally {
      p.write('src/a.js', 'export const a = 1;\n');
    }
  });
});

describe('intercept', () => {
  it('declines a current check with the deny reason, and leaves other commands unchanged', async () => {
    const declined = await intercept({ kind: 'shell', command: 'node unit.js', cwd: p.root, env });
    expect(declined.kind).toBe('declined');
    expect(declined.kind === 'declined' && declined.reason).toContain(await runIdOf('unit'));
    expect(await intercept({ kind: 'shell', command: 'ls -la', cwd: p.root, env })).toEqual({ kind: 'unchanged' });
  });

  it('fails open on a request it cannot read', async () => {
    expect(await intercept(null as never)).toEqual({ kind: 'unchanged' });
    expect(await intercept({ kind: 'exec', command: 'npm test', cwd: p.root } as never)).toEqual({ kind: 'unchanged' });
    expect(await intercept({ kind: 'shell', command: 42, cwd: p.root } as never)).toEqual({ kind: 'unchanged' });
    expect(await intercept({ kind: 'shell', command: 'npm run typecheck', cwd: '/nonexistent/dir' })).toEqual({ kind: 'unchanged' });
  });
});

describe('evaluateCommand with a running observer', () => {
  it('takes the answer from the observer', async () => {
    const started: Json = observers.start(p, [], { env });
    expect(started.pid).toBeGreaterThan(0);
    const { decision, source } = await evaluate('npm run typecheck');
    expect(source).toBe('observer');
    expect(decision).toMatchObject({ kind: 'deny', checks: ['typecheck'] });

    p.write('check.js', 'process.exit(0); // changed\n');
    try {
      const after = await evaluate('npm run typecheck && node unit.js');
      expect(after.source).toBe('observer');
      expect(after.decision).toMatchObject({ kind: 'rewrite', command: 'vouch run typecheck --if-due && vouch run unit --if-due' });
    } finally {
      p.write('check.js', 'process.exit(0);\n');
    }
  });
});


describe('evaluateCommand with an observer that does not answer', () => {
  it('waits the checks\' last duration, clamped to at least 2 s, then scans', async () => {
    await run('slow');
    const started: Json = observers.start(p, [], { env });
    process.kill(started.pid, 'SIGSTOP');

    // unit's last run took well under 2 s: the 2 s floor, then a scan.
    const quick = await evaluate('node unit.js');
    expect(quick.source).toBe('scan');
    expect(quick.decision.kind).toBe('deny');
    expect(quick.latencyMs).toBeGreaterThanOrEqual(1_900);
    expect(quick.latencyMs).toBeLessThan(3_900);

    // slow's last run took about 4 s: the observer gets that long before the scan.
    const slow = await evaluate('node slow.js');
    expect(slow.source).toBe('scan');
    expect(slow.decision.kind).toBe('deny');
    expect(slow.latencyMs).toBeGreaterThanOrEqual(3_900);
    expect(slow.latencyMs).toBeLessThan(10_000);
  });
});

describe('the vouch/intercept package export', () => {
  it('resolves with its type declarations for a TypeScript consumer, and loads as an ES module', () => {
    // Inside the repository, "vouch/intercept" is the package's own export (a self-reference).
    const consumer = tempProject('intercept-consumer', {
      'use.ts': [
        "import { intercept, type InterceptResult } from 'vouch/intercept';",
        "const result: Promise<InterceptResult> = intercept({ kind: 'shell', command: 'npm test', cwd: '.' });",
        '// @ts-expect-error: a request needs a command',
        "void intercept({ kind: 'shell', cwd: '.' });",
        'void result;',
        '',
      ].join('\n'),
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'] }, files: ['use.ts'] }),
    }, { git: false });
    try {
      const tsc = spawnSync(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', consumer.root], { encoding: 'utf8' });
      expect(tsc.stdout + tsc.stderr).toBe('');
      expect(tsc.status).toBe(0);
      const loaded = spawnSync(process.execPath, ['--input-type=module', '-e', "import('vouch/intercept').then((m) => console.log(typeof m.intercept))"], { cwd: REPO, encoding: 'utf8' });
      expect(loaded.stdout.trim()).toBe('function');
    } finally {
      consumer.remove();
    }
  });
});
