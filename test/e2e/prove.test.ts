import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDigest } from '../../src/core/claimDigest.js';
import { parseClaim } from '../../src/core/claimInput.js';
import { parseClaimToken } from '../../src/core/claimToken.js';
import { demoWorkspace, installedVersion, readClaim, serve, stopServing } from '../helpers/claims.js';
import { CLI, cleanEnv, REPO, type TempProject } from '../helpers/project.js';

/*
 * `vouch prove` end to end on the bundled example, through the real
 * TypeScript, oxlint and Vitest: the flagship claim earns a receipt, the
 * wrong-stage claim earns none, and nothing touches the working tree.
 */

const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
const validateReport = ajv.compile(JSON.parse(readFileSync(join(REPO, 'schemas', 'prove.schema.json'), 'utf8')));
const validateClaim = ajv.compile(JSON.parse(readFileSync(join(REPO, 'schemas', 'claim.schema.json'), 'utf8')));

function expectReport(report: unknown): void {
  expect(validateReport(report) ? null : ajv.errorsText(validateReport.errors), JSON.stringify(report)).toBeNull();
}

let app: TempProject;
let copy: TempProject;
beforeAll(() => {
  app = demoWorkspace('prove');
  copy = demoWorkspace('prove-copy');
});
afterAll(() => {
  app?.remove();
  copy?.remove();
});

describe('the bundled example claims', () => {
  it('are valid against schemas/claim.schema.json', () => {
    for (const name of ['discount-cap', 'wrong-stage']) expect(validateClaim(readClaim(app, name)) ? null : ajv.errorsText(validateClaim.errors)).toBeNull();
  });

  it('discount-cap earns a receipt whose token states the claim, the stage, the tools and the project', () => {
    const result = app.vouch(['prove', 'claims/discount-cap.json', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expectReport(report);
    const digest = claimDigest(parseClaim(readClaim(app, 'discount-cap')));
    expect(report.digest).toBe(digest);
    const token = parseClaimToken(report.receipt);
    expect(token.digest).toBe(digest);
    expect(token.stage).toBe('runtime');
    expect(token.toolchain).toEqual({ typescript: installedVersion('typescript'), linter: { name: 'oxlint', version: installedVersion('oxlint') }, vitest: installedVersion('vitest') });
    expect(token.project.tsconfig).toBe('tsconfig.json');
    expect(report.receipt).toBe(
      `vouch-claim:${digest}:runtime:typescript@${installedVersion('typescript')}:oxlint@${installedVersion('oxlint')}:vitest@${installedVersion('vitest')}:config@${report.verdict.config.digest}:tsconfig.json@${token.project.optionsDigest}`,
    );
    // The case is clean everywhere; the control breaks only where it said, with the test's failing assertion.
    const checks = report.verdict.checks;
    expect(checks.filter((check: any) => check.phase === 'case').flatMap((check: any) => check.issues.filter((issue: any) => issue.origin === 'claimant'))).toEqual([]);
    const controlRuntime = checks.find((check: any) => check.phase === 'control' && check.stage === 'runtime');
    expect(controlRuntime.issues.some((issue: any) => issue.origin === 'claimant' && issue.path === 'test/discount-cap.test.ts' && issue.line > 0)).toBe(true);
    // Nothing was written into the working tree.
    expect(app.git('status', '--porcelain', '--ignored')).toBe('');
  });
});

describe('refusals and failures', () => {
  it('a malformed claim names the member, exit 2, with the origin in --json', () => {
    app.write('bad.json', JSON.stringify({ case: { drafts: [], test: { path: 'x.test.ts' } }, control: { drafts: [], stage: 'compile', reason: 'r' } }));
    const result = app.vouch(['prove', 'bad.json', '--json']);
    expect(result.code).toBe(2);
    const error = JSON.parse(result.stdout).error;
    expect(error.origin).toBe('claimant');
    expect(error.code).toBe('malformed');
    expect(error.message).toMatch(/case\.test\.text is missing.*control\.stage must be one of/);
  });

  it('a missing claim file and a folder with no package.json are errors that name the fix', () => {
    const missing = app.vouch(['prove', 'nope.json', '--json']);
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stdout).error).toMatchObject({ code: 'claim-unreadable' });
    expect(missing.stderr).toMatch(/cannot read the claim nope\.json \(ENOENT\)/);
    // The file system root has no package.json, and nothing is above it.
    const result = app.vouch(['prove', 'claim.json'], { cwd: '/' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no package\.json in \/ or any directory above it/);
  });

  it('a hostile path is refused before any stage runs', () => {
    for (const path of ['/etc/passwd', '../escape.ts', 'src/../../escape.ts']) {
      const claim = readClaim(app, 'discount-cap');
      claim.case.drafts[0].path = path;
      app.write('hostile.json', JSON.stringify(claim));
      const result = app.vouch(['prove', 'hostile.json']);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^vouch: \[claimant\] refused: case\.drafts\[0\]\.path (is absolute|leaves the workspace)/);
    }
  });

  it('a test declared through a symlinked directory that leads outside: refused, naming the link, nothing written through it', () => {
    const claim = readClaim(app, 'discount-cap');
    claim.case.test.path = 'linked/escape.test.ts';
    app.write('symlinked.json', JSON.stringify(claim));
    const outside = mkdtempSync(join(REPO, '.tmp', 'prove-outside-'));
    symlinkSync(outside, join(app.root, 'linked'));
    try {
      const result = app.vouch(['prove', 'symlinked.json', '--json']);
      // A refusal (never a crash, never a receipt for a file outside), and the directory behind the link is as empty as before.
      expect(result.code, result.stderr).toBe(2);
      expect(JSON.parse(result.stdout).error).toMatchObject({ origin: 'workspace', code: 'refused' });
      expect(result.stderr).toContain(`case.test.path "linked/escape.test.ts" crosses the symbolic link ${join(app.root, 'linked')}`);
      expect(readdirSync(outside)).toEqual([]);
    } finally {
      unlinkSync(join(app.root, 'linked'));
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('an infinite loop in the test hits the deadline: the error names the stage and blames the claimant', () => {
    const claim = readClaim(app, 'discount-cap');
    claim.case.test.text = "import { it } from 'vitest';\nit('spins', () => {\n  while (true) {}\n});\n";
    app.write('loop.json', JSON.stringify(claim));
    const started = Date.now();
    const result = app.vouch(['prove', 'loop.json', '--deadline', '4000', '--json'], { timeout: 90_000 });
    expect(result.code, result.stderr).toBe(2);
    const error = JSON.parse(result.stdout).error;
    expect(error.code).toBe('deadline');
    expect(error.origin).toBe('claimant');
    expect(error.message).toMatch(/the runtime stage's inspection of the case did not finish within 4000 ms/);
    expect(Date.now() - started).toBeLessThan(60_000);
  });
});

describe('a stage that is slow to start', () => {
  it('the linter\'s initialize past its limit is a timeout (exit 75, stage-timeout) naming the stage, the limit and the fix, not an internal error', () => {
    const result = app.vouch(['prove', 'claims/discount-cap.json', '--no-server', '--json'], { env: cleanEnv({ VOUCH_PROVE_INITIALIZE_MS: '1' }) });
    expect(result.code, result.stderr).toBe(75);
    const error = JSON.parse(result.stdout).error;
    expect(error).toMatchObject({ origin: 'instrument', code: 'stage-timeout' });
    expect(error.message).toMatch(/^\[instrument\] stage-timeout: the lint stage's oxlint --lsp did not answer initialize within 1 ms; .*Try again, or allow it longer with VOUCH_PROVE_INITIALIZE_MS/);
    expect(result.stderr).not.toMatch(/internal error/);
    // The default limit, with no variable set, starts it as before.
    expect(app.vouch(['prove', 'claims/discount-cap.json', '--no-server']).code).toBe(0);
  });
});

/** Runs the CLI without blocking the test's event loop, so several can run at once. */
function vouchAsync(project: TempProject, args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: project.root, env: cleanEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

describe('kill -9 in the middle of a prove', () => {
  it('leaves no tool process behind and the working tree untouched', async () => {
    const prove = spawn(process.execPath, [CLI, 'prove', 'claims/discount-cap.json'], { cwd: app.root, env: cleanEnv(), stdio: 'ignore' });
    const children = (): number[] => {
      const found = spawnSync('pgrep', ['-P', String(prove.pid)], { encoding: 'utf8' }).stdout.trim();
      return found === '' ? [] : found.split('\n').map(Number);
    };
    // The linter's server is a child process; wait until it runs, then kill vouch mid-prove.
    const deadline = Date.now() + 60_000;
    let seen: number[] = [];
    while ((seen = children()).length === 0) {
      if (Date.now() > deadline || prove.exitCode !== null) throw new Error('vouch prove started no child process');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    prove.kill('SIGKILL');
    await new Promise((resolve) => prove.once('exit', resolve));
    const gone = Date.now() + 10_000;
    const alive = () => seen.filter((pid) => existsSync(`/proc/${pid}`) && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8')));
    while (alive().length > 0 && Date.now() < gone) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive()).toEqual([]);
    // Earlier tests wrote claim files at the root; the workspace's own folders must be as committed.
    expect(app.git('status', '--porcelain', '--ignored', '--', 'src', 'test', 'claims')).toBe('');
  });
});

// The tests below ask one prover served for the workspace, started once: a cold prove is about 5 s
// of CPU, a served one under 1 s. The cold path keeps the tests above (the first claim, the
// deadline, the linter's start, kill -9 of a prove), the fallbacks (a prover killed with kill -9, a
// link planted at its socket) and --no-server. The block's last two tests end its provers: the
// kill -9 test kills the first and starts another, and the last test stops that one as Ctrl-C would.
describe('with a prover served for the workspace', () => {
  let server: ChildProcess | undefined;
  beforeAll(async () => {
    server = await serve(app);
  });
  afterAll(async () => {
    if (server) await stopServing(server);
  });

  describe('the bundled example claims', () => {
    it('the same claim in another checkout of the same commit gives the same token, served or not', () => {
      const first = JSON.parse(app.vouch(['prove', 'claims/discount-cap.json', '--json']).stdout);
      expect(first.cold, 'answered by the served prover').toBe(false);
      const second = JSON.parse(copy.vouch(['prove', 'claims/discount-cap.json', '--json']).stdout);
      expect(second.receipt).toBe(first.receipt);
      expect(copy.root).not.toBe(app.root);
    });

    it('wrong-stage earns no receipt: its control breaks at type, not at the declared runtime', () => {
      const result = app.vouch(['prove', 'claims/wrong-stage.json']);
      expect(result.code, result.stderr).toBe(1);
      // Served: a cold prove says "(cold)" after the tools.
      expect(result.stdout, 'answered by the served prover').toMatch(/, vitest@[^ ]+ in \d+ ms/);
      const lines = result.stdout.trimEnd().split('\n');
      expect(lines.at(-1)).toBe('no receipt');
      expect(result.stdout).toMatch(/why: the control did not break at its declared runtime stage/);
      expect(result.stdout).toMatch(/why: the control also breaks at the type stage, not only at its declared runtime stage: Argument of type 'string' is not assignable to parameter of type 'number'\. at src\/cart\.ts:\d+/);
      expect(result.stdout).toMatch(/\[claimant\] src\/cart\.ts:\d+:\d+: Argument of type 'string' is not assignable/);
      const report = JSON.parse(app.vouch(['prove', 'claims/wrong-stage.json', '--json']).stdout);
      expectReport(report);
      expect(report.cold, 'answered by the served prover').toBe(false);
      expect(report.receipt).toBeNull();
      const controlType = report.verdict.checks.find((check: any) => check.phase === 'control' && check.stage === 'type');
      expect(controlType.issues).toContainEqual(expect.objectContaining({ origin: 'claimant', path: 'src/cart.ts', code: 'TS2345' }));
    });

    it('prints the receipt as the last line of its text', () => {
      const result = app.vouch(['prove', 'claims/discount-cap.json']);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout, 'answered by the served prover').toMatch(/, vitest@[^ ]+ in \d+ ms/);
      expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(/^receipt vouch-claim:[0-9a-f]{64}:runtime:/);
      expect(result.stdout).toMatch(/control runtime  breaks: \d+ claimant issues?/);
    });
  });

  describe('refusals and failures', () => {
    it('a test the workspace\'s Vitest would not run earns no receipt: the runtime check did not complete', () => {
      const claim = readClaim(app, 'discount-cap');
      // vitest.config.ts includes test/**/*.test.ts only.
      claim.case.test.path = 'src/discount-cap.spec.ts';
      claim.case.test.text = claim.case.test.text.replaceAll('../src/', './');
      app.write('outside-include.json', JSON.stringify(claim));
      const result = app.vouch(['prove', 'outside-include.json', '--json']);
      expect(result.code, result.stderr).toBe(1);
      const report = JSON.parse(result.stdout);
      expect(report.cold, 'answered by the served prover').toBe(false);
      const runtime = report.verdict.checks.filter((check: any) => check.stage === 'runtime');
      expect(runtime.map((check: any) => check.completed)).toEqual([false, false]);
      expect(runtime[0].issues).toEqual([expect.objectContaining({ origin: 'workspace', path: 'src/discount-cap.spec.ts', message: expect.stringContaining('would not run it there') })]);
      expect(report.why).toContain('the case inspection at the runtime stage did not complete');
      expect(JSON.stringify(report)).not.toContain('unjudged');
    });
  });

  describe('vouch prove --serve', () => {
    it('refuses a second server for the same workspace', () => {
      const second = app.vouch(['prove', '--serve', '--json']);
      expect(second.code).toBe(2);
      expect(JSON.parse(second.stdout).error.code).toBe('prove-serving');
    });

    // The block's prover dies here, as a crash would; the one started over its socket serves the next test.
    it('after kill -9 of the server, prove falls back to its own process and a new server starts over the dead socket', async () => {
      if (!server) throw new Error('the prover did not start');
      const first = server;
      server = undefined;
      expect([first.exitCode, first.signalCode], 'the block\'s prover still serves').toEqual([null, null]);
      first.kill('SIGKILL');
      await new Promise((resolve) => first.once('exit', resolve));
      const socket = join(app.root, '.vouch', 'prove.sock');
      expect(existsSync(socket)).toBe(true);
      const fallback = app.vouch(['prove', 'claims/discount-cap.json', '--json']);
      expect(fallback.code).toBe(0);
      expectReport(JSON.parse(fallback.stdout));
      expect(JSON.parse(fallback.stdout).cold).toBe(true);
      // Not silent: the dead server's socket is named, removed, and the fallback is said, on stderr and in the JSON.
      const notice = `a prover that is no longer running left ${socket}; removed it and proved in this process`;
      expect(fallback.stderr).toContain(`vouch: ${notice}\n`);
      expect(JSON.parse(fallback.stdout).notices).toEqual([notice]);
      expect(existsSync(socket)).toBe(false);

      // Kept running for the next test; the block's afterAll stops it if that one does not.
      server = await serve(app);
      // The socket is the new server's now: nothing more is said of the dead one.
      const quiet = app.vouch(['prove', 'claims/discount-cap.json', '--json']);
      expect(JSON.parse(quiet.stdout)).toMatchObject({ cold: false, notices: [] });
      expect(quiet.stderr).not.toContain('no longer running');
      // Concurrent proves through one server are judged one at a time, each with its own answer.
      const answers = await Promise.all([
        vouchAsync(app, ['prove', 'claims/discount-cap.json', '--json']),
        vouchAsync(app, ['prove', 'claims/wrong-stage.json', '--json']),
        vouchAsync(app, ['prove', 'claims/discount-cap.json', '--json']),
      ]);
      expect(answers.map((answer) => answer.code)).toEqual([0, 1, 0]);
      const [a, b, c] = answers.map((answer) => JSON.parse(answer.stdout));
      expect(a.receipt).toBe(JSON.parse(fallback.stdout).receipt);
      expect(c.receipt).toBe(a.receipt);
      expect(b.receipt).toBeNull();
      expect([a.cold, b.cold, c.cold]).toEqual([false, false, false]);
    });

    // The last test of the block: it stops the block's prover, as Ctrl-C would, and its socket goes with it.
    it('keeps the stages warm: the second prove is not cold, and the answer is the same', async () => {
      if (!server) throw new Error('the prover did not start');
      const prover = server;
      try {
        const first = JSON.parse(app.vouch(['prove', 'claims/discount-cap.json', '--json']).stdout);
        const second = JSON.parse(app.vouch(['prove', 'claims/discount-cap.json', '--json']).stdout);
        expect(first.cold).toBe(false);
        expect(second.cold).toBe(false);
        expect(second.receipt).toBe(first.receipt);
        expect(second.receipt).toMatch(/^vouch-claim:/);
        const wrong = app.vouch(['prove', 'claims/wrong-stage.json', '--json']);
        expect(wrong.code).toBe(1);
        // A claim error crosses the socket as the same error.
        const same = readClaim(app, 'discount-cap');
        same.control.drafts = same.case.drafts;
        app.write('same.json', JSON.stringify(same));
        const refused = app.vouch(['prove', 'same.json', '--json']);
        expect(refused.code).toBe(2);
        expect(JSON.parse(refused.stdout).error).toMatchObject({ origin: 'claimant', code: 'refused' });
        const again = app.vouch(['prove', 'claims/discount-cap.json', '--no-server', '--json']);
        expect(JSON.parse(again.stdout).cold).toBe(true);
      } finally {
        // SIGTERM, as Ctrl-C would, and its exit awaited.
        await stopServing(prover);
      }
      expect(existsSync(join(app.root, '.vouch', 'prove.sock'))).toBe(false);
    });
  });
});

describe('vouch prove --serve', () => {
  it('a link planted at prove.sock is never connected through: prove says so and proves in its own process', async () => {
    const elsewhere = mkdtempSync(join(REPO, '.tmp', 'prove-elsewhere-'));
    const target = join(elsewhere, 'other.sock');
    let connections = 0;
    const other = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => other.listen(target, resolve));
    const planted = join(app.root, '.vouch', 'prove.sock');
    symlinkSync(target, planted);
    try {
      const result = await vouchAsync(app, ['prove', 'claims/discount-cap.json', '--json']);
      expect(result.code, result.stdout).toBe(0);
      expect(JSON.parse(result.stdout).cold).toBe(true);
      expect(JSON.parse(result.stdout).notices).toEqual([`${planted} is not a socket (a link, or another kind of file); vouch connects only to a prover's own socket, so it proved in this process`]);
      expect(connections).toBe(0);
    } finally {
      unlinkSync(planted);
      await new Promise((resolve) => other.close(resolve));
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
