import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { proveText } from '../../src/api/proveText.js';
import { parseClaimToken } from '../../src/core/claimToken.js';
import { demoWorkspace, readClaim, serve, stopServing } from '../helpers/claims.js';
import { CLI, cleanEnv, type TempProject } from '../helpers/project.js';

/*
 * Verdicts that say what they mean, end to end on copies of the bundled
 * example through the real TypeScript, oxlint and Vitest: the claimant's own
 * issues come first, the token covers the judges' config, a parse error is
 * located on its own line, and a tool's noise goes to the prover's log.
 *
 * A cold prove is about 5 s of CPU, a served one 1 to 2 s. So the tests whose
 * point is not the cold path share one copy of the example and one prover it
 * serves (vouch prove --serve), each test's changes to the copy undone after
 * it; the verdict is the same either way (test/e2e/prove.test.ts). The cold
 * path keeps its proves: the noise while the stages warm and a quiet
 * workspace, on copies of their own, and the token test's --no-server prove,
 * which its served answers must match.
 */

let app: TempProject | undefined;
afterEach(() => {
  app?.remove();
  app = undefined;
});

let shared: { app: TempProject; base: string; server: ChildProcess } | undefined;
/** The shared copy; the first test that asks for it starts its served prover. */
const sharedApp = async (): Promise<TempProject> => {
  if (!shared) {
    const made = demoWorkspace('verdict-shared');
    shared = { app: made, base: made.git('rev-parse', 'HEAD').trim(), server: await serve(made) };
  }
  return shared.app;
};
afterEach(() => {
  // Back to the example as committed: what a test committed, changed or added goes; the prover's state dir stays.
  shared?.app.git('reset', '-q', '--hard', shared.base);
  shared?.app.git('clean', '-fdq', '-e', '.vouch');
});
afterAll(async () => {
  if (shared) await stopServing(shared.server);
  shared?.app.remove();
});

const proveJson = (project: TempProject, claim: string) => {
  const result = project.vouch(['prove', claim, '--json', '--no-server']);
  return { ...result, report: JSON.parse(result.stdout) };
};

// Answered by the served prover: --json says cold: false, the text's "judged by" line has no "(cold)".
const servedJson = (project: TempProject, claim: string) => {
  const result = project.vouch(['prove', claim, '--json']);
  const report = JSON.parse(result.stdout);
  expect(report.cold, 'answered by the served prover').toBe(false);
  return { ...result, report };
};
const servedText = (project: TempProject, claim: string) => {
  const result = project.vouch(['prove', claim]);
  expect(result.stdout, 'answered by the served prover').toMatch(/^judged by .* in \d+ ms$/m);
  expect(result.stdout).not.toMatch(/^judged by .*\(cold\)/m);
  return result;
};

describe('the claimant\'s own issues', () => {
  it('come first, all of them, on a workspace with 77 baseline type errors; the baseline is capped', async () => {
    const app = await sharedApp();
    // Already broken on disk, before any claim: the baseline.
    app.write('src/legacy.ts', Array.from({ length: 77 }, (_, n) => `export const legacy${n}: number = 'not a number';\n`).join(''));
    app.git('add', '-A');
    app.git('commit', '-qm', 'legacy');
    const result = servedText(app, 'claims/wrong-stage.json');
    expect(result.code, result.stderr).toBe(1);
    const lines = result.stdout.split('\n');
    const at = lines.findIndex((line) => line.startsWith('  control type'));
    expect(lines[at]).toMatch(/breaks: 1 claimant issue, 77 other issues/);
    expect(lines[at + 1]).toMatch(/^    \[claimant\] src\/cart\.ts:\d+:\d+: Argument of type 'string' is not assignable/);
    const under = lines.slice(at + 1, lines.findIndex((line, index) => index > at && line.startsWith('  control lint')));
    expect(under.filter((line) => line.includes('[workspace] src/legacy.ts'))).toHaveLength(5);
    expect(under.at(-1)).toBe('    … and 72 more (--json has all)');
  });
});

describe('a lint error the drafted file already had on disk', () => {
  it('is the workspace\'s, listed, and blocks no receipt; a second one like it is the claimant\'s', async () => {
    const app = await sharedApp();
    app.write('.oxlintrc.json', '{ "rules": { "no-debugger": "error" } }\n');
    // Already in src/cart.ts on disk, and kept by both of the claim's drafts of it, which move it down.
    const legacy = 'export function pause(): void {\n  debugger;\n}\n';
    app.write('src/cart.ts', readFileSync(join(app.root, 'src/cart.ts'), 'utf8') + legacy);
    app.git('commit', '-qam', 'legacy');
    const claim = readClaim(app, 'discount-cap');
    for (const draft of [...claim.case.drafts, ...claim.control.drafts]) draft.text += legacy;
    app.write('kept.json', JSON.stringify(claim));
    const kept = servedText(app, 'kept.json');
    expect(kept.code, kept.stdout + kept.stderr).toBe(0);
    const line = claim.case.drafts[0].text.split('\n').indexOf('  debugger;') + 1;
    expect(kept.stdout).toMatch(/^ {2}case {4}lint {5}clean, 1 other issue/m);
    expect(kept.stdout).toContain(`    [workspace] src/cart.ts:${line}:3: `);

    claim.case.drafts[0].text += 'export function halt(): void {\n  debugger;\n}\n';
    app.write('again.json', JSON.stringify(claim));
    const { code, report } = servedJson(app, 'again.json');
    expect(code).toBe(1);
    const lint = report.verdict.checks.find((check: any) => check.phase === 'case' && check.stage === 'lint');
    expect(lint.issues.map((issue: any) => [issue.origin, issue.line])).toEqual([
      ['claimant', line + 3],
      ['workspace', line],
    ]);
    expect(report.why).toEqual([expect.stringContaining('the case is not clean at the lint stage')]);
  });
});

describe('a type error the drafted file already had on disk', () => {
  it('is the workspace\'s, listed, and blocks no receipt; a second one like it is the claimant\'s', async () => {
    const app = await sharedApp();
    // Already in src/cart.ts on disk, and kept by both of the claim's drafts of it, which move it down.
    const legacy = 'export function legacyLabel(): string {\n  return 1;\n}\n';
    app.write('src/cart.ts', readFileSync(join(app.root, 'src/cart.ts'), 'utf8') + legacy);
    app.git('commit', '-qam', 'legacy');
    const claim = readClaim(app, 'discount-cap');
    for (const draft of [...claim.case.drafts, ...claim.control.drafts]) draft.text += legacy;
    app.write('kept.json', JSON.stringify(claim));
    const kept = servedText(app, 'kept.json');
    expect(kept.code, kept.stdout + kept.stderr).toBe(0);
    const line = claim.case.drafts[0].text.split('\n').indexOf('  return 1;') + 1;
    expect(kept.stdout).toMatch(/^ {2}case {4}type {5}clean, 1 other issue/m);
    expect(kept.stdout).toContain(`    [workspace] src/cart.ts:${line}:3: Type 'number' is not assignable to type 'string'.`);

    claim.case.drafts[0].text += 'export function otherLabel(): string {\n  return 1;\n}\n';
    app.write('again.json', JSON.stringify(claim));
    const { code, report } = servedJson(app, 'again.json');
    expect(code).toBe(1);
    const type = report.verdict.checks.find((check: any) => check.phase === 'case' && check.stage === 'type');
    expect(type.issues.map((issue: any) => [issue.origin, issue.path, issue.line, issue.code])).toEqual([
      ['claimant', 'src/cart.ts', line + 3, 'TS2322'],
      ['workspace', 'src/cart.ts', line, 'TS2322'],
    ]);
    expect(report.why).toEqual([expect.stringContaining('the case is not clean at the type stage')]);
  });
});

describe('a parse error in a control', () => {
  it('is located, file:line:col, on the issue line of every stage it breaks, not only in why', async () => {
    const app = await sharedApp();
    const claim = readClaim(app, 'discount-cap');
    const lines = claim.control.drafts[0].text.split('\n');
    lines[5] = `${lines[5]} )(;`;
    claim.control.drafts[0].text = lines.join('\n');
    app.write('parse.json', JSON.stringify(claim));
    const { code, stderr, report } = servedJson(app, 'parse.json');
    expect(code, stderr).toBe(1);
    // The text the CLI prints for this report: one prove, both forms.
    const text = proveText(report).split('\n');
    const after = (stage: string) => text[text.findIndex((line) => line.startsWith(`  control ${stage}`)) + 1];
    expect(after('lint')).toMatch(/^    \[claimant\] src\/cart\.ts:6:21: /);
    expect(after('runtime')).toMatch(/^    \[claimant\] src\/cart\.ts:6:21: could not load the test: Transform failed with 1 error: ERROR: Unexpected "\)"$/);
    const runtime = report.verdict.checks.find((check: any) => check.phase === 'control' && check.stage === 'runtime');
    expect(runtime.issues).toEqual([expect.objectContaining({ origin: 'claimant', path: 'src/cart.ts', line: 6, column: 21 })]);
    // No absolute path of the workspace leaks into the message.
    expect(JSON.stringify(report.verdict)).not.toContain(app.root);
  });
});

describe('the receipt token', () => {
  it('covers the judges\' config: the same claim under another lint rule or test config gets another token; the same config, the same token', async () => {
    const app = await sharedApp();
    app.write('.oxlintrc.json', '{ "rules": {} }\n');
    // Cold, in its own process (the served prover left aside), to compare the served answers with.
    const first = proveJson(app, 'claims/discount-cap.json');
    expect(first.report.cold).toBe(true);
    // The rest from the served prover, which must notice each config change as a cold prove does.
    expect(first.code, first.stderr).toBe(0);
    const again = servedJson(app, 'claims/discount-cap.json');
    expect(again.report.receipt).toBe(first.report.receipt);
    expect(first.report.verdict.config.files).toEqual(expect.arrayContaining(['.oxlintrc.json', 'vitest.config.ts', 'tsconfig.json', 'package.json']));

    // A rule turned on that the drafts do not break: still a receipt, from judges configured otherwise.
    app.write('.oxlintrc.json', '{ "rules": { "no-debugger": "error" } }\n');
    const linted = servedJson(app, 'claims/discount-cap.json');
    expect(linted.code, linted.stderr).toBe(0);
    expect(linted.report.digest).toBe(first.report.digest);
    expect(linted.report.receipt).not.toBe(first.report.receipt);
    expect(parseClaimToken(linted.report.receipt).config).toBe(linted.report.verdict.config.digest);

    app.write('vitest.config.ts', readFileSync(join(app.root, 'vitest.config.ts'), 'utf8').replace("include: ['test/**/*.test.ts'],", "include: ['test/**/*.test.ts'],\n    testTimeout: 7000,"));
    const tested = servedJson(app, 'claims/discount-cap.json');
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.report.receipt).not.toBe(linted.report.receipt);
  });
});

/** A Vitest config that warns as it loads, as a dependency does when browserslist's data is old. */
const NOISY_CONFIG = `import { defineConfig } from 'vitest/config';

console.warn('Browserslist: caniuse-lite is outdated. Please run: npx update-browserslist-db@latest');
console.error('NOISE-FROM-CONFIG');
console.log('NOISE-ON-STDOUT');

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
  },
});
`;

describe('third-party noise on stderr while the stages warm', () => {
  it('goes to the prover log, not to the user\'s terminal', () => {
    app = demoWorkspace('verdict-noise');
    app.write('vitest.config.ts', NOISY_CONFIG);
    const result = app.vouch(['prove', 'claims/discount-cap.json', '--no-server']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('Browserslist');
    expect(result.stderr).not.toContain('NOISE-FROM-CONFIG');
    const log = readFileSync(join(app.root, '.vouch', 'logs', 'prove.log'), 'utf8');
    expect(log).toContain('Browserslist: caniuse-lite is outdated');
    expect(log).toContain('NOISE-FROM-CONFIG');
  });

  it('and what they print to stdout stays out of --json', () => {
    app = demoWorkspace('verdict-noise-json');
    app.write('vitest.config.ts', NOISY_CONFIG);
    const result = app.vouch(['prove', 'claims/discount-cap.json', '--no-server', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain('NOISE-ON-STDOUT');
    expect(JSON.parse(result.stdout).receipt).toMatch(/^vouch-claim:/);
    expect(readFileSync(join(app.root, '.vouch', 'logs', 'prove.log'), 'utf8')).toContain('NOISE-ON-STDOUT');
  });

  it('a quiet workspace leaves no log behind', () => {
    app = demoWorkspace('verdict-quiet');
    const result = app.vouch(['prove', 'claims/discount-cap.json', '--no-server']);
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(app.root, '.vouch'))).toBe(false);
  });

  it('a served prover keeps it off its terminal too', async () => {
    app = demoWorkspace('verdict-noise-serve');
    app.write('vitest.config.ts', NOISY_CONFIG);
    const server = spawn(process.execPath, [CLI, 'prove', '--serve'], { cwd: app.root, env: cleanEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    server.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const deadline = Date.now() + 90_000;
      while (!/serving proves on/.test(stderr)) {
        if (Date.now() > deadline || server.exitCode !== null) throw new Error(`the prover did not start: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const proved = app.vouch(['prove', 'claims/discount-cap.json']);
      expect(proved.code, proved.stderr).toBe(0);
    } finally {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
    }
    expect(stderr).toMatch(/serving proves on/);
    expect(stderr).not.toContain('Browserslist');
    expect(readFileSync(join(app.root, '.vouch', 'logs', 'prove.log'), 'utf8')).toContain('Browserslist: caniuse-lite is outdated');
  });
});
