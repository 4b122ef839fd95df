import { spawnSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { loadAddon } from '../../src/fs/nativeAddon.js';
import type { Json } from '../helpers/answers.js';
import {
  A_JS,
  BASE_FILES,
  changesOf,
  config,
  describeMutationCampaign,
  describeTreeCases,
  explainOf,
  expectOutOfCurrent,
  asyncProjects,
  logJson,
  mutations,
  packageJson,
  runCheck,
  SCRIPTED,
  SCRIPTS,
  sleep,
} from '../helpers/freshnessCampaign.js';
import { expectCurrentIn, statusIn } from '../helpers/inProcess.js';
import { cleanEnv, REPO } from '../helpers/project.js';

// The campaign with the native scan, then what needs one scan only. freshnessJsWalk.test.ts runs
// the campaign with the JavaScript walk; e2e/freshness.test.ts runs part of it through the CLI.
const project = asyncProjects();

it('the native scan is the one these tests use', () => {
  expect(loadAddon()).not.toBeNull();
});

describeMutationCampaign('native scan', {}, project);
describeTreeCases('native scan', {}, project);

/** The mutations of files alone: after a run on the mutated tree and the revert, the first receipt must answer again. */
const FILE_ONLY = new Set([
  'edit a source file',
  'same-size rewrite with atime and mtime put back to the nanosecond',
  'add a file matching the inputs',
  'delete a tracked file',
  'rename a tracked file',
  'chmod +x a source file',
  'replace a file with a symlink to a file of identical content',
  'change the lockfile',
]);

describe('edit, run, revert: the first receipt answers again, never the run made on the mutated tree', async () => {
  const cases = mutations.filter((m) => m.revert !== undefined && m.runEnv === undefined && !m.immediate);
  it.each(cases.map((m) => [m.name, m] as const))('%s', async (_name, m) => {
    const p = project('fresh-revert', BASE_FILES);
    const check = m.check ?? 'check';
    await runCheck(p, [check]);
    const first = (await expectCurrentIn(p, check)).receipt.run_id;
    await sleep(60);
    const extra = m.mutate(p);
    if (extra) return; // an environment change: not a tree to revert
    await expectOutOfCurrent(p, check);
    await runCheck(p, [check]);
    const mutated = (await logJson(p, check)).receipts[0].run_id;
    expect(mutated).not.toBe(first);
    m.revert!(p);
    const back = await statusIn(p, check);
    // A run on the mutated tree never answers for the reverted one.
    expect(back.receipt.run_id === mutated && back.freshness === 'CURRENT', JSON.stringify(back)).toBe(false);
    if (back.freshness === 'CURRENT') expect(back.receipt.run_id).toBe(first);
    if (FILE_ONLY.has(m.name)) {
      expect(back.freshness, JSON.stringify(back.reasons)).toBe('CURRENT');
      expect(back.receipt.run_id).toBe(first);
      // --if-due agrees, and skips on the first receipt.
      expect((await runCheck(p, [check, '--if-due'])).stdout).toContain(first);
    }
  });

  it('names every file-only mutation it expects CURRENT from', async () => {
    for (const name of FILE_ONLY) expect(cases.map((m) => m.name)).toContain(name);
  });
});

describe('an input that changes while the check runs', async () => {
  it('rewritten and restored to the same bytes during the run: the receipt is not reusable', async () => {
    // The check sees other bytes than the ones its receipt is bound to: it passes only on "a = 2",
    // while src/a.js says "a = 1" before and after. This models a concurrent writer (an editor save
    // and undo, a code generator) that puts the file back before the run ends.
    const p = project('fresh-aba', {
      'vouch.config.json': config([{ name: 'check', kind: 'custom', command: ['node', 'check.cjs'] }]),
      'check.cjs': [
        "const fs = require('fs');",
        "const original = fs.readFileSync('src/a.js');",
        "fs.writeFileSync('src/a.js', 'export const a = 2;\\n');",
        "const seen = fs.readFileSync('src/a.js', 'utf8');",
        'fs.writeFileSync(\'src/a.js\', original);',
        "process.exit(seen.includes('a = 2') ? 0 : 1);",
        '',
      ].join('\n'),
      'src/a.js': A_JS,
    });
    await runCheck(p, ['check']);
    expect(readFileSync(join(p.root, 'src/a.js'), 'utf8')).toBe(A_JS);
    const [receipt] = (await logJson(p, 'check')).receipts;
    expect(receipt.reuse_eligible, JSON.stringify(receipt)).toBe(false);
    expect(receipt.reasons.map((r: Json) => r.code)).toContain('inputs-changed-during-run');
    const status = await statusIn(p, 'check');
    expect(status).toMatchObject({ freshness: 'STALE', reuse_eligible: false });
    expect(status.reasons.map((r: Json) => r.code)).toEqual(['inputs-changed-during-run']);
  });
});

describe('narrowed inputs', async () => {
  it('a typecheck check narrowed to code files ignores README.md but not a .ts file', async () => {
    const p = project('fresh-narrow', {
      'vouch.config.json': config([{ name: 'typecheck', kind: 'typecheck', command: ['node', 'check.js'], inputs: ['**/*.{ts,js,json}'] }]),
      'check.js': 'process.exit(0);\n',
      'src/index.ts': 'export const n: number = 1;\n',
      'README.md': '# readme\n',
    });
    await runCheck(p, ['typecheck']);
    await expectCurrentIn(p, 'typecheck');

    p.write('README.md', '# readme, edited\n');
    await expectCurrentIn(p, 'typecheck');
    expect((await explainOf(p, 'typecheck')).input_changes).toEqual([]);

    p.write('src/index.ts', 'export const n: number = 2;\n');
    await expectOutOfCurrent(p, 'typecheck', undefined, 'STALE');
    expect(changesOf(await explainOf(p, 'typecheck')).inputs).toEqual([['modified', 'src/index.ts', 'source']]);
    p.write('src/index.ts', 'export const n: number = 1;\n');
    await expectCurrentIn(p, 'typecheck');
  });
});

describe("a script's body is part of its check's context, whatever the inputs", async () => {
  it('`echo skipped` makes it STALE naming the script, reverting brings CURRENT back, an unrelated script does not matter', async () => {
    // The command form of the same check: `npm run typecheck` in "command" binds the scripts too.
    const COMMAND = { name: 'command', kind: 'typecheck', command: ['npm', 'run', 'typecheck'], inputs: ['src/**'] };
    const p = project('fresh-script', { ...BASE_FILES, 'vouch.config.json': config([SCRIPTED, COMMAND]) });
    await runCheck(p, ['scripted', 'command']);
    await expectCurrentIn(p, 'scripted');
    await expectCurrentIn(p, 'command');

    p.write('package.json', packageJson({ ...SCRIPTS, lint: 'echo skipped' }));
    await expectCurrentIn(p, 'scripted');
    await expectCurrentIn(p, 'command');

    p.write('package.json', packageJson({ ...SCRIPTS, typecheck: 'echo skipped' }));
    for (const check of ['scripted', 'command']) {
      const stale = await expectOutOfCurrent(p, check, undefined, 'STALE');
      expect(stale.reasons.map((r: Json) => r.code)).toEqual(['context-changed']);
      expect(stale.reasons[0].message).toContain('scripts gen, typecheck changed');
    }
    const human = await p.vouch(['explain', 'scripted']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`script typecheck: \`${SCRIPTS.typecheck}\` -> \`echo skipped\``);
    expect(human.stdout).toContain(`script gen: \`${SCRIPTS.gen}\` -> (not run)`);

    p.write('package.json', packageJson());
    await expectCurrentIn(p, 'scripted');
    await expectCurrentIn(p, 'command');
  });
});

describe('the tool prefixes of the scripts a check runs are part of its context', async () => {
  it('VITEST_* matters to a test script that runs vitest through another script, and not to one that does not', async () => {
    const scripts = { test: 'npm run unit', unit: 'node check.js vitest', lint: 'node check.js' };
    const p = project('fresh-script-env', {
      ...BASE_FILES,
      'package.json': packageJson(scripts),
      'vouch.config.json': config([
        { name: 'test', kind: 'test', script: 'test', inputs: ['src/**'] },
        { name: 'lint', kind: 'lint', script: 'lint', inputs: ['src/**'] },
      ]),
    });
    await runCheck(p, ['test', 'lint'], cleanEnv());
    await expectCurrentIn(p, 'test');
    const withVitestVariable = cleanEnv({ VITEST_POOL_ID: '7' });
    const stale = await expectOutOfCurrent(p, 'test', withVitestVariable, 'STALE');
    expect(stale.reasons.map((r: Json) => r.code)).toEqual(['context-changed']);
    expect(JSON.stringify((await explainOf(p, 'test', withVitestVariable)).context_changes)).toContain('VITEST_POOL_ID');
    expect((await statusIn(p, 'lint', withVitestVariable)).freshness).toBe('CURRENT');
  });
});

describe('run --if-due, FAIL receipts, latest receipt wins', async () => {
  const verdictFiles = {
    // The outcome file is deliberately not an input, so the result can flip while inputs stay put.
    'vouch.config.json': config([{ name: 'verdict', kind: 'custom', command: ['node', 'verdict.cjs'], inputs: ['verdict.cjs'] }]),
    'verdict.cjs': "process.exit(require('fs').readFileSync('outcome.txt', 'utf8').trim() === 'fail' ? 1 : 0);\n",
    'outcome.txt': 'pass\n',
  };

  it('--if-due skips a CURRENT PASS and runs a STALE one', async () => {
    const p = project('fresh-ifdue', BASE_FILES);
    await runCheck(p, ['check']);
    const [first] = (await logJson(p, 'check')).receipts;

    const skipped = await runCheck(p, ['check', '--if-due']);
    const line = skipped.stdout.split('\n').find((l) => l.includes('skipped check'));
    expect(line, skipped.stdout).toBeDefined();
    expect(line).toContain(first.run_id);
    expect(line).toContain('saved');
    expect((await logJson(p, 'check')).receipts).toHaveLength(1);

    p.write('src/a.js', 'export const a = 100;\n');
    await expectOutOfCurrent(p, 'check', undefined, 'STALE');
    const ran = await runCheck(p, ['check', '--if-due']);
    expect(ran.stdout).not.toContain('skipped');
    const receipts = (await logJson(p, 'check')).receipts;
    expect(receipts).toHaveLength(2);
    expect(receipts[0].run_id).not.toBe(first.run_id);
    expect((await expectCurrentIn(p, 'check')).receipt.run_id).toBe(receipts[0].run_id);
  });

  it('a CURRENT FAIL stays a failure, is not reusable, and --if-due reruns it', async () => {
    const p = project('fresh-fail', { ...verdictFiles, 'outcome.txt': 'fail\n' });
    await runCheck(p, ['verdict'], undefined, 1);
    const status = await statusIn(p, 'verdict');
    expect(status.freshness).toBe('CURRENT');
    expect(status.result).toBe('FAIL');
    expect(status.reuse_eligible).toBe(false);
    expect(status.receipt.exit_code).toBe(1);
    expect(status.reasons.map((r: Json) => r.code)).toContain('failed');

    const rerun = await runCheck(p, ['verdict', '--if-due'], undefined, 1);
    expect(rerun.stdout).not.toContain('skipped');
    const receipts = (await logJson(p, 'verdict')).receipts;
    expect(receipts).toHaveLength(2);
    expect(receipts.every((r: Json) => r.result === 'FAIL' && r.reuse_eligible === false)).toBe(true);
  });

  it('the latest receipt wins: PASS then FAIL says FAIL, FAIL then PASS says PASS', async () => {
    const p = project('fresh-latest', verdictFiles);
    await runCheck(p, ['verdict']);
    p.write('outcome.txt', 'fail\n');
    await runCheck(p, ['verdict'], undefined, 1);
    let status = await statusIn(p, 'verdict');
    expect(status.freshness).toBe('CURRENT');
    expect(status.result).toBe('FAIL');
    expect(status.reuse_eligible).toBe(false);
    const [latest, earlier] = (await logJson(p, 'verdict')).receipts;
    expect(status.receipt.run_id).toBe(latest.run_id);
    expect([latest.result, earlier.result]).toEqual(['FAIL', 'PASS']);

    p.write('outcome.txt', 'pass\n');
    await runCheck(p, ['verdict']);
    status = await expectCurrentIn(p, 'verdict');
    expect(status.receipt.run_id).toBe((await logJson(p, 'verdict')).receipts[0].run_id);
  });
});

describe('the real TypeScript compiler', async () => {
  it('tsc --noEmit: PASS CURRENT, a type error makes it STALE then FAIL, the fix brings the first PASS back', async () => {
    const p = project('fresh-tsc', {
      'vouch.config.json': config([{ name: 'tsc', kind: 'typecheck', command: ['tsc', '--noEmit'] }]),
      'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types: [], skipLibCheck: true, lib: ['ES2022'], target: 'ES2022' }, include: ['src'] }, null, 2) + '\n',
      'src/index.ts': 'export const n: number = 1;\n',
    });
    // No repo directory on the caller's PATH: "tsc" must be found through node_modules/.bin of the
    // directories above the project root, as npm gives its scripts.
    const callerPath = (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '' && !dir.startsWith(REPO));
    const env = cleanEnv({ PATH: callerPath.join(delimiter) });
    expect(spawnSync('tsc', ['--version'], { env }).error, 'precondition: tsc is not on the caller PATH').toBeDefined();

    await runCheck(p, ['tsc'], env);
    const firstRun = (await expectCurrentIn(p, 'tsc', env)).receipt.run_id;
    const db = new Database(join(p.root, '.vouch', 'state.db'), { readonly: true });
    try {
      const row = db.prepare('SELECT context FROM receipts ORDER BY seq DESC LIMIT 1').get() as { context: string };
      const context = JSON.parse(row.context);
      expect(context.executable.path).toBe(realpathSync(join(REPO, 'node_modules', 'typescript', 'bin', 'tsc')));
    } finally {
      db.close();
    }

    p.write('src/index.ts', 'export const n: number = "one";\n');
    await expectOutOfCurrent(p, 'tsc', env, 'STALE');
    const failed = await p.vouch(['run', 'tsc'], { env });
    expect(failed.code).not.toBe(0);
    expect(failed.code).not.toBeNull();
    expect(failed.stdout + failed.stderr).toContain('TS2322');
    const status = await statusIn(p, 'tsc', env);
    expect(status.freshness).toBe('CURRENT');
    expect(status.result).toBe('FAIL');
    expect(status.receipt.exit_code).toBe(failed.code);

    // The fix puts back the inputs of the first run: its receipt answers, and a rerun finds the same.
    p.write('src/index.ts', 'export const n: number = 1;\n');
    expect((await expectCurrentIn(p, 'tsc', env)).receipt.run_id).toBe(firstRun);
    await runCheck(p, ['tsc'], env);
    expect((await expectCurrentIn(p, 'tsc', env)).receipt.run_id).not.toBe(firstRun);
  });
});
