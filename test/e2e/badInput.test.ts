import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, closeSync, existsSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { inProcess } from '../helpers/inProcess.js';
import { CANNOT_DROP_PRIVILEGES, giveToNobody, IS_ROOT, vouchUnprivileged } from '../helpers/privileges.js';
import { CLI, cleanEnv, tempProject, type CliResult, type TempProject } from '../helpers/project.js';

const PASSING = 'process.exitCode = 0;\n';
const CHECK = { name: 't', kind: 'test', command: ['node', 'check.mjs'] };

/*
 * Most commands here run through vouch in this process (test/helpers/inProcess.ts): the same
 * dispatch, exit code and both streams as the built CLI, whose entry only hands the code to the
 * process. The built CLI stays where the process is the subject: the first config error (its
 * exit, and its streams as a shell sees them), an unprivileged process, a PATH without git (the
 * JavaScript scan asks git with the process's own environment) and the memory of one process.
 */

/** `vouch ARGS` in this process, in the project. */
const vouch = (project: TempProject, args: string[], env?: NodeJS.ProcessEnv): Promise<CliResult> => inProcess(project).vouch(args, env ? { env } : {});

function config(checks: unknown, extra: object = {}): string {
  return JSON.stringify({ schema: 1, ...extra, checks }, null, 2);
}

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.reverse()) cleanup();
  cleanups = [];
});
function track(project: TempProject): TempProject {
  cleanups.push(() => {
    // Give back permissions taken away, so that a non-root run can remove the tree.
    spawnSync('chmod', ['-R', 'u+rwX', project.root]);
    project.remove();
  });
  return project;
}

/**
 * A usage or config error, run with --json: exit 2, {schema:1,error:{code,message}} on stdout, and the
 * same message once on stderr as "vouch: ...". Every pattern must be in the message.
 */
function expectUsageError(result: CliResult, code: string, patterns: RegExp[]): string {
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(2);
  const parsed = JSON.parse(result.stdout);
  expect(parsed).toEqual({ schema: 1, error: { code, message: expect.any(String) } });
  const message: string = parsed.error.message;
  for (const pattern of patterns) expect(message).toMatch(pattern);
  expect(result.stderr).toBe(`vouch: ${message}\n`);
  return message;
}

describe('config errors name the JSON path and the fix', () => {
  it('malformed JSON', () => {
    const project = track(tempProject('bad-json', { 'vouch.config.json': '{ "schema": 1, "checks": [\n', 'check.mjs': PASSING }));
    const configPath = join(project.root, 'vouch.config.json');
    const message = expectUsageError(project.vouch(['status', '--json']), 'config-invalid-json', [/is not valid JSON/, /Fix the syntax/]);
    expect(message).toContain(configPath);

    // Without --json: nothing on stdout, the same message on stderr.
    const plain = project.vouch(['run']);
    expect(plain.code).toBe(2);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toBe(`vouch: ${message}\n`);
  });

  const INVALID: [string, string, RegExp][] = [
    ['an unknown field in a check', config([{ ...CHECK, timeout: 5 }]), /\$\.checks\[0\]: unknown field "timeout"/],
    ['an unknown top-level field', config([CHECK], { bogus: true }), /\$: unknown field "bogus"/],
    [
      'a wrong type at checks[1].command',
      config([CHECK, { name: 'tsc', kind: 'typecheck', command: 'tsc --noEmit' }]),
      /\$\.checks\[1\]\.command: expected array/,
    ],
    [
      'both script and command',
      config([{ ...CHECK, script: 'test' }]),
      /\$\.checks\[0\]: expected exactly one of "script" or "command"/,
    ],
    ['duplicate check names', config([CHECK, { ...CHECK, kind: 'lint' }]), /\$\.checks\[1\]\.name: .*"t" is used twice/],
    ['missing checks', JSON.stringify({ schema: 1 }), /\$\.checks: expected array/],
    ['an unknown kind', config([{ ...CHECK, kind: 'tests' }]), /\$\.checks\[0\]\.kind: expected one of "typecheck", "lint", "test", "build", "custom"/],
  ];
  for (const [what, text, path] of INVALID) {
    it(`invalid config: ${what}`, async () => {
      const project = track(tempProject('bad-config', { 'vouch.config.json': text, 'check.mjs': PASSING, 'package.json': '{"scripts":{"test":"node check.mjs"}}' }));
      const message = expectUsageError(await vouch(project, ['status', '--json']), 'config-invalid', [path, /is not a valid vouch config/, /docs\/config\.md/]);
      expect(message).toContain(join(project.root, 'vouch.config.json'));
    });
  }

  it('--config naming a file that does not exist', async () => {
    const project = track(tempProject('bad-config-path', { 'vouch.config.json': config([CHECK]), 'check.mjs': PASSING }));
    const message = expectUsageError(await vouch(project, ['status', '--config', 'nope/vouch.json', '--json']), 'config-not-found', [
      /does not exist/,
      /--config/,
      /vouch init --config nope\/vouch\.json/,
    ]);
    expect(message).toContain(join(project.root, 'nope', 'vouch.json'));
    expect(existsSync(join(project.root, 'nope'))).toBe(false);
  });
});

describe('unknown names and missing files', () => {
  it('an unknown check name suggests the nearest one, and runs nothing', async () => {
    const project = track(
      tempProject('bad-name', {
        'vouch.config.json': config([
          { name: 'typecheck', kind: 'typecheck', command: ['node', 'check.mjs'] },
          { name: 'lint', kind: 'lint', command: ['node', 'check.mjs'] },
        ]),
        'check.mjs': PASSING,
      }),
    );
    expectUsageError(await vouch(project, ['status', 'typechek', '--json']), 'unknown-check', [/no check named "typechek"/, /did you mean "typecheck"\?/, /typecheck, lint/]);
    expectUsageError(await vouch(project, ['run', 'typechek', '--json']), 'unknown-check', [/did you mean "typecheck"\?/]);
    expect((await inProcess(project).json(['log'])).receipts).toEqual([]);
  });

  // git is asked on other threads by the native scan, inline by the portable one: the same error.
  it.each([
    ['native scan', {}],
    ['JavaScript scan', { VOUCH_NATIVE: '0' }],
  ])('a repository git cannot read: exit 2, git-failed, naming git\'s own words and the fix (%s)', async (_, extra) => {
    // A .git file naming a repository that is not there.
    const files = { 'vouch.config.json': config([CHECK]), 'check.mjs': PASSING, '.git': 'gitdir: ./missing\n' };
    const project = track(tempProject('bad-git', files, { git: false }));
    for (const command of [['status', '--json'], ['run', '--json']]) {
      expectUsageError(await vouch(project, command, cleanEnv(extra)), 'git-failed', [/cannot list the project's files with git/, /not a git repository/, /safe\.directory|PATH/]);
    }
    expect((await inProcess(project).json(['log'])).receipts).toEqual([]);
  });

  it.each([
    ['native scan', {}],
    ['JavaScript scan', { VOUCH_NATIVE: '0' }],
  ])('git missing from PATH: exit 2, git-failed, saying so (%s)', (_, extra) => {
    const project = track(tempProject('bad-no-git', { 'vouch.config.json': config([CHECK]), 'check.mjs': PASSING }));
    const empty = mkdtempSync(join(tmpdir(), 'vouch-empty-path-'));
    cleanups.push(() => rmSync(empty, { recursive: true, force: true }));
    expectUsageError(project.vouch(['status', '--json'], { env: cleanEnv({ ...extra, PATH: empty }) }), 'git-failed', [/ENOENT/, /make sure git is on PATH/]);
  });

  it('a script check with no package.json', async () => {
    const project = track(tempProject('bad-nopkg', { 'vouch.config.json': config([{ name: 'test', kind: 'test', script: 'test' }]) }));
    expectUsageError(await vouch(project, ['run', '--json']), 'no-package-json', [/package\.json does not exist/, /"script" checks/, /npm init|"command" checks/]);
  });
});

describe('inputs that cannot be observed are UNVERIFIED, never CURRENT', () => {
  it.skipIf(CANNOT_DROP_PRIVILEGES)('an unreadable input file: status exits 0, UNVERIFIED, input-unreadable naming the file', async () => {
    const project = track(tempProject('bad-unreadable', { 'vouch.config.json': config([CHECK]), 'check.mjs': PASSING, 'src/secret.txt': 'secret\n' }));
    expect((await vouch(project, ['run', 't'])).code).toBe(0);
    expect((await inProcess(project).json(['status'])).checks[0].freshness).toBe('CURRENT');
    giveToNobody(project);
    chmodSync(join(project.root, 'src', 'secret.txt'), 0o000);

    const status = vouchUnprivileged(project, ['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const check = JSON.parse(status.stdout).checks[0];
    expect(check).toMatchObject({ name: 't', freshness: 'UNVERIFIED', result: 'PASS', reuse_eligible: false });
    const unreadable = check.reasons.find((r: { code: string }) => r.code === 'input-unreadable');
    expect(unreadable?.message).toMatch(/cannot read src\/secret\.txt \(EACCES\)/);
    expect(unreadable?.message).toMatch(/fix its permissions, or exclude it with "!src\/secret\.txt"/);
  });

  it('a symlink loop inside the inputs is UNVERIFIED with input-symlink-loop', async () => {
    const project = track(tempProject('bad-loop', { 'vouch.config.json': config([CHECK]), 'check.mjs': PASSING, 'src/ok.txt': 'ok\n' }));
    symlinkSync('b', join(project.root, 'src', 'a'));
    symlinkSync('a', join(project.root, 'src', 'b'));
    const run = await vouch(project, ['run', 't', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).runs[0].receipt.reuse_eligible).toBe(false);

    const check = (await inProcess(project).json(['status'])).checks[0];
    expect(check).toMatchObject({ freshness: 'UNVERIFIED', result: 'PASS', reuse_eligible: false });
    const loops = check.reasons.filter((r: { code: string }) => r.code === 'input-symlink-loop');
    expect(loops.map((r: { message: string }) => r.message.split(' ')[0]).sort()).toEqual(['src/a', 'src/b']);
    expect(loops[0].message).toMatch(/loops back on itself/);
    expect(loops[0].message).toMatch(/exclude it with "!src\/[ab]"/);
  });

  async function expectNotUtf8Unverified(root: string, vouch: (args: string[]) => Promise<CliResult>) {
    // \xff\xfe is not UTF-8 in any position.
    writeFileSync(Buffer.concat([Buffer.from(`${root}/src/`), Buffer.from([0xff, 0xfe, 0x41])]), 'x');
    const run = await vouch(['run', 't']);
    expect(run.code, run.stderr).toBe(0);
    const status = await vouch(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const check = JSON.parse(status.stdout).checks[0];
    expect(check).toMatchObject({ freshness: 'UNVERIFIED', result: 'PASS', reuse_eligible: false });
    const bad = check.reasons.find((r: { code: string }) => r.code === 'input-name-not-utf8');
    expect(bad?.message).toMatch(/src\/\uFFFD\uFFFDA/);
    expect(bad?.message).toMatch(/not valid UTF-8/);
    expect(bad?.message).toMatch(/rename it, or exclude it/);
  }

  it('a file name that is not UTF-8, in a git repository', async () => {
    const project = track(tempProject('bad-utf8-git', { 'vouch.config.json': config([CHECK]), 'check.mjs': PASSING, 'src/ok.txt': 'ok\n' }));
    await expectNotUtf8Unverified(project.root, (args) => vouch(project, args));
  });

  // A decoder that strips a leading byte order mark would name another file: "\uFEFFa.txt" as "a.txt".
  it.each([
    ['native scan', {}],
    ['JavaScript scan', { VOUCH_NATIVE: '0' }],
  ])('a file name that starts with a byte order mark is recorded as itself (%s)', async (_, extra) => {
    const env = cleanEnv(extra);
    const project = track(tempProject('bad-bom', { 'vouch.config.json': config([CHECK]), 'check.mjs': PASSING, '\uFEFFa.txt': 'marked\n' }));
    // Listed alone, it is the first name git lists, where a decoder looks for the mark.
    writeFileSync(join(project.root, '.git', 'info', 'exclude'), 'vouch.config.json\ncheck.mjs\n');
    project.git('rm', '-q', '--cached', 'vouch.config.json', 'check.mjs');
    project.git('commit', '-qm', 'only the marked file');
    expect(project.git('ls-files', '--cached', '--others', '--exclude-standard', '-z')).toBe('\uFEFFa.txt\0');
    expect((await vouch(project, ['run', 't'], env)).code).toBe(0);
    expect((await inProcess(project).json(['status', 't'], { env })).checks[0].freshness).toBe('CURRENT');
    writeFileSync(join(project.root, '\uFEFFa.txt'), 'changed\n');
    const explained = await inProcess(project).json(['explain', 't'], { env });
    expect(explained.input_changes.map((c: { change: string; path: string }) => [c.change, c.path])).toEqual([['modified', '\uFEFFa.txt']]);
  });

  /** One source and one installed package, node_modules ignored as usual. */
  function withInstalled(name: string): TempProject {
    const files = { 'vouch.config.json': config([CHECK]), 'check.mjs': PASSING, '.gitignore': 'node_modules/\n', 'src/ok.txt': 'ok\n', 'node_modules/dep/index.js': 'x\n' };
    return track(tempProject(name, files));
  }

  // node_modules is walked, not listed by git: the walk must not lose such a name, in either scan.
  it.each([
    ['native scan', {}],
    ['JavaScript scan', { VOUCH_NATIVE: '0' }],
  ])('a file or directory name under node_modules that is not UTF-8 (%s)', async (_scan, scanEnv) => {
    const project = withInstalled('bad-utf8-installed');
    const env = cleanEnv(scanEnv);
    const statusOfT = async () => {
      const status = await vouch(project, ['status', '--json'], env);
      expect(status.code, status.stderr).toBe(0);
      return JSON.parse(status.stdout).checks[0];
    };
    expect((await vouch(project, ['run', 't'], env)).code).toBe(0);
    expect((await statusOfT()).freshness).toBe('CURRENT');
    const file = Buffer.concat([Buffer.from(`${project.root}/node_modules/dep/`), Buffer.from([0x62, 0xff, 0x2e, 0x6a, 0x73])]);
    writeFileSync(file, 'x');
    const check = await statusOfT();
    expect(check).toMatchObject({ freshness: 'UNVERIFIED', reuse_eligible: false });
    const bad = check.reasons.find((r: { code: string }) => r.code === 'input-name-not-utf8');
    expect(bad?.message).toMatch(/node_modules\/dep\/b\uFFFD\.js/);
    expect(bad?.message).toMatch(/"installed" globs/);
    rmSync(file);
    expect((await statusOfT()).freshness).toBe('CURRENT');

    // A directory: everything below it would be invisible.
    const dir = Buffer.concat([Buffer.from(`${project.root}/node_modules/`), Buffer.from([0x64, 0xfe])]);
    mkdirSync(dir);
    writeFileSync(Buffer.concat([dir, Buffer.from('/index.js')]), 'x');
    expect((await statusOfT()).reasons.map((r: { code: string }) => r.code)).toContain('input-name-not-utf8');

    // Excluded as the message says, it is no longer an input.
    const excluded = { ...CHECK, installed: ['node_modules/**', '!node_modules/d?/**'] };
    project.write('vouch.config.json', config([excluded]));
    expect((await vouch(project, ['run', 't'], env)).code).toBe(0);
    expect((await statusOfT()).freshness).toBe('CURRENT');
  });

  it.each([
    ['a source link', 'src/link', {}],
    ['an installed link (native scan)', 'node_modules/dep/link', {}],
    ['an installed link (JavaScript scan)', 'node_modules/dep/link', { VOUCH_NATIVE: '0' }],
  ])('%s whose target is not UTF-8: UNVERIFIED, since two such targets could read the same', async (_what, link, scanEnv) => {
    const project = withInstalled('bad-utf8-target');
    const env = cleanEnv(scanEnv);
    const abs = Buffer.from(join(project.root, link));
    symlinkSync(Buffer.from([0x74, 0xff]), abs);
    if (link.startsWith('src/')) {
      project.git('add', '-A');
      project.git('commit', '-qm', 'link');
    }
    expect((await vouch(project, ['run', 't'], env)).code).toBe(0);
    const check = JSON.parse((await vouch(project, ['status', '--json'], env)).stdout).checks[0];
    expect(check).toMatchObject({ freshness: 'UNVERIFIED', reuse_eligible: false });
    const bad = check.reasons.find((r: { code: string }) => r.code === 'input-name-not-utf8');
    expect(bad?.message).toContain(`${link} is a link whose target is not valid UTF-8`);
    expect(bad?.message).toContain(`"!${link}"`);
    // Retargeted to other bytes that would decode the same: still never CURRENT.
    rmSync(abs);
    symlinkSync(Buffer.from([0x74, 0xfe]), abs);
    expect(JSON.parse((await vouch(project, ['status', '--json'], env)).stdout).checks[0].freshness).toBe('UNVERIFIED');
  });

  it('a file name that is not UTF-8, outside any git repository', async () => {
    // Under the system temp dir, not the repo's .tmp/: that one lies inside this repository's own checkout.
    const root = mkdtempSync(join(tmpdir(), 'vouch-nogit-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const probe = spawnSync('git', ['rev-parse', '--show-toplevel'], { cwd: root, encoding: 'utf8' });
    expect(probe.status, `${root} must not be inside a git work tree`).not.toBe(0);
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'vouch.config.json'), config([CHECK]));
    writeFileSync(join(root, 'check.mjs'), PASSING);
    writeFileSync(join(root, 'src', 'ok.txt'), 'ok\n');
    // Not a temporary project of the helper's (that one is a git repository): vouch in this process, in root.
    const outsideGit = inProcess(tempProjectAt(root));
    await expectNotUtf8Unverified(root, (args) => outsideGit.vouch(args));
  });
});

/** A directory made by the test itself, as a TempProject for inProcess, which runs vouch in its root. */
function tempProjectAt(root: string): TempProject {
  const refuse = (what: string) => () => {
    throw new Error(`${what} is not available for ${root}`);
  };
  return { root, write: refuse('write'), vouch: refuse('vouch'), json: refuse('json'), git: refuse('git'), remove: refuse('remove') };
}

/** Runs the CLI and measures its peak resident set size, with GNU time or else by polling /proc. */
async function measured(cwd: string, args: string[]): Promise<CliResult & { peakKb: number }> {
  if (existsSync('/usr/bin/time')) {
    const result = spawnSync('/usr/bin/time', ['-v', process.execPath, CLI, ...args], { cwd, env: cleanEnv(), encoding: 'utf8', timeout: 180_000 });
    if (result.error) throw result.error;
    const peak = /Maximum resident set size \(kbytes\): (\d+)/.exec(result.stderr);
    expect(peak, result.stderr).not.toBeNull();
    return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr, peakKb: Number(peak?.[1]) };
  }
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  let peakKb = 0;
  while (!done) {
    try {
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (hwm) peakKb = Math.max(peakKb, Number(hwm[1]));
    } catch {
      // exited between polls
    }
    await delay(20);
  }
  const { code, signal } = await exited;
  expect(peakKb).toBeGreaterThan(0);
  return { code, signal, stdout, stderr, peakKb };
}

describe('a file of several GB', () => {
  it('is hashed in bounded memory: run and status work, CURRENT, and a change in its last byte is seen', { timeout: 180_000 }, async () => {
    const project = track(tempProject('bad-huge', { 'vouch.config.json': config([CHECK]), 'check.mjs': PASSING }));
    const size = 2_500_000_000; // past 2 GiB: more than one Buffer can hold, so reading it whole would fail
    const huge = join(project.root, 'huge.bin');
    const fd = openSync(huge, 'w');
    try {
      writeSync(fd, 'head', 0);
    } finally {
      closeSync(fd);
    }
    // Sparse: it takes no disk space.
    const sparse = openSync(huge, 'r+');
    try {
      ftruncateSync(sparse, size);
    } finally {
      closeSync(sparse);
    }

    const run = await measured(project.root, ['run', 't']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.peakKb).toBeLessThan(300 * 1024);

    const status = await measured(project.root, ['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.peakKb).toBeLessThan(300 * 1024);
    expect(JSON.parse(status.stdout).checks[0]).toMatchObject({ freshness: 'CURRENT', result: 'PASS', reuse_eligible: true });

    const tail = openSync(huge, 'r+');
    try {
      writeSync(tail, 'z', size - 1);
    } finally {
      closeSync(tail);
    }
    const changed = await measured(project.root, ['explain', 't', '--json']);
    expect(changed.peakKb).toBeLessThan(300 * 1024);
    const explained = JSON.parse(changed.stdout);
    expect(explained.check.freshness).toBe('STALE');
    expect(explained.input_changes).toMatchObject([{ change: 'modified', path: 'huge.bin' }]);
  });
});

describe('a state dir that cannot be written', () => {
  it('--state-dir below a regular file: exit 2, state-dir-not-writable, naming --state-dir', async () => {
    const project = track(tempProject('bad-state-enotdir', { 'vouch.config.json': config([CHECK]), 'check.mjs': PASSING, 'afile': 'not a dir\n' }));
    for (const command of ['status', 'run']) {
      const message = expectUsageError(await vouch(project, [command, '--state-dir', 'afile/state', '--json']), 'state-dir-not-writable', [
        /ENOTDIR/,
        /--state-dir DIR/,
      ]);
      expect(message).toContain(join(project.root, 'afile', 'state'));
    }
  });

  it.skipIf(CANNOT_DROP_PRIVILEGES)('an empty state dir of mode 0555: exit 2, state-dir-not-writable', () => {
    const project = track(tempProject('bad-state-ro', { 'vouch.config.json': config([CHECK]), 'check.mjs': PASSING }));
    const stateDir = join(project.root, '.vouch');
    mkdirSync(stateDir);
    giveToNobody(project);
    chmodSync(stateDir, 0o555);
    for (const command of ['status', 'run']) {
      const message = expectUsageError(vouchUnprivileged(project, [command, '--json']), 'state-dir-not-writable', [/EACCES/, /--state-dir DIR/]);
      expect(message).toContain(stateDir);
    }
  });

  it.skipIf(!IS_ROOT || CANNOT_DROP_PRIVILEGES)('a state dir owned by someone else is refused, naming it and its owner: exit 2, state-dir-unsafe', () => {
    const project = track(tempProject('bad-state-foreign', { 'vouch.config.json': config([CHECK]), 'check.mjs': PASSING }));
    giveToNobody(project);
    const stateDir = join(project.root, '.vouch');
    mkdirSync(stateDir, { mode: 0o777 });
    chownSync(stateDir, 0, 0);
    chmodSync(stateDir, 0o777);
    for (const command of ['status', 'run']) {
      const message = expectUsageError(vouchUnprivileged(project, [command, '--json']), 'state-dir-unsafe', [/belongs to uid 0/, /--state-dir DIR/]);
      expect(message).toContain(stateDir);
    }
    expect(readdirSync(stateDir)).toEqual([]);
  });

  it.skipIf(CANNOT_DROP_PRIVILEGES)('a populated state dir that became read-only: exit 2, state-dir-not-writable, not a crash', async () => {
    const project = track(tempProject('bad-state-ro-db', { 'vouch.config.json': config([CHECK]), 'check.mjs': PASSING }));
    expect((await vouch(project, ['run', 't'])).code).toBe(0);
    const stateDir = join(project.root, '.vouch');
    giveToNobody(project);
    chmodSync(stateDir, 0o555);
    chmodSync(join(stateDir, 'state.db'), 0o444);
    for (const command of ['status', 'run']) {
      const result = vouchUnprivileged(project, [command, '--json']);
      expect(result.stderr).not.toMatch(/internal error/);
      const message = expectUsageError(result, 'state-dir-not-writable', [/--state-dir DIR/]);
      expect(message).toContain(stateDir);
    }
  });
});
