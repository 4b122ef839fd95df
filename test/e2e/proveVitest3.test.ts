import type { ChildProcess } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseClaimToken } from '../../src/core/claimToken.js';
import { demoWorkspace, installedVersion, readClaim, serve, stopServing } from '../helpers/claims.js';
import type { TempProject } from '../helpers/project.js';
import { fakeVitest, linkVitest, VITEST_3, VITEST_4 } from '../helpers/vitestCopies.js';

/*
 * `vouch prove` on a workspace whose Vitest is 3.2 gives the verdicts it
 * gives under Vitest 4; an older Vitest is refused before any stage runs;
 * and a served prover notices when the workspace's Vitest is swapped.
 */

const V3 = installedVersion('vitest3');
const V4 = installedVersion('vitest');

/** The discount-cap claim with a test that never looks at the cap: its control passes where it must break. */
function weakTestClaim(app: TempProject): unknown {
  const claim = readClaim(app, 'discount-cap');
  claim.case.test = {
    path: 'test/discount-weak.test.ts',
    text: `import { expect, it } from 'vitest';\nimport { totals } from '../src/cart.js';\n\nit('totals a cart without a code', () => {\n  expect(totals([{ sku: 'a', unitPrice: 500, quantity: 2 }]).total).toBe(1000);\n});\n`,
  };
  return claim;
}

/** A verdict's checks without timings or versions: what two Vitests must agree on. */
function outcome(report: any): unknown {
  return report.verdict.checks.map((check: any) => ({
    stage: check.stage,
    phase: check.phase,
    completed: check.completed,
    issues: check.issues.map((issue: any) => ({ origin: issue.origin, path: issue.path, line: issue.line, message: issue.message })),
  }));
}

function prove(app: TempProject, claim: string, extra: string[] = []): { code: number | null; report: any; stderr: string } {
  const result = app.vouch(['prove', claim, '--json', ...extra]);
  try {
    return { code: result.code, report: JSON.parse(result.stdout), stderr: result.stderr };
  } catch {
    throw new Error(`vouch prove ${claim} printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
}

// Served by a prover per workspace, so each stage is loaded once for the claims, and again only
// where a test swaps or replaces the workspace's Vitest (the last two tests, one on each workspace):
// a cold prove is about 5 s of CPU, a served one under 1 s. The cold path under Vitest 3.2 is the
// next block's.
describe('claims under Vitest 3.2', () => {
  let v3: TempProject;
  let v4: TempProject;
  const servers: ChildProcess[] = [];
  beforeAll(async () => {
    v3 = demoWorkspace('prove-vitest3');
    v4 = demoWorkspace('prove-vitest4');
    linkVitest(v3.root, VITEST_3);
    for (const app of [v3, v4]) app.write('weak.json', JSON.stringify(weakTestClaim(app)));
    // Both started, and both kept for afterAll even when one fails to start.
    const started = await Promise.allSettled([serve(v3), serve(v4)]);
    for (const outcome of started) if (outcome.status === 'fulfilled') servers.push(outcome.value);
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
  });
  afterAll(async () => {
    for (const server of servers.splice(0)) await stopServing(server);
    v3?.remove();
    v4?.remove();
  });

  it('a claim whose control must break at runtime and does: a receipt naming vitest 3, the same verdict as under vitest 4', () => {
    const three = prove(v3, 'claims/discount-cap.json');
    const four = prove(v4, 'claims/discount-cap.json');
    expect(three.code, three.stderr).toBe(0);
    expect(four.code, four.stderr).toBe(0);
    expect([three.report.cold, four.report.cold], 'answered by the warm servers').toEqual([false, false]);
    expect(parseClaimToken(three.report.receipt).toolchain.vitest).toBe(V3);
    expect(parseClaimToken(four.report.receipt).toolchain.vitest).toBe(V4);
    expect(three.report.receipt.replace(`:vitest@${V3}:`, `:vitest@${V4}:`)).toBe(four.report.receipt);
    expect(outcome(three.report)).toEqual(outcome(four.report));
    // The failing assertions are located in the declared test, as Vitest 4's parsed stacks locate them.
    const control = three.report.verdict.checks.find((check: any) => check.phase === 'control' && check.stage === 'runtime');
    expect(control.issues.length).toBeGreaterThan(0);
    for (const issue of control.issues) expect(issue).toMatchObject({ origin: 'claimant', path: 'test/discount-cap.test.ts', line: expect.any(Number) });
    // No draft and no test was written into the working tree.
    expect(v3.git('status', '--porcelain', '--', 'src', 'test', 'claims')).toBe('');
  });

  it('a claim whose test does not notice the break: the control passes, no receipt, under both', () => {
    const three = prove(v3, 'weak.json');
    const four = prove(v4, 'weak.json');
    expect([three.code, four.code]).toEqual([1, 1]);
    expect(three.report.receipt).toBeNull();
    const controlRuntime = three.report.verdict.checks.find((check: any) => check.phase === 'control' && check.stage === 'runtime');
    expect(controlRuntime).toMatchObject({ completed: true, issues: [] });
    expect(outcome(three.report)).toEqual(outcome(four.report));
  });

  it('a claim whose control breaks at another stage than declared: no receipt, the same verdict under both', () => {
    const three = prove(v3, 'claims/wrong-stage.json');
    const four = prove(v4, 'claims/wrong-stage.json');
    expect([three.code, four.code]).toEqual([1, 1]);
    expect(outcome(three.report)).toEqual(outcome(four.report));
    const text = v3.vouch(['prove', 'claims/wrong-stage.json']);
    expect(text.stdout).toMatch(/judged by typescript@[^,]+, oxlint@[^,]+, vitest@3\.2\.\d+ /);
    expect(text.stdout).not.toMatch(/ENOENT|returned no result/);
  });

  // The Vitest 4 workspace and its prover, once the claims above are judged: the prover warmed on
  // Vitest 4 as that workspace resolves it, and nothing after this block uses them.
  describe('a served prover after the workspace\'s Vitest is swapped', () => {
    it('names and uses the Vitest linked now, each way, and refuses one too old, without a restart', () => {
      const app = v4;
      const verdicts: { vitest: string; outcome: unknown; notices: unknown }[] = [];
      for (const target of [VITEST_4, VITEST_3, VITEST_4]) {
        linkVitest(app.root, target);
        const { code, report, stderr } = prove(app, 'claims/discount-cap.json');
        expect(code, stderr).toBe(0);
        // Served, not proved in a process of its own that would know nothing of the swap.
        expect(report.notices).toEqual([]);
        const token = parseClaimToken(report.receipt);
        expect(report.verdict.toolchain.vitest).toBe(token.toolchain.vitest);
        verdicts.push({ vitest: token.toolchain.vitest ?? '', outcome: outcome(report), notices: report.notices });
      }
      expect(verdicts.map((verdict) => verdict.vitest)).toEqual([V4, V3, V4]);
      expect(verdicts[1]!.outcome).toEqual(verdicts[0]!.outcome);
      expect(verdicts[2]!.outcome).toEqual(verdicts[0]!.outcome);

      fakeVitest(app.root, '3.0.1');
      const old = prove(app, 'claims/discount-cap.json');
      expect(old.code).toBe(2);
      expect(old.report.error).toMatchObject({ code: 'unsupported', origin: 'workspace', message: '[workspace] unsupported: vitest 3.0.1; vouch needs vitest ≥ 3.2' });

      linkVitest(app.root, VITEST_3);
      const back = prove(app, 'claims/discount-cap.json');
      expect(back.code, back.stderr).toBe(0);
      expect(parseClaimToken(back.report.receipt).toolchain.vitest).toBe(V3);
    });
  });

  // The Vitest 3.2 workspace and its prover, once the claims above are judged: its Vitest becomes a
  // copy of Vitest 4, which the prover loads, and is then rewritten in place. This test stops the prover.
  describe('a served prover after the workspace\'s Vitest is replaced in place', () => {
    it('refuses to name a version the loaded code is not, and says to restart', async () => {
      const app = v3;
      const server = servers[0];
      if (server === undefined) throw new Error('the prover did not start');
      // A real folder, as npm installs it, not a link: an upgrade rewrites it where it is.
      rmSync(join(app.root, 'node_modules', 'vitest'), { recursive: true, force: true });
      cpSync(VITEST_4, join(app.root, 'node_modules', 'vitest'), { recursive: true });
      try {
        const first = prove(app, 'claims/discount-cap.json');
        expect(first.code, first.stderr).toBe(0);
        expect(parseClaimToken(first.report.receipt).toolchain.vitest).toBe(V4);
        const manifest = join(app.root, 'node_modules', 'vitest', 'package.json');
        writeFileSync(manifest, readFileSync(manifest, 'utf8').replace(`"version": "${V4}"`, '"version": "4.99.0"'));
        const after = prove(app, 'claims/discount-cap.json');
        expect(after.code).toBe(2);
        expect(after.report.error).toMatchObject({ origin: 'workspace', code: 'unsupported' });
        expect(after.report.error.message).toContain(`vitest 4.99.0 replaced ${V4} in place`);
        expect(after.report.error.message).toContain('restart vouch');
      } finally {
        await stopServing(server);
      }
      // A fresh process loads the new one and names it.
      const fresh = prove(app, 'claims/discount-cap.json', ['--no-server']);
      expect(fresh.code, fresh.stderr).toBe(0);
      expect(parseClaimToken(fresh.report.receipt).toolchain.vitest).toBe('4.99.0');
    });
  });
});

describe('a Vitest 3.2 test that misbehaves', () => {
  let app: TempProject;
  beforeAll(() => {
    app = demoWorkspace('prove-vitest3-rude');
    linkVitest(app.root, VITEST_3);
  });
  afterAll(() => app?.remove());

  it('what the test writes to stdout stays out of the verdict: --json still parses', () => {
    const claim = readClaim(app, 'discount-cap');
    claim.case.test.text = claim.case.test.text.replace("import { describe", "process.stdout.write('VOUCH-MARKER raw\\n');\nimport { describe");
    expect(claim.case.test.text).toContain('VOUCH-MARKER');
    app.write('loud.json', JSON.stringify(claim));
    const result = app.vouch(['prove', 'loud.json', '--json', '--no-server']);
    expect(result.stdout).not.toContain('VOUCH-MARKER');
    expect(result.stderr).not.toContain('VOUCH-MARKER');
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).receipt).toMatch(/:vitest@3\./);
    // The same with forked workers, whose output Vitest 3 pipes into vouch's too.
    const config = readFileSync(join(app.root, 'vitest.config.ts'), 'utf8');
    app.write('vitest.config.ts', config.replace('test: {', "test: {\n    pool: 'forks',"));
    try {
      const forked = app.vouch(['prove', 'loud.json', '--json', '--no-server']);
      expect(forked.stdout).not.toContain('VOUCH-MARKER');
      expect(forked.code, forked.stderr).toBe(0);
    } finally {
      app.write('vitest.config.ts', config);
    }
  });

  it('an infinite loop in the test hits the deadline, blames the claimant, and vouch exits: the spinning thread is terminated', () => {
    const claim = readClaim(app, 'discount-cap');
    claim.case.test = { path: 'test/loop.test.ts', text: `import { it } from 'vitest';\nit('spins', () => {\n  while (true) {}\n});\n` };
    app.write('loop.json', JSON.stringify(claim));
    const started = Date.now();
    const result = app.vouch(['prove', 'loop.json', '--json', '--no-server', '--deadline', '4000'], { timeout: 60_000 });
    expect(result.signal).toBeNull();
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout).error).toMatchObject({ origin: 'claimant', code: 'deadline' });
    expect(JSON.parse(result.stdout).error.message).toMatch(/runtime stage/);
    // Four seconds of deadline, then the stage's threads go; waiting on the spinning one would take the 60 s timeout.
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

describe('a Vitest older than 3.2', () => {
  let app: TempProject;
  beforeAll(() => {
    app = demoWorkspace('prove-vitest-old');
  });
  afterAll(() => app?.remove());

  for (const version of ['3.0.1', '2.1.9']) {
    it(`vitest ${version} is refused before any stage runs, in one line, and as a workspace error in --json`, () => {
      fakeVitest(app.root, version);
      const text = app.vouch(['prove', 'claims/discount-cap.json', '--no-server']);
      expect(text.code).toBe(2);
      expect(text.stdout).toBe('');
      expect(text.stderr).toBe(`vouch: [workspace] unsupported: vitest ${version}; vouch needs vitest ≥ 3.2\n`);
      const json = prove(app, 'claims/discount-cap.json', ['--no-server']);
      expect(json.code).toBe(2);
      expect(json.report.error).toEqual({ code: 'unsupported', origin: 'workspace', message: `[workspace] unsupported: vitest ${version}; vouch needs vitest ≥ 3.2` });
    });
  }

  it('a served prover refuses to start on it', () => {
    fakeVitest(app.root, '3.1.4');
    const serve = app.vouch(['prove', '--serve', '--json'], { timeout: 60_000 });
    expect(serve.code).toBe(2);
    expect(JSON.parse(serve.stdout).error).toMatchObject({ code: 'unsupported', origin: 'workspace' });
  });
});
