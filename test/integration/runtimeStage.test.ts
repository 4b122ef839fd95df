import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Draft } from '../../src/core/claim.js';
import { createOverlay } from '../../src/prove/overlay.js';
import { isClaimError } from '../../src/core/claimError.js';
import { createRuntimeStage } from '../../src/prove/runtimeStage.js';
import type { Inspection, StageInstance } from '../../src/prove/stage.js';
import { installedVersion } from '../helpers/claims.js';
import { tempProject as makeProject, type TempProject } from '../helpers/project.js';
import { linkVitest, VITEST_3, VITEST_4 } from '../helpers/vitestCopies.js';

const CONFIG = `import { defineConfig } from 'vitest/config';
// Its own config, so Vitest never reaches for the repo's config above .tmp/.
export default defineConfig({ test: { include: ['test/**/*.test.ts'] } });
`;

const FILES = {
  'package.json': JSON.stringify({ name: 'fixture', private: true, type: 'module' }),
  'vitest.config.ts': CONFIG,
  'src/money.ts': `export const VALUE = 'disk';\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n`,
  'src/label.ts': `import { VALUE } from './money.js';\nexport const label = (): string => 'label:' + VALUE;\n`,
  'src/where/index.ts': `export const WHERE = 'directory';\n`,
  'src/late.ts': `export const LATE = 'disk';\n`,
  'src/pick.ts': `import { WHERE } from './where';\nexport const picked = (): string => WHERE;\n`,
  'test/existing.test.ts': `import { expect, it } from 'vitest';\nit('is on disk', () => expect(1).toBe(1));\n`,
};

function testDraft(body: string, path = 'test/money.test.ts'): Draft {
  return { path, text: `import { expect, it } from 'vitest';\n${body}\n` };
}

function inspection(workspace: string, drafts: Draft[], test: Draft): Inspection {
  return { phase: 'case', drafts, test, overlay: createOverlay(workspace, [...drafts, test]), project: join(workspace, 'tsconfig.json') };
}

/** Every file under the project (node_modules/.vite included) with its size, to prove nothing was written; the staleness test edits and restores one file. */
function listing(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(`${relative(root, path)}:${statSync(path).size}`);
    }
  };
  walk(root);
  return out.sort();
}

/**
 * Dates every file and directory a minute back. The stage re-reads any file
 * younger than its settle window on every inspection, and re-reads everything
 * when a young directory might have gained an entry, either of which would
 * mask a missing invalidation of overlaid paths in a freshly written fixture.
 */
function age(root: string): void {
  const past = new Date(Date.now() - 60_000);
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      utimesSync(path, past, past);
    }
  };
  walk(root);
  utimesSync(root, past, past);
}

const signalListeners = (): number => (['SIGINT', 'SIGTERM', 'exit', 'unhandledRejection'] as const).reduce((sum, event) => sum + process.listenerCount(event), 0);

/*
 * The whole contract on each Vitest a workspace may have: the repo's own (4.x),
 * and 3.2 through a workspace whose node_modules/vitest links to that copy.
 */
for (const [copy, version] of [
  [VITEST_4, installedVersion('vitest')],
  [VITEST_3, installedVersion('vitest3')],
] as const) {
  describe(`on Vitest ${version}`, () => {
    /** A fixture workspace that resolves this Vitest. */
    const tempProject = (name: string, files: Record<string, string>, options: { git?: boolean }): TempProject => {
      const project = makeProject(name, files, options);
      if (copy !== VITEST_4) linkVitest(project.root, copy);
      return project;
    };

    describe('runtime stage on a warm Vitest', () => {
      let project: TempProject;
      let stage: StageInstance;
      let before: string[];
      let listenersBefore: number;
      let exitCodeBefore: typeof process.exitCode;
      const timings: number[] = [];

      const inspect = async (drafts: Draft[], test: Draft) => {
        const started = performance.now();
        const issues = await stage.inspect(inspection(project.root, drafts, test));
        timings.push(performance.now() - started);
        return issues;
      };

      beforeAll(async () => {
        project = tempProject('runtime', FILES, { git: false });
        age(project.root);
        before = listing(project.root);
        listenersBefore = signalListeners();
        exitCodeBefore = process.exitCode;
        stage = createRuntimeStage(project.root);
        const started = performance.now();
        const tool = await stage.warm();
        timings.push(performance.now() - started);
        expect(tool.name).toBe('vitest');
        expect(tool.version).toBe(version);
      }, 30_000);

      afterAll(async () => {
        await stage?.destroy();
        console.log(`runtime stage timings (ms): warm ${timings[0]?.toFixed(0)}, inspections ${timings.slice(1).map((t) => t.toFixed(0)).join(' ')}`);
        project?.remove();
      });

      it('passes a test that holds against an overlaid draft', async () => {
        const draft = { path: 'src/money.ts', text: `export const VALUE = 'draft';\n` };
        const issues = await inspect([draft], testDraft(`import { VALUE } from '../src/money.js';\nit('reads the draft', () => expect(VALUE).toBe('draft'));`));
        expect(issues).toEqual([]);
        expect(stage.progress()).toBeGreaterThan(0);
      }, 30_000);

      it('reports a failing assertion as a claimant issue at the declared test path and line', async () => {
        const issues = await inspect([], testDraft(`import { add } from '../src/money.js';\n\nit('adds', () => {\n  expect(add(1, 2)).toBe(4);\n});`));
        expect(issues).toHaveLength(1);
        expect(issues[0]).toMatchObject({ origin: 'claimant', stage: 'runtime', path: 'test/money.test.ts', line: 5 });
        expect(issues[0]!.message).toContain('expected 3 to be 4');
      }, 30_000);

      it('really serves the draft: a disk-expecting test fails under a draft that changes the value', async () => {
        const test = testDraft(`import { label } from '../src/label.js';\nit('reads disk', () => expect(label()).toBe('label:disk'));`);
        expect(await inspect([], test)).toEqual([]);
        const issues = await inspect([{ path: 'src/money.ts', text: `export const VALUE = 'changed';\n` }], test);
        expect(issues).toHaveLength(1);
        expect(issues[0]).toMatchObject({ origin: 'claimant', path: 'test/money.test.ts', line: 3 });
        // And back to the disk text once the draft is gone.
        expect(await inspect([], test)).toEqual([]);
      }, 30_000);

      it('serves a module that exists only in the overlay', async () => {
        const draft = { path: 'src/brandnew.ts', text: `export const fresh = (): number => 42;\n` };
        expect(await inspect([draft], testDraft(`import { fresh } from '../src/brandnew.js';\nit('is new', () => expect(fresh()).toBe(42));`))).toEqual([]);
      }, 30_000);

      it('runs a test declared in a directory that does not exist on disk', async () => {
        const test = testDraft(`import { add } from '../../src/money.js';\nit('adds', () => expect(add(2, 2)).toBe(4));`, 'test/deep/new.test.ts');
        expect(await inspect([], test)).toEqual([]);
      }, 30_000);

      it('never answers one draft with another draft text for the same path', async () => {
        const test = testDraft(`import { VALUE } from '../src/money.js';\nit('is one', () => expect(VALUE).toBe('one'));`);
        expect(await inspect([{ path: 'src/money.ts', text: `export const VALUE = 'one';\n` }], test)).toEqual([]);
        const issues = await inspect([{ path: 'src/money.ts', text: `export const VALUE = 'two';\n` }], test);
        expect(issues).toHaveLength(1);
        expect(issues[0]!.message).toContain(`expected 'two' to be 'one'`);
      }, 30_000);

      it('re-reads a module changed on disk between two inspections (staleness)', async () => {
        const test = testDraft(`import { label } from '../src/label.js';\nit('reads disk', () => expect(label()).toBe('label:disk'));`);
        expect(await inspect([], test)).toEqual([]);
        project.write('src/money.ts', `export const VALUE = 'edit';\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n`);
        const issues = await inspect([], test);
        expect(issues).toHaveLength(1);
        expect(issues[0]!.message).toContain(`expected 'label:edit' to be 'label:disk'`);
        project.write('src/money.ts', FILES['src/money.ts']);
        expect(await inspect([], test)).toEqual([]);
      }, 30_000);

      it('re-resolves an unchanged module when a new file beside its import target changes what the import means', async () => {
        const test = testDraft(`import { picked } from '../src/pick.js';\nit('picks the directory', () => expect(picked()).toBe('directory'));`);
        expect(await inspect([], test)).toEqual([]);
        // './where' now names src/where.ts, not src/where/index.ts; src/pick.ts itself did not change.
        project.write('src/where.ts', `export const WHERE = 'file';\n`);
        try {
          const issues = await inspect([], test);
          expect(issues).toHaveLength(1);
          expect(issues[0]!.message).toContain(`expected 'file' to be 'directory'`);
        } finally {
          rmSync(join(project.root, 'src/where.ts'));
        }
        expect(await inspect([], test)).toEqual([]);
      }, 30_000);

      it('re-reads a module first loaded by a run and edited during that run', async () => {
        const late = join(project.root, 'src/late.ts');
        // The test imports the module (Vite reads it), then edits it on disk while the run is still going.
        const edits = testDraft(
          `import { writeFileSync } from 'node:fs';\nimport { LATE } from '../src/late.js';\nit('reads, then edits', () => {\n  expect(LATE).toBe('disk');\n  writeFileSync(${JSON.stringify(late)}, "export const LATE = 'edited';\\n");\n});`,
        );
        try {
          expect(await inspect([], edits)).toEqual([]);
          const reads = testDraft(`import { LATE } from '../src/late.js';\nit('sees the edit', () => expect(LATE).toBe('edited'));`);
          expect(await inspect([], reads)).toEqual([]);
        } finally {
          project.write('src/late.ts', FILES['src/late.ts']!);
          age(project.root);
        }
      }, 30_000);

      it('reports a test file that declares no tests', async () => {
        const issues = await inspect([], testDraft(`export const nothing = 1;`));
        expect(issues).toEqual([expect.objectContaining({ origin: 'claimant', path: 'test/money.test.ts', message: 'the test declares no tests' })]);
      }, 30_000);

      it('reports a syntax error in a draft as a claimant issue', async () => {
        const issues = await inspect([{ path: 'src/money.ts', text: `export const VALUE = ;\n` }], testDraft(`import { VALUE } from '../src/money.js';\nit('x', () => expect(VALUE).toBe(1));`));
        expect(issues.length).toBeGreaterThan(0);
        expect(issues.every((issue) => issue.origin === 'claimant')).toBe(true);
      }, 30_000);

      it('reports an error thrown after the test as a claimant issue', async () => {
        const issues = await inspect([], testDraft(`it('throws later', async () => {\n  setTimeout(() => {\n    throw new Error('late failure');\n  }, 0);\n  await new Promise((resolve) => setTimeout(resolve, 20));\n});`));
        expect(issues).toEqual([expect.objectContaining({ origin: 'claimant', path: 'test/money.test.ts' })]);
        expect(issues[0]!.message).toContain('late failure');
      }, 30_000);

      it('reports a failing beforeAll hook as a claimant issue', async () => {
        const issues = await inspect([], testDraft(`import { beforeAll, describe } from 'vitest';\ndescribe('group', () => {\n  beforeAll(() => {\n    throw new Error('setup broke');\n  });\n  it('x', () => expect(1).toBe(1));\n});`));
        expect(issues.some((issue) => issue.origin === 'claimant' && issue.path === 'test/money.test.ts' && issue.message.includes('setup broke'))).toBe(true);
      }, 30_000);

      it('reports a test path outside the include globs as a workspace issue', async () => {
        const issues = await inspect([], testDraft(`it('x', () => expect(1).toBe(1));`, 'src/money.test.ts'));
        expect(issues).toEqual([expect.objectContaining({ origin: 'workspace', path: 'src/money.test.ts' })]);
      }, 30_000);

      it('wrote nothing into the workspace', () => {
        expect(listing(project.root)).toEqual(before);
      });

      it('left process.exitCode as it was, after failing runs', () => {
        expect(process.exitCode).toBe(exitCodeBefore);
      });

      it('left no SIGINT, SIGTERM, exit or unhandledRejection listener of its Vitest behind', () => {
        expect(signalListeners()).toBe(listenersBefore);
      });

      // The tests below share the warm stage too, after the checks above: one rewrites the config, the last destroys the stage.
      it('keeps the test worker output off the host stdout', async () => {
        const written: string[] = [];
        const write = process.stdout.write.bind(process.stdout);
        try {
          process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
            written.push(String(chunk));
            return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
          }) as typeof process.stdout.write;
          const issues = await stage.inspect(inspection(project.root, [], testDraft(`it('prints', () => {\n  process.stdout.write('VOUCH-MARKER raw\\n');\n  console.log('VOUCH-MARKER console');\n  expect(1).toBe(2);\n});`)));
          expect(issues).toHaveLength(1);
        } finally {
          process.stdout.write = write;
        }
        expect(written.filter((chunk) => chunk.includes('VOUCH-MARKER'))).toEqual([]);
      }, 60_000);

      it('rebuilds when the Vitest config changes', async () => {
        const test = testDraft(`it('sees the define', () => expect(typeof (globalThis as any).__FLAG__).toBe('string'));`);
        expect(await stage.inspect(inspection(project.root, [], test))).toHaveLength(1);
        project.write('vitest.config.ts', CONFIG.replace('test: {', `define: { __FLAG__: JSON.stringify('on') }, test: {`).replace('(globalThis as any).__FLAG__', '__FLAG__'));
        const issues = await stage.inspect(inspection(project.root, [], testDraft(`declare const __FLAG__: string;\nit('sees the define', () => expect(__FLAG__).toBe('on'));`)));
        expect(issues).toEqual([]);
      }, 60_000);

      it('stops promptly when destroyed during an infinite loop', async () => {
        const before = stage.progress();
        const pending = stage.inspect(inspection(project.root, [], testDraft(`it('spins', () => {\n  while (true) {}\n});`)));
        pending.catch(() => undefined);
        const deadline = Date.now() + 10_000;
        while (stage.progress() === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        expect(stage.progress()).toBeGreaterThan(before);
        await new Promise((resolve) => setTimeout(resolve, 200));
        const started = performance.now();
        await stage.destroy();
        expect(performance.now() - started).toBeLessThan(2_000);
        await expect(pending).rejects.toThrow(/destroyed/);
      }, 30_000);
    });

    describe('runtime stage lifecycle', () => {
      it('keeps answering correctly across instance recycles', async () => {
        const project = tempProject('runtime-recycle', FILES, { git: false });
        age(project.root);
        const stage = createRuntimeStage(project.root, { runsPerInstance: 2 });
        const listeners = signalListeners();
        try {
          await stage.warm();
          for (const value of ['a', 'b', 'c', 'd', 'e']) {
            const draft = { path: 'src/money.ts', text: `export const VALUE = '${value}';\n` };
            const test = testDraft(`import { label } from '../src/label.js';\nit('reads the draft', () => expect(label()).toBe('label:c'));`);
            const issues = await stage.inspect(inspection(project.root, [draft], test));
            expect(issues.length, `value ${value}`).toBe(value === 'c' ? 0 : 1);
          }
          expect(signalListeners()).toBe(listeners);
        } finally {
          await stage.destroy();
          project.remove();
        }
      }, 60_000);

    });

    describe('runtime stage against unusual workspaces', () => {
      it('serves drafts into inline projects and refuses a project declared as a path string', async () => {
        const project = tempProject('runtime-projects', {
          ...FILES,
          'vitest.config.ts': `import { defineConfig } from 'vitest/config';\nexport default defineConfig({ test: { projects: [{ test: { name: 'inline', include: ['test/**/*.test.ts'] } }, 'pkg'] } });\n`,
          'pkg/vitest.config.ts': `import { defineConfig } from 'vitest/config';\nexport default defineConfig({ test: { name: 'pkg', include: ['**/*.test.ts'] } });\n`,
        }, { git: false });
        const stage = createRuntimeStage(project.root);
        try {
          await stage.warm();
          const draft = { path: 'src/money.ts', text: `export const VALUE = 'draft';\n` };
          const test = testDraft(`import { VALUE } from '../src/money.js';\nit('reads the draft', () => expect(VALUE).toBe('draft'));`);
          expect(await stage.inspect(inspection(project.root, [draft], test))).toEqual([]);
          const issues = await stage.inspect(inspection(project.root, [], testDraft(`it('x', () => expect(1).toBe(1));`, 'pkg/a.test.ts')));
          expect(issues).toEqual([expect.objectContaining({ origin: 'workspace', path: 'pkg/a.test.ts' })]);
          expect(issues[0]!.message).toContain('path string');
        } finally {
          await stage.destroy();
          project.remove();
        }
      }, 60_000);

      it('reports a draft the workspace served from disk before the overlay could', async () => {
        const project = tempProject('runtime-diskfirst', {
          ...FILES,
          // A workspace plugin that loads src/money.ts itself, ahead of vouch's overlay.
          'vitest.config.ts': `import { readFileSync } from 'node:fs';\nimport { defineConfig } from 'vitest/config';\nexport default defineConfig({\n  plugins: [{ name: 'disk-first', enforce: 'pre', load: (id) => (id.endsWith('/src/money.ts') ? readFileSync(id, 'utf8') : undefined) }],\n  test: { include: ['test/**/*.test.ts'] },\n});\n`,
        }, { git: false });
        const stage = createRuntimeStage(project.root);
        try {
          await stage.warm();
          const draft = { path: 'src/money.ts', text: `export const VALUE = 'disk';\nexport const extra = 1;\n` };
          const issues = await stage.inspect(inspection(project.root, [draft], testDraft(`import { VALUE } from '../src/money.js';\nit('x', () => expect(VALUE).toBe('disk'));`)));
          expect(issues).toEqual([expect.objectContaining({ origin: 'instrument', path: 'src/money.ts' })]);
          expect(issues[0]!.message).toContain('from disk');
        } finally {
          await stage.destroy();
          project.remove();
        }
      }, 60_000);

      it('throws workspace/malformed for a config that does not load', async () => {
        const project = tempProject('runtime-malformed', { ...FILES, 'vitest.config.ts': `export default {{;\n` }, { git: false });
        const stage = createRuntimeStage(project.root);
        try {
          const error = await stage.warm().then(() => undefined, (caught: unknown) => caught);
          expect(isClaimError(error) && error.origin === 'workspace' && error.code === 'malformed').toBe(true);
        } finally {
          await stage.destroy();
          project.remove();
        }
      }, 30_000);

      it('throws workspace/missing where the workspace has no Vitest', async () => {
        const root = mkdtempSync(join(tmpdir(), 'vouch-novitest-'));
        const stage = createRuntimeStage(root);
        try {
          const error = await stage.warm().then(() => undefined, (caught: unknown) => caught);
          expect(isClaimError(error) && error.origin === 'workspace' && error.code === 'missing').toBe(true);
        } finally {
          await stage.destroy();
          rmSync(root, { recursive: true, force: true });
        }
      });
    });
  });
}
