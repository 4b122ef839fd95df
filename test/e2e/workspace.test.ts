import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Json } from '../helpers/answers.js';
import { claudeBash } from '../helpers/hookInput.js';
import { inProcess } from '../helpers/inProcess.js';
import { CLI, tempProject, type CliResult, type TempProject } from '../helpers/project.js';
import { workspaceEnv, workspaceFixture, type WorkspaceManager } from '../helpers/workspaceFixture.js';

/*
 * Package checks (docs/workspaces.md): each runs in its package with the
 * package manager's own invocation, and its inputs are its package, the
 * workspace packages it depends on and the root's shared config.
 *
 * Runs and status questions go through vouch in this process (test/helpers/inProcess.ts): the
 * same command modules, and the same package managers as child processes, without a Node start
 * per command. The hook runs as the host runs it, a process with its JSON on stdin, and so does
 * the run whose output of two checks side by side must reach a real stdout unmixed.
 *
 * The tests that begin with every package check run once (`vouch run test`) share that run: it is
 * made once per fixture, and each test works on its own copy of the workspace, receipts included.
 */

const projects: TempProject[] = [];
afterEach(() => {
  for (const project of projects.splice(0)) project.remove();
});

function fixture(manager: WorkspaceManager, options: Parameters<typeof workspaceFixture>[1] = {}): TempProject {
  const project = workspaceFixture(manager, options);
  projects.push(project);
  return project;
}

/** Workspaces whose checks all ran once, by fixture, with what that run printed; each test gets a copy. */
const ranTemplates = new Map<string, { template: TempProject; ran: CliResult }>();
afterAll(() => {
  for (const { template } of ranTemplates.values()) template.remove();
});

/**
 * A copy of the fixture after `vouch run test`, and that run's result. A copy keeps its receipts
 * CURRENT: they name paths relative to the root, and the copied files have the same bytes.
 */
async function ranFixture(manager: WorkspaceManager, options: { toolsTest?: boolean } = {}): Promise<{ project: TempProject; ran: CliResult }> {
  const key = `${manager}${options.toolsTest ? '+tools' : ''}`;
  let prepared = ranTemplates.get(key);
  if (!prepared) {
    const template = workspaceFixture(manager, options);
    prepared = { template, ran: await vouch(template, ['run', 'test']) };
    ranTemplates.set(key, prepared);
  }
  const project = tempProject(`ws-${key}-copy`, {}, { git: false });
  cpSync(prepared.template.root, project.root, { recursive: true, verbatimSymlinks: true });
  projects.push(project);
  return { project, ran: prepared.ran };
}

const env = workspaceEnv();
const freshness = async (project: TempProject): Promise<Record<string, string>> =>
  Object.fromEntries((await inProcess(project).json(['status'], { env })).checks.map((check: Json) => [check.name, `${check.freshness} ${check.result ?? '-'}`]));
/** `vouch ARGS` in this process, in the workspace's environment. */
const vouch = (project: TempProject, args: string[], options: { env?: NodeJS.ProcessEnv } = {}) => inProcess(project).vouch(args, { env: options.env ?? env });

describe.each(['pnpm', 'npm', 'yarn'] as const)('a %s workspace', (manager) => {
  it('runs each package check in its package, and an edit reaches only the packages that depend on it', async () => {
    const { project, ran } = await ranFixture(manager);
    expect(ran.code, ran.stderr).toBe(0);
    for (const name of ['a', 'b', 'c']) expect(ran.stdout).toContain(`test ${name}: ok`);
    expect(await freshness(project)).toEqual({ '@demo/a#test': 'CURRENT PASS', '@demo/b#test': 'CURRENT PASS', '@demo/c#test': 'CURRENT PASS' });

    appendFileSync(join(project.root, 'packages/c/src/index.js'), '// edit\n');
    expect(await freshness(project)).toEqual({ '@demo/a#test': 'CURRENT PASS', '@demo/b#test': 'CURRENT PASS', '@demo/c#test': 'STALE PASS' });
    // README.md and an unrelated package are no input of any package check.
    appendFileSync(join(project.root, 'README.md'), 'more\n');
    appendFileSync(join(project.root, 'packages/tools/package.json'), '\n');
    expect((await freshness(project))['@demo/a#test']).toBe('CURRENT PASS');

    const again = await vouch(project, ['run', 'test', '--if-due']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('test c: ok');
    expect(again.stdout).not.toContain('test a: ok');
    expect(await freshness(project)).toEqual({ '@demo/a#test': 'CURRENT PASS', '@demo/b#test': 'CURRENT PASS', '@demo/c#test': 'CURRENT PASS' });

    appendFileSync(join(project.root, 'packages/a/src/index.js'), '// edit\n');
    expect(await freshness(project)).toEqual({ '@demo/a#test': 'STALE PASS', '@demo/b#test': 'STALE PASS', '@demo/c#test': 'STALE PASS' });
  });
});

describe('package checks', () => {
  it('the root shared config is an input of every package check', async () => {
    const { project, ran } = await ranFixture('npm');
    expect(ran.code).toBe(0);
    appendFileSync(join(project.root, 'tsconfig.base.json'), '\n');
    expect(Object.values(await freshness(project))).toEqual(['STALE PASS', 'STALE PASS', 'STALE PASS']);
  });

  it('a dependency added between packages changes the definition: the receipt goes STALE', async () => {
    // Its receipt: the one `vouch run test` made.
    const { project, ran } = await ranFixture('npm');
    expect(ran.code).toBe(0);
    project.write('packages/a/package.json', JSON.stringify({ name: '@demo/a', version: '1.0.0', dependencies: { '@demo/tools': '1.0.0' }, scripts: { test: 'node test.js' } }));
    const status = (await inProcess(project).json(['status', '@demo/a#test'], { env })).checks[0];
    expect(status.freshness).toBe('STALE');
    expect(status.reasons.map((reason: Json) => reason.code)).toContain('definition-changed');
  });

  it('runs independent packages side by side, and never interleaves their output', async () => {
    const project = fixture('npm', {
      testMs: 700,
      checks: ['a', 'tools'].flatMap((name) => [{ name: `@demo/${name}#check`, kind: 'test', command: ['node', '-e', `for (let i = 0; i < 5; i++) console.log('${name} line ' + i); setTimeout(() => console.log('${name} end'), 700)`], package: `packages/${name}` }]),
    });
    const ran = project.vouch(['run', 'check', '--concurrency', '2'], { env });
    expect(ran.code, ran.stderr).toBe(0);
    const lines = ran.stdout.trim().split('\n');
    // Each check's six lines are together, whichever ended first.
    const first = lines[0]!.split(' ')[0]!;
    expect(lines.slice(0, 6).every((line) => line.startsWith(first))).toBe(true);
    expect(lines.slice(6).every((line) => !line.startsWith(first))).toBe(true);
    expect(lines).toHaveLength(12);
    // Side by side: each started before the other finished (the receipts' own times).
    const [one, two] = (await inProcess(project).json(['log'], { env })).receipts as Array<{ started_at: string; finished_at: string }>;
    expect(Date.parse(one!.started_at)).toBeLessThan(Date.parse(two!.finished_at));
    expect(Date.parse(two!.started_at)).toBeLessThan(Date.parse(one!.finished_at));
    expect(ran.stderr).toMatch(/running @demo\/a#check/);
  });

  it('runs a package check after the checks of the packages it depends on', async () => {
    const project = fixture('npm');
    const ran = await vouch(project, ['run', '@demo/c#test', '@demo/b#test', '@demo/a#test', '--concurrency', '4']);
    expect(ran.code, ran.stderr).toBe(0);
    expect([...ran.stdout.matchAll(/test (\w): ok/g)].map((match) => match[1])).toEqual(['a', 'b', 'c']);
  });

  it('status groups checks by package', async () => {
    const project = fixture('npm');
    const text = (await vouch(project, ['status'])).stdout;
    expect(text).toMatch(/^@demo\/a \(packages\/a\):\n@demo\/a#test +UNVERIFIED/m);
    expect(text.indexOf('@demo/b (packages/b):')).toBeLessThan(text.indexOf('@demo/c (packages/c):'));
  });

  it('refuses a "package" that is not a member, a link to one, or a path outside the root', async () => {
    const project = fixture('npm');
    symlinkSync(join(project.root, 'packages/a'), join(project.root, 'packages/linked'));
    for (const dir of ['packages/linked', 'packages/none', '../x', 'packages/../packages/a', '/etc']) {
      project.write('vouch.config.json', JSON.stringify({ schema: 1, checks: [{ name: 'x#test', kind: 'test', script: 'test', package: dir }] }));
      const result = await vouch(project, ['status', '--json']);
      expect(result.code, dir).toBe(2);
      expect(JSON.parse(result.stdout).error.code, dir).toMatch(/^config-invalid$/);
    }
  });

  it('a root check whose command is "turbo run test" gets a receipt, and turbo keeps its own cache', async () => {
    const project = fixture('pnpm', { checks: [{ name: 'all-tests', kind: 'test', command: ['turbo', 'run', 'test'] }] });
    project.write('package.json', JSON.stringify({ name: 'ws', private: true, packageManager: 'pnpm@10.34.9', scripts: { test: 'turbo run test' } }));
    project.write('turbo.json', JSON.stringify({ tasks: { test: { outputs: [] } } }));
    project.write('.gitignore', '.turbo/\nnode_modules/\n');
    project.git('add', '-A');
    project.git('commit', '-qm', 'turbo');
    const turboEnv = { ...env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1', TURBO_NO_UPDATE_NOTIFIER: '1' };
    const first = await vouch(project, ['run', 'all-tests'], { env: turboEnv });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('test c: ok');
    expect((await inProcess(project).json(['status', 'all-tests'], { env: turboEnv })).checks[0].freshness).toBe('CURRENT');
    // A second run replays turbo's cache: vouch neither replaces it nor turns it off.
    const second = await vouch(project, ['run', 'all-tests'], { env: turboEnv });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/cache hit, replaying logs/);
    expect(second.stdout).toMatch(/3 cached, 3 total/);
  });

  it('"vouch explain test" asks which package check is meant', async () => {
    const project = fixture('npm');
    const result = await vouch(project, ['explain', 'test']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('"test" is 3 package checks (@demo/a#test, @demo/b#test, @demo/c#test); name one of them');
  });
});

/** The hook's decision for a command typed in `cwd`: deny (with its reason), rewrite (with the command), or pass. */
function decide(project: TempProject, command: string, cwd = project.root): { kind: 'deny' | 'rewrite' | 'pass'; text: string } {
  const result = spawnSync(process.execPath, [CLI, 'hook', 'claude'], { cwd, input: JSON.stringify(claudeBash(cwd, command)), env, encoding: 'utf8', timeout: 60_000 });
  expect(result.status, result.stderr).toBe(0);
  if (result.stdout === '') return { kind: 'pass', text: '' };
  const out = JSON.parse(result.stdout).hookSpecificOutput;
  if (out.permissionDecision === 'deny') return { kind: 'deny', text: out.permissionDecisionReason };
  if (out.updatedInput) return { kind: 'rewrite', text: out.updatedInput.command };
  return { kind: 'pass', text: JSON.stringify(out) };
}

/** How a rewrite names this vouch when PATH has none: this node and the CLI's real path. */
const program = () => `${process.execPath} ${realpathSync(CLI)}`;

describe.each(['pnpm', 'npm', 'yarn'] as const)('the hook in a %s workspace', (manager) => {
  // yarn 1's form: this yarn is 1.22 (yarn 2+'s foreach is refused there, and tested in the corpus).
  const fanOut = { pnpm: 'pnpm -r test', npm: 'npm run test --workspaces --if-present', yarn: 'yarn workspaces run test' }[manager];

  it(`denies "${fanOut}" when every package check is CURRENT PASS, and rewrites it to the changed package's check alone after an edit`, async () => {
    const { project, ran: first } = await ranFixture(manager, { toolsTest: manager === 'yarn' });
    expect(first.code).toBe(0);

    const denied = decide(project, fanOut);
    expect(denied.kind, denied.text).toBe('deny');
    for (const name of ['a', 'b', 'c']) expect(denied.text).toMatch(new RegExp(`^- check "@demo/${name}#test" PASSED in run \\S+`, 'm'));
    expect(denied.text).toContain(`VOUCH_FORCE=1 ${fanOut}`);

    appendFileSync(join(project.root, 'packages/c/src/index.js'), '// edit\n');
    const rewritten = decide(project, fanOut);
    expect(rewritten).toEqual({ kind: 'rewrite', text: `${program()} run '@demo/c#test' --if-due` });

    // The rewrite runs only c's test, and leaves all three CURRENT.
    const ran = spawnSync('/bin/sh', ['-c', rewritten.text], { cwd: project.root, env, encoding: 'utf8' });
    expect(ran.status, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('test c: ok');
    expect(ran.stdout).not.toContain('test a: ok');
    expect(decide(project, fanOut).kind).toBe('deny');
  });
});

describe('the hook on package commands', () => {
  it('matches a script typed in a package directory, or after cd into it', async () => {
    const { project, ran } = await ranFixture('pnpm');
    expect(ran.code).toBe(0);
    expect(decide(project, 'pnpm test', join(project.root, 'packages/b')).kind).toBe('deny');
    expect(decide(project, 'cd packages/b && pnpm test').kind).toBe('deny');
    appendFileSync(join(project.root, 'packages/a/src/index.js'), '// edit\n');
    expect(decide(project, 'cd packages/b && pnpm test')).toEqual({ kind: 'rewrite', text: `cd packages/b && ${program()} run '@demo/b#test' --if-due` });
    expect(decide(project, 'pnpm --filter @demo/b... test')).toEqual({ kind: 'rewrite', text: `${program()} run '@demo/a#test' '@demo/b#test' --if-due` });
  });

  it('runs as typed what it cannot resolve exactly, and never denies it', async () => {
    const { project, ran } = await ranFixture('pnpm');
    expect(ran.code).toBe(0);
    for (const command of [
      'pnpm --filter @demo/nothing test', // matches no package
      'pnpm -r test -- --coverage', // arguments for the script
      'pnpm --filter "[origin/main]" test', // changed since a commit
      'npm test --workspaces', // another package manager than the checks'
      'pnpm --filter @demo/tools test', // a package with no test script
      'pnpm -r --some-new-flag test',
    ]) {
      expect(decide(project, command).kind, command).toBe('pass');
    }
    // The root has a test script too: once .npmrc takes the root into recursive runs, "pnpm -r test" runs it as well.
    expect(decide(project, 'pnpm -r test').kind).toBe('deny');
    project.write('.npmrc', 'include-workspace-root=true\n');
    expect(decide(project, 'pnpm -r test').kind).toBe('pass');
  });

  it('"vouch run test" typed by an agent stands for every package check of that script', async () => {
    const { project, ran } = await ranFixture('npm');
    expect(ran.code).toBe(0);
    expect(decide(project, 'vouch run test').kind).toBe('deny');
    appendFileSync(join(project.root, 'packages/b/src/index.js'), '// edit\n');
    expect(decide(project, 'vouch run test')).toEqual({ kind: 'rewrite', text: `${program()} run '@demo/b#test' '@demo/c#test' --if-due` });
  });
});
