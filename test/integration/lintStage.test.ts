import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it } from 'vitest';
import type { Draft, Issue } from '../../src/core/claim.js';
import { ClaimError } from '../../src/core/claimError.js';
import { EslintStage } from '../../src/prove/eslintStage.js';
import { createLintStage, LintStage, pickLinter } from '../../src/prove/lintStage.js';
import { LspConnection } from '../../src/prove/lspConnection.js';
import { OxlintStage } from '../../src/prove/oxlintStage.js';
import { createOverlay } from '../../src/prove/overlay.js';
import type { Inspection, StageInstance } from '../../src/prove/stage.js';
import { installedVersion } from '../helpers/claims.js';
import { BASELINE_CASES, LEGACY_DISK, LEGACY_PATH, onLegacy } from '../helpers/lintBaseline.js';
import { REPO, tempProject, type TempProject } from '../helpers/project.js';
import { rejection } from '../helpers/rejection.js';

const OXLINTRC = {
  rules: { 'no-debugger': 'error', eqeqeq: 'warn' },
  ignorePatterns: ['vendor/**'],
  overrides: [{ files: ['tests/**'], rules: { 'no-debugger': 'off' } }],
};

const TEST_DRAFT: Draft = { path: 'src/ok.test.ts', text: 'export const checked = true;\n' };
const CLEAN: Draft = { path: 'src/value.ts', text: 'export const value = 1;\n' };
const DEBUGGER: Draft = { path: 'src/value.ts', text: 'export const value = 1;\ndebugger;\n' };

function inspection(root: string, drafts: Draft[], test: Draft = TEST_DRAFT): Inspection {
  return { phase: 'case', drafts, test, overlay: createOverlay(root, [...drafts, test]), project: join(root, 'tsconfig.json') };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const projects: TempProject[] = [];
const stages: StageInstance[] = [];
afterAll(async () => {
  await Promise.all(stages.map((stage) => stage.destroy()));
  for (const project of projects) project.remove();
});

function project(name: string, files: Record<string, string>, options: { git?: boolean } = {}): TempProject {
  const made = tempProject(name, files, options);
  projects.push(made);
  return made;
}

function track<T extends StageInstance>(stage: T): T {
  stages.push(stage);
  return stage;
}

function oxlintProject(extra: Record<string, string> = {}): TempProject {
  return project('lint-ox', {
    'package.json': JSON.stringify({ name: 'ws', type: 'module', scripts: { lint: 'oxlint src' } }),
    '.oxlintrc.json': JSON.stringify(OXLINTRC),
    '.gitignore': 'tmp/\n',
    '.oxlintignore': 'generated/\n',
    ...extra,
  });
}

describe('oxlint stage', () => {
  it('answers clean drafts with no issues, and a debugger statement with a claimant issue (path, line, code)', { timeout: 30_000 }, async () => {
    const ws = oxlintProject();
    const stage = track(createLintStage(ws.root));
    let started = performance.now();
    expect(await stage.warm()).toEqual({ name: 'oxlint', version: installedVersion('oxlint') });
    const warmMs = performance.now() - started;
    expect((stage as LintStage).linter).toBeInstanceOf(OxlintStage);
    started = performance.now();
    expect(await stage.inspect(inspection(ws.root, [CLEAN]))).toEqual([]);
    const firstMs = performance.now() - started;
    const before = stage.progress();
    started = performance.now();
    const issues = await stage.inspect(inspection(ws.root, [DEBUGGER]));
    const warmInspectMs = performance.now() - started;
    expect(issues).toEqual([{ origin: 'claimant', stage: 'lint', path: 'src/value.ts', line: 2, column: 1, code: 'eslint(no-debugger)', message: expect.stringContaining('debugger') }]);
    // The draft and the test were each sent to the linter.
    expect(stage.progress()).toBe(before + 2);
    console.log(`oxlint: warm() ${warmMs.toFixed(0)} ms, first inspect ${firstMs.toFixed(0)} ms, warm inspect ${warmInspectMs.toFixed(1)} ms`);
  });

  it('lints the test draft, applies path-based overrides, and ignores warnings', { timeout: 30_000 }, async () => {
    const ws = oxlintProject();
    const stage = track(createLintStage(ws.root));
    await stage.warm();
    const test: Draft = { path: 'src/value.test.ts', text: 'debugger;\n' };
    expect(await stage.inspect(inspection(ws.root, [CLEAN], test))).toEqual([expect.objectContaining({ origin: 'claimant', path: 'src/value.test.ts', line: 1, code: 'eslint(no-debugger)' })]);
    // The override turns no-debugger off under tests/; eqeqeq is only a warning, which the workspace's lint passes.
    const overridden: Draft = { path: 'tests/value.test.ts', text: 'debugger;\nexport const same = (a: unknown) => a == 1;\n' };
    expect(await stage.inspect(inspection(ws.root, [CLEAN], overridden))).toEqual([]);
    // A draft that does not parse is the claimant's, though the parser gives no rule code.
    const broken = await stage.inspect(inspection(ws.root, [{ path: 'src/value.ts', text: 'let = ;\n' }]));
    expect(broken).toEqual([expect.objectContaining({ origin: 'claimant', path: 'src/value.ts', line: 1 })]);
    expect(broken[0]?.code).toBeUndefined();
  });

  it('reports git-ignored, .oxlintignore-d and ignorePatterns paths as workspace issues, never as clean', { timeout: 30_000 }, async () => {
    const ws = oxlintProject();
    const stage = track(createLintStage(ws.root));
    await stage.warm();
    const drafts: Draft[] = [
      { path: 'tmp/scratch.ts', text: 'export const a = 1;\n' },
      { path: 'generated/out.ts', text: 'export const b = 1;\n' },
      { path: 'vendor/lib.ts', text: 'export const c = 1;\n' },
      CLEAN,
    ];
    const issues = await stage.inspect(inspection(ws.root, drafts));
    expect(issues.map((issue) => [issue.origin, issue.path])).toEqual([
      ['workspace', 'tmp/scratch.ts'],
      ['workspace', 'generated/out.ts'],
      ['workspace', 'vendor/lib.ts'],
    ]);
    expect(issues[0]?.message).toMatch(/ignored by git \(\.gitignore:1: tmp\/\)/);
    expect(issues[1]?.message).toContain('.oxlintignore');
    expect(issues[2]?.message).toContain('ignorePatterns in .oxlintrc.json');
    // A README is no lint target at all: neither an issue nor a document sent.
    const progress = stage.progress();
    expect(await stage.inspect(inspection(ws.root, [{ path: 'README.md', text: 'debugger;\n' }]))).toEqual([]);
    expect(stage.progress()).toBe(progress + 1);
  });

  it('catches a path only the language server ignores, by probing its silence', { timeout: 30_000 }, async () => {
    // Outside any git repository oxlint still honours a bare .gitignore, which git check-ignore cannot see.
    // The OS temp dir is outside the repo; a node_modules link makes the repo's oxlint the workspace's.
    const root = mkdtempSync(join(tmpdir(), 'vouch-lint-nogit-'));
    try {
      writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'ws', scripts: { lint: 'oxlint' } }));
      writeFileSync(join(root, '.oxlintrc.json'), JSON.stringify({ rules: { 'no-debugger': 'error' } }));
      writeFileSync(join(root, '.gitignore'), 'scratch/\n');
      symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'));
      const stage = track(new OxlintStage(root));
      await stage.warm();
      const issues = await stage.inspect(inspection(root, [{ path: 'scratch/a.ts', text: 'export const a = 1;\n' }, DEBUGGER]));
      expect(issues.map((issue) => [issue.origin, issue.path])).toEqual([
        ['workspace', 'scratch/a.ts'],
        ['claimant', 'src/value.ts'],
      ]);
      expect(issues[0]?.message).toContain("oxlint's own ignore rules");
      await stage.destroy();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('sees a config change between two inspections on a warm stage, and a new ignore rule', { timeout: 30_000 }, async () => {
    const ws = oxlintProject({ '.oxlintrc.json': JSON.stringify({ rules: { 'no-debugger': 'off' } }) });
    const stage = track(new OxlintStage(ws.root));
    await stage.warm();
    const firstPid = stage.pid;
    expect(await stage.inspect(inspection(ws.root, [DEBUGGER]))).toEqual([]);
    expect(stage.pid).toBe(firstPid);
    ws.write('.oxlintrc.json', JSON.stringify({ rules: { 'no-debugger': 'error' } }));
    expect(await stage.inspect(inspection(ws.root, [DEBUGGER]))).toEqual([expect.objectContaining({ origin: 'claimant', code: 'eslint(no-debugger)' })]);
    expect(stage.pid).not.toBe(firstPid);
    // An unchanged config keeps the resident server.
    const secondPid = stage.pid;
    await stage.inspect(inspection(ws.root, [CLEAN]));
    expect(stage.pid).toBe(secondPid);
    ws.write('.gitignore', 'src/\n');
    const ignored = await stage.inspect(inspection(ws.root, [DEBUGGER]));
    expect(ignored.map((issue) => [issue.origin, issue.path])).toEqual([
      ['workspace', 'src/value.ts'],
      ['workspace', 'src/ok.test.ts'],
    ]);
  });

  it('refuses a config oxlint cannot parse as workspace/malformed, and recovers when it is fixed', { timeout: 30_000 }, async () => {
    const ws = oxlintProject();
    const stage = track(new OxlintStage(ws.root));
    await stage.warm();
    ws.write('.oxlintrc.json', '{"rules": {"no-debugger": "error"');
    const error = await rejection(stage.inspect(inspection(ws.root, [DEBUGGER])));
    expect([error.origin, error.code]).toEqual(['workspace', 'malformed']);
    expect(error.detail).toContain('.oxlintrc.json');
    ws.write('.oxlintrc.json', JSON.stringify(OXLINTRC));
    expect(await stage.inspect(inspection(ws.root, [DEBUGGER]))).toEqual([expect.objectContaining({ origin: 'claimant', code: 'eslint(no-debugger)' })]);
  });

  it('restarts a server that died between inspections, and destroy() kills it at once', { timeout: 30_000 }, async () => {
    const ws = oxlintProject();
    const stage = track(new OxlintStage(ws.root));
    await stage.warm();
    const pid = stage.pid as number;
    process.kill(pid, 'SIGKILL');
    await expect.poll(() => alive(pid), { timeout: 5000 }).toBe(false);
    expect(await stage.inspect(inspection(ws.root, [DEBUGGER]))).toEqual([expect.objectContaining({ origin: 'claimant', code: 'eslint(no-debugger)' })]);
    const restarted = stage.pid as number;
    expect(restarted).not.toBe(pid);
    // Destroyed mid-inspection: the inspection does not answer clean, and the child is gone.
    const pending = stage.inspect(inspection(ws.root, [DEBUGGER, { path: 'src/other.ts', text: 'debugger;\n' }])).then(
      (issues: Issue[]) => issues,
      (error: unknown) => error,
    );
    await stage.destroy();
    expect(alive(restarted)).toBe(false);
    const outcome = await pending;
    if (Array.isArray(outcome)) expect(outcome.some((issue) => issue.origin === 'claimant')).toBe(true);
    else expect((outcome as ClaimError).code).toBe('destroyed');
    expect((await rejection(stage.inspect(inspection(ws.root, [CLEAN])))).code).toBe('destroyed');
  });

  it('answers a silent server with an instrument issue, never clean, and replaces it', { timeout: 30_000 }, async () => {
    const ws = oxlintProject();
    const stage = track(new OxlintStage(ws.root, { diagnosticsMs: 500 }));
    await stage.warm();
    const pid = stage.pid as number;
    // A stopped server reads nothing and answers nothing: exactly a server that hangs.
    process.kill(pid, 'SIGSTOP');
    const issues = await stage.inspect(inspection(ws.root, [CLEAN]));
    expect(issues).toEqual([expect.objectContaining({ origin: 'instrument', stage: 'lint', path: 'src/value.ts', message: expect.stringContaining('no publishDiagnostics') })]);
    expect(alive(pid)).toBe(false);
    expect(await stage.inspect(inspection(ws.root, [DEBUGGER]))).toEqual([expect.objectContaining({ origin: 'claimant', code: 'eslint(no-debugger)' })]);
    expect(stage.pid).not.toBe(pid);
  });
});

describe('oxlint baseline', () => {
  it('makes an error the drafted file already had on disk the workspace\'s, wherever the draft moved it, and counts repeats', { timeout: 30_000 }, async () => {
    const ws = oxlintProject({ [LEGACY_PATH]: LEGACY_DISK });
    const stage = track(createLintStage(ws.root));
    await stage.warm();
    for (const draft of BASELINE_CASES) {
      const issues = await stage.inspect(inspection(ws.root, [{ path: LEGACY_PATH, text: draft.text }]));
      expect(onLegacy(issues), draft.name).toEqual(draft.expected);
      expect(issues.every((issue) => issue.code === 'eslint(no-debugger)'), draft.name).toBe(true);
    }
    // The test is new by construction: a debugger in it is the claimant's even where the disk has the same text.
    expect(onLegacy(await stage.inspect(inspection(ws.root, [], { path: LEGACY_PATH, text: LEGACY_DISK })))).toEqual([['claimant', 2]]);
    // A disk change is seen: with the error gone from disk, the same draft's error is new.
    ws.write(LEGACY_PATH, 'export function legacy(a) {\n  return a;\n}\n');
    expect(onLegacy(await stage.inspect(inspection(ws.root, [{ path: LEGACY_PATH, text: BASELINE_CASES[0]!.text }])))).toEqual([['claimant', 2]]);
  });
});

describe('LSP framing', () => {
  it('reads frames split anywhere, several per chunk, with multi-byte bodies, and times out a silent request', { timeout: 10_000 }, async () => {
    // A stand-in server, because no real one can be made to split its frames on purpose.
    const server = `
      let seen = '';
      process.stdin.on('data', (chunk) => {
        seen += chunk;
        const match = /"id":(\\d+),"method":"echo"/.exec(seen);
        if (!match) return;
        seen = '';
        const reply = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: Number(match[1]), result: 'héllo ✓' }));
        const note = Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: 'note', params: { n: 1 } }));
        const bytes = Buffer.concat([Buffer.from('Content-Length: ' + reply.length + '\\r\\n\\r\\n'), reply, Buffer.from('Content-Length: ' + note.length + '\\r\\n\\r\\n'), note]);
        // Split inside the header and inside the multi-byte character.
        const cuts = [7, bytes.indexOf(Buffer.from('✓')) + 1, bytes.length];
        let from = 0;
        for (const cut of cuts) { process.stdout.write(bytes.subarray(from, cut)); from = cut; }
      });
    `;
    const connection = new LspConnection(process.execPath, ['-e', server], tmpdir());
    const notes: unknown[] = [];
    connection.onNotification((method, params) => notes.push([method, params]));
    expect(await connection.request('echo', {}, 5000)).toBe('héllo ✓');
    await expect.poll(() => notes).toEqual([['note', { n: 1 }]]);
    await expect(connection.request('silent', {}, 200)).rejects.toThrow(/did not answer silent within 200 ms/);
    const pid = connection.pid as number;
    await connection.kill();
    expect(alive(pid)).toBe(false);
    await expect(connection.request('echo', {}, 1000)).rejects.toThrow(/exited/);
  });
});

describe('eslint stage', () => {
  const CONFIG = `export default [
  { ignores: ['generated/**'] },
  { files: ['**/*.js'], rules: { 'no-debugger': 'error', eqeqeq: 'warn' } },
  { files: ['tests/**'], rules: { 'no-debugger': 'off' } },
];
`;
  const JS_TEST: Draft = { path: 'src/value.test.js', text: 'export const checked = true;\n' };

  function eslintProject(): TempProject {
    return project('lint-es', {
      'package.json': JSON.stringify({ name: 'ws', type: 'module', scripts: { lint: 'eslint .' } }),
      'eslint.config.js': CONFIG,
    });
  }

  it('answers clean and broken .js drafts, the test draft and overrides', { timeout: 30_000 }, async () => {
    const ws = eslintProject();
    const stage = track(createLintStage(ws.root));
    let started = performance.now();
    expect(await stage.warm()).toEqual({ name: 'eslint', version: installedVersion('eslint') });
    const warmMs = performance.now() - started;
    expect((stage as LintStage).linter).toBeInstanceOf(EslintStage);
    started = performance.now();
    expect(await stage.inspect(inspection(ws.root, [{ path: 'src/value.js', text: 'export const value = 1;\n' }], JS_TEST))).toEqual([]);
    const firstMs = performance.now() - started;
    started = performance.now();
    const issues = await stage.inspect(inspection(ws.root, [{ path: 'src/value.js', text: 'export const value = 1;\ndebugger;\nif (value == 2) {}\n' }], JS_TEST));
    const warmInspectMs = performance.now() - started;
    expect(issues).toEqual([{ origin: 'claimant', stage: 'lint', path: 'src/value.js', line: 2, column: 1, code: 'no-debugger', message: expect.stringContaining('debugger') }]);
    console.log(`eslint: warm() ${warmMs.toFixed(0)} ms, first inspect ${firstMs.toFixed(0)} ms, warm inspect ${warmInspectMs.toFixed(1)} ms`);
    const test: Draft = { path: 'src/value.test.js', text: 'debugger;\n' };
    expect(await stage.inspect(inspection(ws.root, [], test))).toEqual([expect.objectContaining({ origin: 'claimant', path: 'src/value.test.js', code: 'no-debugger' })]);
    expect(await stage.inspect(inspection(ws.root, [], { path: 'tests/value.test.js', text: 'debugger;\n' }))).toEqual([]);
    // A draft that does not parse is the claimant's.
    expect(await stage.inspect(inspection(ws.root, [{ path: 'src/value.js', text: 'let = ;\n' }], JS_TEST))).toEqual([expect.objectContaining({ origin: 'claimant', path: 'src/value.js', line: 1 })]);
  });

  it('makes an error the drafted file already had on disk the workspace\'s, wherever the draft moved it, and counts repeats', { timeout: 30_000 }, async () => {
    const ws = eslintProject();
    ws.write(LEGACY_PATH, LEGACY_DISK);
    const stage = track(createLintStage(ws.root));
    await stage.warm();
    for (const draft of BASELINE_CASES) {
      const issues = await stage.inspect(inspection(ws.root, [{ path: LEGACY_PATH, text: draft.text }], JS_TEST));
      expect(onLegacy(issues), draft.name).toEqual(draft.expected);
      expect(issues.every((issue) => issue.code === 'no-debugger'), draft.name).toBe(true);
    }
    // A disk text that does not parse excuses nothing.
    ws.write(LEGACY_PATH, `let = ;\n${LEGACY_DISK}`);
    expect(onLegacy(await stage.inspect(inspection(ws.root, [{ path: LEGACY_PATH, text: LEGACY_DISK }], JS_TEST)))).toEqual([['claimant', 2]]);
  });

  it('reports an ignored path and a path no config object covers as workspace issues', { timeout: 30_000 }, async () => {
    const ws = eslintProject();
    const stage = track(createLintStage(ws.root));
    await stage.warm();
    const issues = await stage.inspect(inspection(ws.root, [{ path: 'generated/out.js', text: 'debugger;\n' }, { path: 'src/typed.ts', text: 'export const t: number = 1;\n' }], JS_TEST));
    expect(issues.map((issue) => [issue.origin, issue.path])).toEqual([
      ['workspace', 'generated/out.js'],
      ['workspace', 'src/typed.ts'],
    ]);
  });

  it('blames the workspace when its config cannot parse the file type at all', { timeout: 30_000 }, async () => {
    const ws = eslintProject();
    // Covers .ts files but configures no TypeScript parser: any typed .ts draft fails to parse.
    ws.write('eslint.config.js', "export default [{ files: ['**/*.ts', '**/*.js'], rules: { 'no-debugger': 'error' } }];\n");
    const stage = track(createLintStage(ws.root));
    await stage.warm();
    const issues = await stage.inspect(inspection(ws.root, [{ path: 'src/typed.ts', text: 'export const t: number = 1;\n' }], JS_TEST));
    expect(issues).toEqual([expect.objectContaining({ origin: 'workspace', path: 'src/typed.ts', message: expect.stringContaining('configure a parser') })]);
  });

  it('sees a config change between two inspections, and refuses a broken config as workspace/malformed', { timeout: 30_000 }, async () => {
    const ws = eslintProject();
    const stage = track(createLintStage(ws.root));
    await stage.warm();
    const draft: Draft = { path: 'src/value.js', text: 'export const value = 1;\nconsole.log(value);\n' };
    expect(await stage.inspect(inspection(ws.root, [draft], JS_TEST))).toEqual([]);
    ws.write('eslint.config.js', "export default [{ files: ['**/*.js'], rules: { 'no-console': 'error' } }];\n");
    expect(await stage.inspect(inspection(ws.root, [draft], JS_TEST))).toEqual([expect.objectContaining({ origin: 'claimant', code: 'no-console', line: 2 })]);
    ws.write('eslint.config.js', "export default [{ files: ['**/*.js'], rules: { 'no-console': 'sometimes' } }];\n");
    const error = await rejection(stage.inspect(inspection(ws.root, [draft], JS_TEST)));
    expect([error.origin, error.code]).toEqual(['workspace', 'malformed']);
    await stage.destroy();
    expect((await rejection(stage.inspect(inspection(ws.root, [draft], JS_TEST)))).code).toBe('destroyed');
  });
});

describe('picking the linter', () => {
  it('follows the lint script over config files, and config files over installs', () => {
    const both = project('lint-pick', {
      'package.json': JSON.stringify({ scripts: { lint: 'eslint . && tsc' } }),
      '.oxlintrc.json': '{}',
    }, { git: false });
    expect(pickLinter(both.root)).toEqual({ name: 'eslint', warningsFail: false });
    both.write('package.json', JSON.stringify({ scripts: { check: 'oxlint --deny-warnings' } }));
    expect(pickLinter(both.root)).toEqual({ name: 'oxlint', warningsFail: true });
    both.write('package.json', JSON.stringify({ scripts: { lint: 'eslint --max-warnings=0 .' } }));
    expect(pickLinter(both.root)).toEqual({ name: 'eslint', warningsFail: true });
    both.write('package.json', JSON.stringify({ scripts: { lint: 'eslint --max-warnings 10 .' } }));
    expect(pickLinter(both.root)).toEqual({ name: 'eslint', warningsFail: false });
    both.write('package.json', JSON.stringify({ scripts: {} }));
    both.write('eslint.config.js', 'export default [];\n');
    // Both configured, neither scripted: oxlint's config is looked for first.
    expect(pickLinter(both.root).name).toBe('oxlint');
  });

  it('re-reads package.json before each inspection: denied warnings count, and a switched linter is refused', { timeout: 30_000 }, async () => {
    const ws = oxlintProject({ 'package.json': JSON.stringify({ name: 'ws', scripts: { lint: 'oxlint --deny-warnings src' } }) });
    const stage = track(createLintStage(ws.root));
    await stage.warm();
    const loose: Draft = { path: 'src/same.ts', text: 'export const same = (a: unknown) => a == 1;\n' };
    expect(await stage.inspect(inspection(ws.root, [loose]))).toEqual([expect.objectContaining({ origin: 'claimant', code: 'eslint(eqeqeq)', line: 1 })]);
    ws.write('package.json', JSON.stringify({ name: 'ws', scripts: { lint: 'oxlint src' } }));
    expect(await stage.inspect(inspection(ws.root, [loose]))).toEqual([]);
    const progress = stage.progress();
    // Flags alone are absorbed; another linter makes the stage stale, so a resident prover replaces it.
    expect(stage.stale()).toBe(false);
    ws.write('package.json', JSON.stringify({ name: 'ws', scripts: { lint: 'eslint .' } }));
    expect(stage.stale()).toBe(true);
    expect(await stage.inspect(inspection(ws.root, [loose]))).toEqual([expect.objectContaining({ origin: 'instrument', message: expect.stringContaining('now eslint@') })]);
    expect(stage.progress()).toBe(progress);
  });

  it('refuses with workspace/missing when no linter is installed or named', { timeout: 30_000 }, async () => {
    // Under the OS temp dir no node_modules above resolves oxlint or eslint.
    const root = mkdtempSync(join(tmpdir(), 'vouch-lint-missing-'));
    try {
      writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'bare' }));
      const none = createLintStage(root);
      const error = await rejection(none.warm());
      expect([error.origin, error.code]).toEqual(['workspace', 'missing']);
      expect(error.detail).toMatch(/oxlint.*eslint/);
      expect((await rejection(none.inspect(inspection(root, [CLEAN])))).code).toBe('missing');
      // Named by the lint script but not installed: still the workspace's to fix.
      writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'bare', scripts: { lint: 'oxlint' } }));
      const named = createLintStage(root);
      const missing = await rejection(named.warm());
      expect([missing.origin, missing.code, missing.detail]).toEqual(['workspace', 'missing', expect.stringContaining('oxlint is not installed')]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
