import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StageCheck, Claim, Issue, Phase, Stage, Verdict } from '../../src/core/claim.js';
import { STAGES } from '../../src/core/claim.js';
import { claimDigest, refuseIdenticalControl, validateClaim } from '../../src/core/claimDigest.js';
import { ClaimError } from '../../src/core/claimError.js';
import { mintReceipt } from '../../src/core/claimReceipt.js';
import { formatClaimToken, parseClaimToken, type ClaimToken } from '../../src/core/claimToken.js';
import { containClaimPaths, containDraftPath, createExclusive, leftoverName, leftoverPid, sweepLeftovers } from '../../src/prove/draftPaths.js';
import { processAlive } from '../../src/fs/processStart.js';
import { REPO } from '../helpers/project.js';

/** The liveness check the api gives the prover. */
const alive = (pid: number) => processAlive(pid, null);

let scratch: string;
beforeAll(() => {
  mkdirSync(join(REPO, '.tmp'), { recursive: true });
  scratch = mkdtempSync(join(REPO, '.tmp', 'claim-core-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function claim(overrides: Partial<Claim> = {}): Claim {
  return {
    case: {
      drafts: [
        { path: 'src/add.ts', text: 'export const add = (a: number, b: number) => a + b;\n' },
        { path: 'src/index.ts', text: "export { add } from './add.js';\n" },
      ],
      test: { path: 'test/add.test.ts', text: "import { add } from '../src/add.js';\nexpect(add(1, 2)).toBe(3);\n" },
    },
    control: {
      drafts: [
        { path: 'src/add.ts', text: 'export const add = (a: number, b: number) => a - b;\n' },
        { path: 'src/index.ts', text: "export { add } from './add.js';\n" },
      ],
      stage: 'runtime',
      reason: 'subtracting instead of adding makes add(1, 2) return -1',
    },
    project: 'tsconfig.json',
    ...overrides,
  };
}

/** Asserts `run` throws a ClaimError with this origin and code, and returns it for further checks. */
function claimError(run: () => unknown, origin: string, code: string): ClaimError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ClaimError);
    const claimErr = error as ClaimError;
    expect(claimErr.origin).toBe(origin);
    expect(claimErr.code).toBe(code);
    expect(claimErr.message).toBe(`[${origin}] ${code}: ${claimErr.detail}`);
    return claimErr;
  }
  throw new Error('expected a ClaimError, nothing was thrown');
}

describe('claim digest', () => {
  it('does not depend on key order, draft order or path spelling', () => {
    const base = claim();
    const reordered: Claim = {
      project: base.project,
      control: { reason: base.control.reason, stage: base.control.stage, drafts: [...base.control.drafts].reverse() },
      case: {
        test: { text: base.case.test.text, path: './test/add.test.ts' },
        drafts: [
          { text: base.case.drafts[1]!.text, path: './src/index.ts' },
          { text: base.case.drafts[0]!.text, path: 'src/lib/../add.ts' },
        ],
      },
    };
    expect(claimDigest(reordered)).toBe(claimDigest(base));
    expect(claimDigest(base)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is the same for the same claim in two checkouts of one commit', () => {
    const digests = ['checkout-a', 'checkout-b'].map((name) => {
      const root = join(scratch, name);
      const files = { 'src/add.ts': 'export const add = 1;\n', 'test/add.test.ts': 'it("x", () => {});\n' };
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(join(root, path, '..'), { recursive: true });
        writeFileSync(join(root, path), text);
      }
      // As a client would build it: read each file and name it relative to its own checkout.
      const read = (path: string) => ({ path: relative(root, join(root, path)), text: readFileSync(join(root, path), 'utf8') });
      return claimDigest(
        containClaimPaths(
          claim({
            case: { drafts: [read('src/add.ts')], test: read('test/add.test.ts') },
            control: { drafts: [{ path: './src/add.ts', text: 'export const add = 2;\n' }], stage: 'runtime', reason: 'r' },
          }),
        ),
      );
    });
    expect(digests[0]).toBe(digests[1]);
  });

  it('changes with every part of the case and the control, the reason included', () => {
    const base = claimDigest(claim());
    const other = [
      claim({ control: { ...claim().control, reason: 'another reason' } }),
      claim({ control: { ...claim().control, stage: 'type' } }),
      claim({ case: { ...claim().case, test: { ...claim().case.test, text: 'changed' } } }),
      claim({ case: { ...claim().case, drafts: [{ path: 'src/add.ts', text: 'x' }, claim().case.drafts[1]!] } }),
    ].map(claimDigest);
    for (const digest of other) expect(digest).not.toBe(base);
    expect(new Set(other).size).toBe(other.length);
    // The project is bound by the token, not the digest.
    expect(claimDigest(claim({ project: 'other/tsconfig.json' }))).toBe(base);
  });

  it('refuses a file drafted twice under two spellings', () => {
    const error = claimError(
      () => claimDigest(claim({ case: { ...claim().case, drafts: [{ path: 'a.ts', text: '1' }, { path: './a.ts', text: '2' }] } })),
      'claimant',
      'refused',
    );
    expect(error.detail).toContain('case.drafts[1].path');
  });
});

describe('identical control', () => {
  it('is refused before any stage, whatever the draft order or spelling', () => {
    const base = claim();
    const identical = claim({ control: { ...base.control, drafts: [...base.case.drafts].reverse().map((d) => ({ ...d, path: `./${d.path}` })) } });
    expect(claimError(() => refuseIdenticalControl(identical), 'claimant', 'refused').detail).toContain('byte-identical');
    claimError(() => validateClaim(identical), 'claimant', 'refused');
  });

  it('lets a control that differs by one byte through', () => {
    expect(() => refuseIdenticalControl(claim())).not.toThrow();
    expect(validateClaim(claim())).toBe(claimDigest(claim()));
  });

  it('refuses an empty reason and an unknown stage', () => {
    claimError(() => validateClaim(claim({ control: { ...claim().control, reason: '  ' } })), 'claimant', 'refused');
    claimError(() => validateClaim(claim({ control: { ...claim().control, stage: 'build' as Stage } })), 'claimant', 'refused');
  });
});

const DIGEST = 'a'.repeat(64);
function token(project = 'tsconfig.json', linter = { name: 'oxlint', version: '1.95.0' }): ClaimToken {
  return { digest: DIGEST, stage: 'runtime', toolchain: { typescript: '5.9.3', linter, vitest: '4.1.12' }, config: '89abcdef', project: { tsconfig: project, optionsDigest: '0123abcd' } };
}

describe('claim receipt token', () => {
  it('has the documented grammar', () => {
    expect(formatClaimToken(token())).toBe(`vouch-claim:${DIGEST}:runtime:typescript@5.9.3:oxlint@1.95.0:vitest@4.1.12:config@89abcdef:tsconfig.json@0123abcd`);
  });

  it.each([
    'tsconfig.json',
    'packages/app/tsconfig.build.json',
    'C:/repo/tsconfig.json',
    'a:b:c/tsconfig.json',
    '@scope/pkg/tsconfig.json',
    'odd@name:with@both/tsconfig@1.json',
  ])('round-trips the project %s', (project) => {
    const original = token(project);
    const text = formatClaimToken(original);
    expect(parseClaimToken(text)).toEqual(original);
    expect(formatClaimToken(parseClaimToken(text))).toBe(text);
  });

  it('names Jest as the runner when Jest judged', () => {
    const original: ClaimToken = { ...token(), toolchain: { typescript: '5.9.3', linter: { name: 'oxlint', version: '1.95.0' }, jest: '30.5.2' } };
    const text = formatClaimToken(original);
    expect(text).toBe(`vouch-claim:${DIGEST}:runtime:typescript@5.9.3:oxlint@1.95.0:jest@30.5.2:config@89abcdef:tsconfig.json@0123abcd`);
    expect(parseClaimToken(text)).toEqual(original);
  });

  it('round-trips a scoped linter name', () => {
    const original = token('tsconfig.json', { name: '@acme/lint', version: '2.0.0-beta.1' });
    expect(parseClaimToken(formatClaimToken(original))).toEqual(original);
  });

  it.each([
    ['empty', ''],
    ['wrong prefix', `vouch-receipt:${DIGEST}:runtime:typescript@5.9.3:oxlint@1.95.0:vitest@4.1.12:config@89abcdef:tsconfig.json@0123abcd`],
    ['short digest', `vouch-claim:abc:runtime:typescript@5.9.3:oxlint@1.95.0:vitest@4.1.12:config@89abcdef:tsconfig.json@0123abcd`],
    ['unknown stage', `vouch-claim:${DIGEST}:build:typescript@5.9.3:oxlint@1.95.0:vitest@4.1.12:config@89abcdef:tsconfig.json@0123abcd`],
    ['fields swapped', `vouch-claim:${DIGEST}:runtime:vitest@4.1.12:oxlint@1.95.0:typescript@5.9.3:config@89abcdef:tsconfig.json@0123abcd`],
    ['unknown runner', `vouch-claim:${DIGEST}:runtime:typescript@5.9.3:oxlint@1.95.0:mocha@10.0.0:config@89abcdef:tsconfig.json@0123abcd`],
    ['no version', `vouch-claim:${DIGEST}:runtime:typescript:oxlint@1.95.0:vitest@4.1.12:config@89abcdef:tsconfig.json@0123abcd`],
    ['too few fields', `vouch-claim:${DIGEST}:runtime:typescript@5.9.3:oxlint@1.95.0`],
    ['no options digest', `vouch-claim:${DIGEST}:runtime:typescript@5.9.3:oxlint@1.95.0:vitest@4.1.12:config@89abcdef:tsconfig.json`],
    ['empty project', `vouch-claim:${DIGEST}:runtime:typescript@5.9.3:oxlint@1.95.0:vitest@4.1.12:config@89abcdef:@0123abcd`],
    ['non-hex options digest', `vouch-claim:${DIGEST}:runtime:typescript@5.9.3:oxlint@1.95.0:vitest@4.1.12:config@89abcdef:tsconfig.json@zz`],
    ['no config digest', `vouch-claim:${DIGEST}:runtime:typescript@5.9.3:oxlint@1.95.0:vitest@4.1.12:tsconfig.json@0123abcd`],
    ['non-hex config digest', `vouch-claim:${DIGEST}:runtime:typescript@5.9.3:oxlint@1.95.0:vitest@4.1.12:config@zz:tsconfig.json@0123abcd`],
    ['newline', `vouch-claim:${DIGEST}:runtime:typescript@5.9.3:oxlint@1.95.0:vitest@4.1.12:config@89abcdef:tsconfig.json@0123abcd\n`],
  ])('refuses a malformed token (%s)', (_label, text) => {
    claimError(() => parseClaimToken(text), 'claimant', 'malformed');
  });

  it('refuses to form a token that could not be parsed back', () => {
    claimError(() => formatClaimToken({ ...token(), toolchain: { ...token().toolchain, typescript: '5:9' } }), 'instrument', 'malformed');
    claimError(() => formatClaimToken(token('a\nb')), 'instrument', 'malformed');
    claimError(() => formatClaimToken({ ...token(), config: 'a:b' }), 'instrument', 'malformed');
  });
});

/** A verdict where every receipt condition holds: the case clean, the control breaking at runtime only. */
function verdict(controlStage: Stage = 'runtime'): Verdict {
  const checks: StageCheck[] = [];
  for (const phase of ['case', 'control'] as Phase[]) {
    for (const stage of STAGES) {
      const issues: Issue[] = [];
      if (phase === 'control' && stage === controlStage) issues.push({ origin: 'claimant', stage, path: 'test/add.test.ts', line: 2, message: 'expected -1 to be 3' });
      checks.push({ stage, phase, issues, completed: true });
    }
  }
  return { digest: DIGEST, controlStage, toolchain: token().toolchain, config: { digest: token().config, files: ['.oxlintrc.json'] }, project: token().project, checks };
}
function checkOf(v: Verdict, phase: Phase, stage: Stage): StageCheck {
  const found = v.checks.find((check) => check.phase === phase && check.stage === stage);
  if (found === undefined) throw new Error(`no ${phase}/${stage} check`);
  return found;
}
const claimantIssue = (stage: Stage): Issue => ({ origin: 'claimant', stage, path: 'src/add.ts', line: 1, message: 'something is wrong' });

describe('claim receipt', () => {
  it('is minted when every condition holds, and the token names the declared stage', () => {
    for (const stage of STAGES) {
      const minted = mintReceipt(verdict(stage));
      if (minted.receipt === null) throw new Error(minted.why.join('\n'));
      expect(parseClaimToken(minted.receipt)).toEqual({ ...token(), stage });
    }
  });

  it('ignores workspace issues: they are the baseline, not the claim', () => {
    const v = verdict();
    checkOf(v, 'case', 'lint').issues.push({ origin: 'workspace', stage: 'lint', message: 'already broken before the claim' });
    expect(mintReceipt(v).receipt).not.toBeNull();
  });

  const failing: Array<[string, (v: Verdict) => void, RegExp]> = [
    ['the case has a claimant issue', (v) => checkOf(v, 'case', 'type').issues.push(claimantIssue('type')), /case is not clean at the type stage: something is wrong at src\/add\.ts:1/],
    ['the control does not break at its declared stage', (v) => (checkOf(v, 'control', 'runtime').issues = []), /control did not break at its declared runtime stage/],
    ['the control breaks at its declared stage with a workspace issue only', (v) => (checkOf(v, 'control', 'runtime').issues = [{ origin: 'workspace', stage: 'runtime', message: 'ignored path' }]), /control did not break at its declared runtime stage/],
    ['the control also breaks at another stage', (v) => checkOf(v, 'control', 'lint').issues.push(claimantIssue('lint')), /control also breaks at the lint stage, not only at its declared runtime stage/],
    ['an instrument issue in the case', (v) => checkOf(v, 'case', 'runtime').issues.push({ origin: 'instrument', stage: 'runtime', message: 'vitest crashed' }), /case inspection at the runtime stage had an instrument issue: vitest crashed/],
    ['an instrument issue in the control', (v) => checkOf(v, 'control', 'type').issues.push({ origin: 'instrument', stage: 'type', message: 'worker died' }), /control inspection at the type stage had an instrument issue: worker died/],
    ['a check did not complete', (v) => (checkOf(v, 'case', 'lint').completed = false), /case inspection at the lint stage did not complete/],
    ['a check is missing', (v) => (v.checks = v.checks.filter((c) => !(c.phase === 'control' && c.stage === 'type'))), /control was not inspected at the type stage/],
    ['a check appears twice', (v) => v.checks.push({ ...checkOf(v, 'case', 'type') }), /two case checks for the type stage/],
  ];
  it.each(failing)('is refused when %s, alone', (_label, breakIt, expected) => {
    const v = verdict();
    breakIt(v);
    const minted = mintReceipt(v);
    expect(minted.receipt).toBeNull();
    if (minted.receipt !== null) return;
    expect(minted.why).toHaveLength(1);
    expect(minted.why[0]).toMatch(expected);
  });

  it('lists every failed condition at once', () => {
    const v = verdict();
    for (const [, breakIt] of failing.slice(0, 2)) breakIt(v);
    checkOf(v, 'control', 'type').completed = false;
    const minted = mintReceipt(v);
    expect(minted.receipt).toBeNull();
    if (minted.receipt === null) expect(minted.why).toHaveLength(3);
  });
});

describe('draft path containment', () => {
  it.each([
    ['a.ts', 'a.ts'],
    ['./a.ts', 'a.ts'],
    ['src/./lib/../a.ts', 'src/a.ts'],
    ['a/../b.ts', 'b.ts'],
  ])('accepts %s as %s', (path, expected) => {
    expect(containDraftPath(path, 'case.drafts[0].path')).toBe(expected);
  });

  it.each([
    ['/etc/passwd', 'absolute'],
    ['../outside.ts', 'leaves the workspace'],
    ['a/../../b.ts', 'leaves the workspace'],
    ['..', 'leaves the workspace'],
    ['a.ts\0.png', 'NUL'],
    ['a\nb.ts', 'control character'],
    ['src\\a.ts', 'backslash'],
    ['..\\..\\x.ts', 'backslash'],
    ['C:/x.ts', 'drive'],
    ['c:x.ts', 'drive'],
    ['', 'empty'],
    ['a//b.ts', 'empty segment'],
    ['src/', 'empty segment'],
    ['.', 'workspace itself'],
    ['a/..', 'workspace itself'],
  ])('refuses %j (%s), naming the member', (path, why) => {
    const error = claimError(() => containDraftPath(path, 'case.drafts[2].path'), 'claimant', 'refused');
    expect(error.detail).toContain('case.drafts[2].path');
    expect(error.detail).toContain(why);
  });

  it('names the member of a whole claim it refuses', () => {
    const hostile = claim();
    hostile.control.drafts = [hostile.control.drafts[0]!, { path: '/abs.ts', text: '' }];
    expect(claimError(() => containClaimPaths(hostile), 'claimant', 'refused').detail).toMatch(/^control\.drafts\[1\]\.path /);
    claimError(() => containClaimPaths(claim({ project: '../tsconfig.json' })), 'claimant', 'refused');
    claimError(() => containClaimPaths({ ...claim(), case: { ...claim().case, test: { path: 'x\0', text: '' } } }), 'claimant', 'refused');
  });
});

describe('exclusive creation', () => {
  it('creates missing parents and the file', () => {
    const root = mkdtempSync(join(scratch, 'create-'));
    const target = createExclusive(root, 'deep/er/x.test.ts', 'hello');
    expect(readFileSync(target, 'utf8')).toBe('hello');
  });

  it('refuses an existing file and leaves it as it was', () => {
    const root = mkdtempSync(join(scratch, 'exists-'));
    writeFileSync(join(root, 'x.ts'), 'original');
    const error = claimError(() => createExclusive(root, 'x.ts', 'new', 'case.test.path'), 'workspace', 'refused');
    expect(error.detail).toContain('case.test.path');
    expect(readFileSync(join(root, 'x.ts'), 'utf8')).toBe('original');
  });

  it('refuses to cross a symlinked directory, and writes nothing outside', () => {
    const root = mkdtempSync(join(scratch, 'link-'));
    const outside = mkdtempSync(join(scratch, 'outside-'));
    symlinkSync(outside, join(root, 'linked'));
    expect(claimError(() => createExclusive(root, 'linked/x.ts', 'escaped'), 'workspace', 'refused').detail).toContain('symbolic link');
    mkdirSync(join(root, 'real'));
    symlinkSync(outside, join(root, 'real', 'nested'));
    expect(claimError(() => createExclusive(root, 'real/nested/deeper/x.ts', 'escaped'), 'workspace', 'refused').detail).toContain('symbolic link');
    expect(readdirSync(outside)).toEqual([]);
  });

  it('refuses a symlink, even a dangling one, as the file itself', () => {
    const root = mkdtempSync(join(scratch, 'final-link-'));
    const outside = join(mkdtempSync(join(scratch, 'outside-')), 'target.ts');
    symlinkSync(outside, join(root, 'x.ts'));
    claimError(() => createExclusive(root, 'x.ts', 'escaped'), 'workspace', 'refused');
    expect(existsSync(outside)).toBe(false);
  });

  it('refuses a hostile path before touching the disk', () => {
    const root = mkdtempSync(join(scratch, 'hostile-'));
    for (const path of ['../x.ts', '/tmp/x.ts', 'a/../../x.ts', 'x\0.ts']) claimError(() => createExclusive(root, path, ''), 'claimant', 'refused');
    expect(readdirSync(root)).toEqual([]);
  });
});

describe('leftovers', () => {
  it('names files with the pid and a marker', () => {
    const name = leftoverName('add', 'test.ts');
    expect(name).toMatch(new RegExp(`^add\\.vouch-${process.pid}-[0-9a-f]{12}\\.test\\.ts$`));
    expect(leftoverPid(name)).toBe(process.pid);
    expect(leftoverPid('add.test.ts')).toBeNull();
    expect(leftoverName('add', 'ts')).not.toBe(leftoverName('add', 'ts'));
  });

  it("sweeps a dead pid's files and keeps a live pid's and everything unmarked", () => {
    const dir = mkdtempSync(join(scratch, 'sweep-'));
    // A child that has exited and been reaped: its pid is dead.
    const child = spawnSync(process.execPath, ['-e', '0']);
    const deadPid = child.pid;
    expect(deadPid).toBeGreaterThan(0);
    const dead = leftoverName('gone', 'test.ts', deadPid);
    const live = leftoverName('mine', 'ts');
    const unmarked = ['plain.ts', 'near.vouch-1-xyz.ts', `user.vouch-${deadPid}.ts`];
    for (const name of [dead, live, ...unmarked]) writeFileSync(join(dir, name), '');
    // A directory with the marker is not a leftover file, whoever it names.
    const deadDir = leftoverName('dir', 'd', deadPid);
    mkdirSync(join(dir, deadDir));
    expect(sweepLeftovers(dir, scratch, alive)).toEqual([dead]);
    expect(readdirSync(dir).sort()).toEqual([deadDir, live, ...unmarked].sort());
    expect(sweepLeftovers(join(dir, 'missing'), scratch, alive)).toEqual([]);
  });
});
