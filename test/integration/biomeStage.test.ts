import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Draft } from '../../src/core/claim.js';
import type { ClaimError } from '../../src/core/claimError.js';
import { BiomeStage } from '../../src/prove/biomeStage.js';
import { createLintStage, type LintStage, pickLinter } from '../../src/prove/lintStage.js';
import { createOverlay } from '../../src/prove/overlay.js';
import type { Inspection, StageInstance } from '../../src/prove/stage.js';
import { installedVersion } from '../helpers/claims.js';
import { BASELINE_CASES, LEGACY_DISK, LEGACY_PATH, onLegacy } from '../helpers/lintBaseline.js';
import { REPO, tempProject, type TempProject } from '../helpers/project.js';
import { rejection } from '../helpers/rejection.js';

/*
 * The Biome lint stage against the repo's own @biomejs/biome (the projects
 * live under the repo, so they resolve it): a resident `biome lsp-proxy`
 * with a daemon of its own, drafts linted from memory.
 */

const TEST_DRAFT: Draft = { path: 'src/ok.test.ts', text: 'export const checked = true;\n' };
const CLEAN: Draft = { path: 'src/value.ts', text: 'export const value = 1;\n' };
const DEBUGGER: Draft = { path: 'src/value.ts', text: 'export const value = 1;\ndebugger;\n' };

function inspection(root: string, drafts: Draft[], test: Draft = TEST_DRAFT): Inspection {
  return { phase: 'case', drafts, test, overlay: createOverlay(root, [...drafts, test]), project: join(root, 'tsconfig.json') };
}

/** Alive and not a zombie: a daemon reparented to an init that does not reap stays in the table after it exits. */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The Biome daemons whose logs go to the private folder `home` (its private cache dir). */
function daemons(home: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && running(Number(name)))
    .filter((pid) => {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return args.includes('__run_server') && args.some((arg) => arg.startsWith(`--log-path=${home}`));
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

const projects: TempProject[] = [];
const stages: StageInstance[] = [];
afterAll(async () => {
  await Promise.all(stages.map((stage) => stage.destroy()));
  for (const project of projects) project.remove();
});

function biomeProject(extra: Record<string, string> = {}): TempProject {
  const made = tempProject('lint-biome', {
    'package.json': JSON.stringify({ name: 'ws', type: 'module', scripts: { lint: 'biome lint src' } }),
    'biome.json': JSON.stringify({
      files: { includes: ['**', '!generated'] },
      linter: { includes: ['**', '!src/legacy/**'] },
      overrides: [{ includes: ['tests/**'], linter: { rules: { suspicious: { noDebugger: 'off' } } } }],
    }),
    ...extra,
  });
  projects.push(made);
  return made;
}

function track<T extends StageInstance>(stage: T): T {
  stages.push(stage);
  return stage;
}

describe('Biome stage', () => {
  it('answers clean drafts with no issues, and a debugger statement with a claimant issue (path, line, column, rule)', { timeout: 30_000 }, async () => {
    const ws = biomeProject();
    const stage = track(createLintStage(ws.root));
    let started = performance.now();
    expect(await stage.warm()).toEqual({ name: 'biome', version: installedVersion('@biomejs/biome') });
    const warmMs = performance.now() - started;
    expect((stage as LintStage).linter).toBeInstanceOf(BiomeStage);
    started = performance.now();
    expect(await stage.inspect(inspection(ws.root, [CLEAN]))).toEqual([]);
    const firstMs = performance.now() - started;
    const before = stage.progress();
    started = performance.now();
    const loose = 'export const same = (a: unknown) => a == 1;\n';
    const issues = await stage.inspect(inspection(ws.root, [DEBUGGER, { path: 'src/other.ts', text: loose }]));
    const warmInspectMs = performance.now() - started;
    expect(issues).toEqual([
      { origin: 'claimant', stage: 'lint', path: 'src/value.ts', line: 2, column: 1, code: 'lint/suspicious/noDebugger', message: expect.stringContaining('debugger') },
      { origin: 'claimant', stage: 'lint', path: 'src/other.ts', line: 1, column: loose.indexOf('==') + 1, code: 'lint/suspicious/noDoubleEquals', message: expect.stringContaining('==') },
    ]);
    // Two drafts and the test were each sent to the linter.
    expect(stage.progress()).toBe(before + 3);
    // Biome answers each document 250 ms after it opened; the three were opened at once, so the delay is paid once.
    expect(warmInspectMs).toBeLessThan(700);
    console.log(`biome: warm() ${warmMs.toFixed(0)} ms, first inspect ${firstMs.toFixed(0)} ms, warm inspect of 3 documents ${warmInspectMs.toFixed(0)} ms`);
  });

  it('judges the very first document of a cold server under the workspace\'s settings (it waits for Biome to load them)', { timeout: 30_000 }, async () => {
    const ws = biomeProject();
    for (let round = 0; round < 3; round++) {
      const stage = track(new BiomeStage(ws.root));
      await stage.warm();
      expect(await stage.inspect(inspection(ws.root, [DEBUGGER]))).toEqual([expect.objectContaining({ origin: 'claimant', path: 'src/value.ts', code: 'lint/suspicious/noDebugger' })]);
      await stage.destroy();
    }
  });

  it('lints the test draft, applies overrides, keeps warnings and assists out, and locates a draft that does not parse', { timeout: 30_000 }, async () => {
    const ws = biomeProject();
    const stage = track(createLintStage(ws.root));
    await stage.warm();
    expect(await stage.inspect(inspection(ws.root, [CLEAN], { path: 'src/value.test.ts', text: 'debugger;\n' }))).toEqual([
      expect.objectContaining({ origin: 'claimant', path: 'src/value.test.ts', line: 1, column: 1, code: 'lint/suspicious/noDebugger' }),
    ]);
    // The override turns noDebugger off under tests/; `let` never reassigned is only a warning (useConst),
    // and unsorted imports an assist that only `biome check` enforces.
    const overridden: Draft = { path: 'tests/value.test.ts', text: 'import { b } from "./b";\nimport { a } from "./a";\ndebugger;\nlet once = a + b;\nexport { once };\n' };
    expect(await stage.inspect(inspection(ws.root, [CLEAN], overridden))).toEqual([]);
    const broken = await stage.inspect(inspection(ws.root, [{ path: 'src/value.ts', text: 'export const value = 1;\nlet = ;\n' }]));
    expect(broken.length).toBeGreaterThan(0);
    for (const issue of broken) expect(issue).toEqual({ origin: 'claimant', stage: 'lint', path: 'src/value.ts', line: 2, column: expect.any(Number), message: expect.any(String) });
  });

  it('counts warnings when the lint script says --error-on-warnings', { timeout: 30_000 }, async () => {
    const ws = biomeProject({ 'package.json': JSON.stringify({ name: 'ws', scripts: { lint: 'biome lint --error-on-warnings src' } }) });
    const stage = track(createLintStage(ws.root));
    await stage.warm();
    const loose: Draft = { path: 'src/once.ts', text: 'let once = 1;\nexport { once };\n' };
    expect(await stage.inspect(inspection(ws.root, [loose]))).toEqual([expect.objectContaining({ origin: 'claimant', code: 'lint/style/useConst', line: 1 })]);
  });

  it('reports a path files.includes leaves out, and one the linter is off for, as workspace issues, never as clean', { timeout: 30_000 }, async () => {
    const ws = biomeProject();
    const stage = track(createLintStage(ws.root));
    await stage.warm();
    const drafts: Draft[] = [
      { path: 'generated/out.ts', text: 'debugger;\n' },
      { path: 'src/legacy/old.ts', text: 'debugger;\n' },
      CLEAN,
    ];
    const started = performance.now();
    const issues = await stage.inspect(inspection(ws.root, drafts));
    expect(issues.map((issue) => [issue.origin, issue.path, issue.unjudged])).toEqual([
      ['workspace', 'generated/out.ts', true],
      ['workspace', 'src/legacy/old.ts', true],
    ]);
    expect(issues[0]?.message).toContain("Biome's own rules for what it checks");
    // Biome publishes nothing for an excluded path; the code action asked after a second says so, long before the 5 s bound.
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('never judges a draft Biome skips for its size (files.maxSize) clean', { timeout: 30_000 }, async () => {
    const ws = biomeProject({ 'biome.json': JSON.stringify({ files: { maxSize: 1000 } }) });
    const stage = track(createLintStage(ws.root));
    await stage.warm();
    const big: Draft = { path: 'src/big.ts', text: `debugger;\n// ${'x'.repeat(2000)}\n` };
    const issues = await stage.inspect(inspection(ws.root, [big]));
    expect(issues).toEqual([expect.objectContaining({ origin: 'workspace', path: 'src/big.ts', unjudged: true, message: expect.stringContaining('files.maxSize') })]);
    // A small draft at the same path is judged: the skip was about that text, not the path.
    expect(await stage.inspect(inspection(ws.root, [{ path: 'src/big.ts', text: 'debugger;\n' }]))).toEqual([expect.objectContaining({ origin: 'claimant', code: 'lint/suspicious/noDebugger' })]);
    expect(await stage.inspect(inspection(ws.root, [{ path: 'src/big.ts', text: 'export const small = 1;\n' }]))).toEqual([]);
  });

  it('makes an error the drafted file already had on disk the workspace\'s, wherever the draft moved it, and counts repeats', { timeout: 30_000 }, async () => {
    const ws = biomeProject({ [LEGACY_PATH]: LEGACY_DISK });
    const lint = vi.spyOn(BiomeStage.prototype as unknown as { lint(path: string, text: string): Promise<unknown> }, 'lint');
    try {
      const stage = track(createLintStage(ws.root));
      await stage.warm();
      for (const draft of BASELINE_CASES) {
        const issues = await stage.inspect(inspection(ws.root, [{ path: LEGACY_PATH, text: draft.text }]));
        expect(onLegacy(issues), draft.name).toEqual(draft.expected);
        expect(issues.every((issue) => issue.code === 'lint/suspicious/noDebugger'), draft.name).toBe(true);
      }
      // The disk text was linted once, for the first draft; the warm inspections after it reused its baseline (each costs Biome 250 ms).
      expect(lint.mock.calls.filter(([, text]) => text === LEGACY_DISK)).toHaveLength(1);
    } finally {
      lint.mockRestore();
    }
  });

  it('restarts when a config that biome.jsonc extends changes', { timeout: 30_000 }, async () => {
    const ws = biomeProject({ 'biome.jsonc': '{\n  // shared rules live beside it\n  "extends": ["./base.json"], /* trailing comma next */\n}\n', 'base.json': JSON.stringify({ linter: { rules: { suspicious: { noDebugger: 'off' } } } }) });
    rmSync(join(ws.root, 'biome.json'));
    const stage = track(createLintStage(ws.root));
    await stage.warm();
    expect(await stage.inspect(inspection(ws.root, [DEBUGGER]))).toEqual([]);
    ws.write('base.json', JSON.stringify({ linter: { rules: { suspicious: { noDebugger: 'error' } } } }));
    expect(await stage.inspect(inspection(ws.root, [DEBUGGER]))).toEqual([expect.objectContaining({ origin: 'claimant', code: 'lint/suspicious/noDebugger' })]);
  });

  it('a server that has not loaded its settings in time is a stage-timeout (try again), not a silent start', { timeout: 30_000 }, async () => {
    const ws = biomeProject();
    const stage = track(new BiomeStage(ws.root, { settingsMs: 1 }));
    const error = await rejection(stage.warm());
    expect([error.origin, error.code]).toEqual(['instrument', 'stage-timeout']);
    expect(error.message).toMatch(/did not finish initialized \(its settings loaded, the project scanned\) within 1 ms/);
    expect(stage.pid).toBeUndefined();
  });

  it('restarts on a config change, refuses a malformed config as the workspace\'s, and is destroyed with its daemon', { timeout: 60_000 }, async () => {
    const ws = biomeProject();
    const stage = track(new BiomeStage(ws.root));
    await stage.warm();
    expect(await stage.inspect(inspection(ws.root, [DEBUGGER]))).toHaveLength(1);
    const firstDaemon = stage.daemonPid!;
    expect(running(firstDaemon)).toBe(true);
    ws.write('biome.json', JSON.stringify({ linter: { rules: { suspicious: { noDebugger: 'off' } } } }));
    expect(await stage.inspect(inspection(ws.root, [DEBUGGER]))).toEqual([]);
    // The replaced server's daemon ended with its proxy.
    expect(await until(() => !running(firstDaemon), 5000)).toBe(true);
    ws.write('biome.json', '{ "linter": { "rules": { "suspicious": { "noDebugger": "sometimes" } } } }\n');
    const error = await rejection(stage.inspect(inspection(ws.root, [DEBUGGER])));
    expect([error.origin, error.code]).toEqual(['workspace', 'malformed']);
    expect(error.message).toContain('sometimes');
    ws.write('biome.json', '{}\n');
    expect(await stage.inspect(inspection(ws.root, [DEBUGGER]))).toHaveLength(1);
    const proxy = stage.pid!;
    const daemon = stage.daemonPid!;
    const home = stage.home!;
    expect(existsSync(join(home, 'biome', 'biome-daemon'))).toBe(true);
    await stage.destroy();
    expect(await until(() => !running(proxy) && !running(daemon), 5000)).toBe(true);
    expect((await rejection(stage.inspect(inspection(ws.root, [DEBUGGER])))).code).toBe('destroyed');
    // Its private daemon home (socket and logs) is gone too.
    expect(existsSync(home)).toBe(false);
  });
});

describe('a hostile workspace', () => {
  it('starts again when the proxy exits cleanly before it is initialized, at most three times', { timeout: 30_000 }, async () => {
    // A project of its own Biome, whose binary is a script that exits 0 on its first `lsp-proxy` starts, then runs the real one.
    const real = createRequire(join(REPO, 'package.json'));
    const biomeManifest = real.resolve('@biomejs/biome/package.json');
    const platformManifest = createRequire(biomeManifest).resolve(`@biomejs/cli-${process.platform}-${process.arch}/package.json`);
    const platform = `@biomejs/cli-${process.platform}-${process.arch}`;
    const wrapper = (failures: number) => `#!/bin/sh
dir=$(dirname "$0")
if [ "$1" = lsp-proxy ]; then
  n=$(cat "$dir/starts" 2>/dev/null || echo 0)
  echo $((n + 1)) > "$dir/starts"
  [ "$n" -lt ${failures} ] && exit 0
fi
exec ${JSON.stringify(join(dirname(platformManifest), 'biome'))} "$@"
`;
    const attempt = async (failures: number) => {
      const ws = biomeProject({
        'node_modules/@biomejs/biome/package.json': readFileSync(biomeManifest, 'utf8'),
        [`node_modules/${platform}/package.json`]: readFileSync(platformManifest, 'utf8'),
        [`node_modules/${platform}/biome`]: wrapper(failures),
      });
      chmodSync(join(ws.root, 'node_modules', platform, 'biome'), 0o755);
      const stage = track(new BiomeStage(ws.root));
      const warmed = await stage.warm().then((tool) => tool, (error: Error) => error);
      return { warmed, starts: Number(readFileSync(join(ws.root, 'node_modules', platform, 'starts'), 'utf8')), stage, ws };
    };
    const recovered = await attempt(2);
    expect(recovered.warmed).toEqual({ name: 'biome', version: installedVersion('@biomejs/biome') });
    expect(recovered.starts).toBe(3);
    expect(await recovered.stage.inspect(inspection(recovered.ws.root, [DEBUGGER]))).toHaveLength(1);
    const given = await attempt(3);
    expect(given.starts).toBe(3);
    expect(given.warmed).toBeInstanceOf(Error);
    expect((given.warmed as Error).message).toMatch(/^the language server exited \(code 0\)/);
  });

  it('a FIFO planted under a name the stage digests (.gitignore, biome.json\'s extends) does not block it', { timeout: 30_000 }, async () => {
    const ws = biomeProject({ 'biome.json': JSON.stringify({ extends: ['./shared.json'] }) });
    for (const name of ['.gitignore', 'shared.json', 'src/.ignore']) {
      mkdirSync(dirname(join(ws.root, name)), { recursive: true });
      expect(spawnSync('mkfifo', [join(ws.root, name)]).status).toBe(0);
    }
    // Biome itself blocks reading the FIFO its config extends, and never says it is initialized:
    // vouch's event loop stays free, so the bound on that wait fires.
    const stage = track(new BiomeStage(ws.root, { settingsMs: 3000 }));
    let home = '';
    const started = (async () => {
      while (stage.home === null) await new Promise((resolve) => setTimeout(resolve, 10));
      home = stage.home;
    })();
    const answer = await Promise.race([
      (async () => {
        try {
          await stage.warm();
          return await stage.inspect(inspection(ws.root, [DEBUGGER]));
        } catch (error) {
          return error;
        }
      })(),
      new Promise((resolve) => setTimeout(() => resolve('blocked'), 15_000)),
    ]);
    await started;
    expect(answer).not.toBe('blocked');
    expect(answer).toMatchObject({ origin: 'instrument', code: 'stage-timeout' });
    // Its daemon, stuck reading the FIFO, did not end with its proxy; vouch stopped it.
    expect(await until(() => daemons(home).length === 0, 5000)).toBe(true);
  });
});

describe('picking Biome', () => {
  it('by a script that lints with it, by its config after oxlint\'s and ESLint\'s, never by biome format', () => {
    const ws = tempProject('lint-pick-biome', { 'package.json': JSON.stringify({ scripts: { lint: 'biome check .' } }), 'eslint.config.js': 'export default [];\n' }, { git: false });
    projects.push(ws);
    expect(pickLinter(ws.root)).toEqual({ name: 'biome', warningsFail: false });
    ws.write('package.json', JSON.stringify({ scripts: { lint: 'npx @biomejs/biome lint --error-on-warnings ./src' } }));
    expect(pickLinter(ws.root)).toEqual({ name: 'biome', warningsFail: true });
    ws.write('package.json', JSON.stringify({ scripts: { format: 'biome format --write .', lint: 'eslint .' } }));
    expect(pickLinter(ws.root)).toEqual({ name: 'eslint', warningsFail: false });
    // Configured both ways, scripted neither: ESLint's config is looked for before Biome's.
    ws.write('package.json', JSON.stringify({ scripts: { format: 'biome format --write .' } }));
    ws.write('biome.json', '{}\n');
    expect(pickLinter(ws.root).name).toBe('eslint');
    rmSync(join(ws.root, 'eslint.config.js'));
    expect(pickLinter(ws.root)).toEqual({ name: 'biome', warningsFail: false });
  });

  it('by its config only with @biomejs/biome installed; a Biome config with no linter installed is refused, naming the package', () => {
    // The OS temp dir is outside the repo, so nothing resolves there.
    const root = mkdtempSync(join(tmpdir(), 'vouch-biome-none-'));
    try {
      writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'ws' }));
      writeFileSync(join(root, 'biome.json'), '{}\n');
      const error = (() => {
        try {
          pickLinter(root);
        } catch (caught) {
          return caught as ClaimError;
        }
        throw new Error('pickLinter chose a linter in a workspace with none installed');
      })();
      expect([error.origin, error.code]).toEqual(['workspace', 'missing']);
      expect(error.message).toContain('npm install --save-dev @biomejs/biome');
      mkdirSync(join(root, 'node_modules'));
      symlinkSync(join(REPO, 'node_modules', 'oxlint'), join(root, 'node_modules', 'oxlint'));
      expect(pickLinter(root).name).toBe('oxlint');
      mkdirSync(join(root, 'node_modules', '@biomejs'));
      symlinkSync(join(REPO, 'node_modules', '@biomejs', 'biome'), join(root, 'node_modules', '@biomejs', 'biome'));
      expect(pickLinter(root).name).toBe('biome');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
