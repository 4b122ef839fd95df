import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Draft, Issue } from '../../src/core/claim.js';
import type { ClaimError } from '../../src/core/claimError.js';
import { createOverlay } from '../../src/prove/overlay.js';
import type { Inspection } from '../../src/prove/stage.js';
import type { TypeStage } from '../../src/prove/typeStage.js';
import { REPO, tempProject, type TempProject } from '../helpers/project.js';

// The BUILT stage: its worker thread starts from dist/prove/typeWorker.js, beside it (the global setup test/setup/freshDist.ts rebuilds dist when it is older than src).
const { createTypeStage } = (await import(pathToFileURL(join(REPO, 'dist', 'prove', 'typeStage.js')).href)) as typeof import('../../src/prove/typeStage.js');

const REPO_TYPESCRIPT = (JSON.parse(readFileSync(join(REPO, 'node_modules', 'typescript', 'package.json'), 'utf8')) as { version: string }).version;

const TSCONFIG = {
  compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, types: [], noEmit: true, rootDir: '.' },
  include: ['src', 'test'],
};

const FILES = {
  'package.json': JSON.stringify({ name: 'fixture', private: true, type: 'module' }),
  'tsconfig.json': JSON.stringify(TSCONFIG, null, 2),
  // A second project over the same sources plus a file that was broken before any claim.
  'tsconfig.legacy.json': JSON.stringify({ extends: './tsconfig.json', include: ['src', 'test', 'legacy'] }),
  'legacy/old.ts': `export const count: number = 'many';\n`,
  'src/math.ts': `export function add(a: number, b: number): number {\n  return a + b;\n}\n`,
  'src/user.ts': `import { add } from './math.js';\n\nexport const total: number = add(1, 2);\n`,
  'src/consts.ts': `export const LIMIT: number = 10;\n`,
};

const MATH = FILES['src/math.ts'];
const TEST = `import { add } from '../src/math.js';\n\nexport const three: number = add(1, 2);\n`;

function inspection(workspace: string, drafts: Draft[], test: Draft, project = 'tsconfig.json'): Inspection {
  return { phase: 'case', drafts, test, overlay: createOverlay(workspace, [...drafts, test]), project: join(workspace, project) };
}

const claimant = (issues: Issue[]) => issues.filter((issue) => issue.origin === 'claimant');

async function rejection(promise: Promise<unknown>): Promise<ClaimError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    return error as ClaimError;
  }
  throw new Error('expected a rejection');
}

describe('type stage on a warm builder program', () => {
  let project: TempProject;
  let stage: TypeStage;
  const inspect = (drafts: Draft[], test: Draft = { path: 'test/math.test.ts', text: TEST }, tsconfig?: string) => stage.inspect(inspection(project.root, drafts, test, tsconfig));

  beforeAll(() => {
    project = tempProject('type-stage', FILES, { git: false });
    stage = createTypeStage(project.root);
  });
  afterAll(async () => {
    await stage.destroy();
    project.remove();
  });

  it('warms with the workspace typescript', { timeout: 30_000 }, async () => {
    expect(await stage.warm('tsconfig.json')).toEqual({ name: 'typescript', version: REPO_TYPESCRIPT });
  });

  it('answers a clean draft and its test with no issues, and counts progress', { timeout: 30_000 }, async () => {
    const before = stage.progress();
    const issues = await inspect([{ path: 'src/math.ts', text: MATH.replace('a + b', 'b + a') }]);
    expect(issues).toEqual([]);
    expect(stage.progress()).toBeGreaterThan(before);
  });

  it('blames the claimant for a type error inside a draft, with path, line and code', { timeout: 30_000 }, async () => {
    const issues = await inspect([{ path: 'src/math.ts', text: `${MATH}export const broken: string = 1;\n` }]);
    expect(issues).toEqual([{ origin: 'claimant', stage: 'type', path: 'src/math.ts', line: 4, column: 14, code: 'TS2322', message: "Type 'number' is not assignable to type 'string'." }]);
  });

  it('blames the claimant for an importer on disk that a signature change breaks', { timeout: 30_000 }, async () => {
    const drafts = [{ path: 'src/math.ts', text: MATH.replace('b: number', 'b: string') }];
    const test = { path: 'test/math.test.ts', text: `import { add } from '../src/math.js';\n\nexport const n: number = add(1, 'x');\n` };
    const issues = await inspect(drafts, test);
    const user = issues.find((issue) => issue.path === 'src/user.ts');
    expect(user).toMatchObject({ origin: 'claimant', line: 3, code: 'TS2345' });
    // The draft's own body no longer fits its return type either; the test, written for the new signature, is fine.
    expect(issues.find((issue) => issue.path === 'src/math.ts')).toMatchObject({ origin: 'claimant', code: 'TS2322' });
    expect(issues.some((issue) => issue.path === 'test/math.test.ts')).toBe(false);
  });

  it('blames the claimant for an error in the test draft', { timeout: 30_000 }, async () => {
    const issues = await inspect([], { path: 'test/math.test.ts', text: `import { add } from '../src/math.js';\n\nexport const s: string = add(1, 2);\n` });
    expect(issues).toEqual([{ origin: 'claimant', stage: 'type', path: 'test/math.test.ts', line: 3, column: 14, code: 'TS2322', message: "Type 'number' is not assignable to type 'string'." }]);
  });

  it('judges a draft that exists only in the overlay, imported by the test', { timeout: 30_000 }, async () => {
    const fresh = { path: 'src/fresh/double.ts', text: `export const double = (n: number): number => n * 2;\n` };
    const test = (value: string) => ({ path: 'test/double.test.ts', text: `import { double } from '../src/fresh/double.js';\n\nexport const four: number = double(${value});\n` });
    expect(await inspect([fresh], test('2'))).toEqual([]);
    expect(claimant(await inspect([fresh], test("'2'")))).toMatchObject([{ path: 'test/double.test.ts', line: 3, code: 'TS2345' }]);
    // Without the overlay the module is gone again: the test alone cannot find it.
    expect(claimant(await inspect([], test('2')))).toMatchObject([{ path: 'test/double.test.ts', line: 1, code: 'TS2307' }]);
  });

  it('reports an error already on disk as the workspace, not the claimant', { timeout: 30_000 }, async () => {
    const issues = await inspect([{ path: 'src/math.ts', text: MATH.replace('a + b', 'b + a') }], undefined, 'tsconfig.legacy.json');
    expect(issues).toEqual([{ origin: 'workspace', stage: 'type', path: 'legacy/old.ts', line: 1, column: 14, code: 'TS2322', message: "Type 'string' is not assignable to type 'number'." }]);
  });

  it('keeps an old error in a disk file outside the project that only the test pulls in as the workspace', { timeout: 30_000 }, async () => {
    const test = { path: 'test/old.test.ts', text: `import { count } from '../legacy/old.js';\n\nexport const seen: number = count;\n` };
    expect(await inspect([], test)).toEqual([{ origin: 'workspace', stage: 'type', path: 'legacy/old.ts', line: 1, column: 14, code: 'TS2322', message: "Type 'string' is not assignable to type 'number'." }]);
    // Once drafted, the error its disk text had stays the workspace's; the one the draft adds is the claimant's.
    const drafts = [{ path: 'legacy/old.ts', text: `export const count: number = 'many';\nexport const other: number = 'more';\n` }];
    expect((await inspect(drafts, test)).map((issue) => [issue.origin, issue.path, issue.line])).toEqual([
      ['claimant', 'legacy/old.ts', 2],
      ['workspace', 'legacy/old.ts', 1],
    ]);
  });

  it('re-reads a disk change between two inspections (the staleness test)', { timeout: 30_000 }, async () => {
    const test = { path: 'test/limit.test.ts', text: `import { LIMIT } from '../src/consts.js';\n\nexport const limit: number = LIMIT;\n` };
    expect(await inspect([], test)).toEqual([]);
    project.write('src/consts.ts', `export const LIMIT: string = 'ten';\n`);
    try {
      expect(await inspect([], test)).toEqual([{ origin: 'claimant', stage: 'type', path: 'test/limit.test.ts', line: 3, column: 14, code: 'TS2322', message: "Type 'string' is not assignable to type 'number'." }]);
    } finally {
      project.write('src/consts.ts', FILES['src/consts.ts']);
    }
    expect(await inspect([], test)).toEqual([]);
  });

  it('retakes the baseline when the disk changes, so a disk edit is never blamed on the claimant', { timeout: 30_000 }, async () => {
    expect(await inspect([])).toEqual([]);
    // A new file on disk (the tsconfig's file list is re-read) and an importer broken on disk, both after the stage warmed.
    project.write('src/extra.ts', `export const flag: boolean = 'yes';\n`);
    project.write('src/user.ts', `import { add } from './math.js';\n\nexport const total: string = add(1, 2);\n`);
    try {
      const issues = await inspect([{ path: 'src/math.ts', text: MATH.replace('a + b', 'b + a') }]);
      expect(issues.map((issue) => `${issue.origin} ${issue.path}:${issue.line} ${issue.code}`)).toEqual(['workspace src/extra.ts:1 TS2322', 'workspace src/user.ts:3 TS2322']);
    } finally {
      project.write('src/user.ts', FILES['src/user.ts']);
      rmSync(join(project.root, 'src/extra.ts'));
    }
    expect(await inspect([])).toEqual([]);
  });

  it('rebuilds when the tsconfig changes', { timeout: 30_000 }, async () => {
    const test = { path: 'test/unused.test.ts', text: `export function f(): number {\n  const unused = 1;\n  return 2;\n}\n` };
    const digestBefore = await stage.optionsDigest('tsconfig.json');
    expect(await inspect([], test)).toEqual([]);
    project.write('tsconfig.json', JSON.stringify({ ...TSCONFIG, compilerOptions: { ...TSCONFIG.compilerOptions, noUnusedLocals: true } }));
    try {
      expect(await inspect([], test)).toMatchObject([{ origin: 'claimant', path: 'test/unused.test.ts', line: 2, code: 'TS6133' }]);
      expect(await stage.optionsDigest('tsconfig.json')).not.toBe(digestBefore);
    } finally {
      project.write('tsconfig.json', FILES['tsconfig.json']);
    }
    expect(await inspect([], test)).toEqual([]);
  });

  it('refuses a drafted tsconfig with a claimant issue rather than judging under the disk one', { timeout: 30_000 }, async () => {
    const issues = await inspect([{ path: 'tsconfig.json', text: FILES['tsconfig.json'] }]);
    expect(issues).toMatchObject([{ origin: 'claimant', stage: 'type', path: 'tsconfig.json' }]);
  });

  it('throws for a project that is missing (claimant) or malformed (workspace)', { timeout: 30_000 }, async () => {
    const missing = await rejection(inspect([], undefined, 'tsconfig.nope.json'));
    expect(missing).toMatchObject({ origin: 'claimant', code: 'missing' });
    expect(missing.message).toContain('tsconfig.nope.json');
    project.write('tsconfig.bad.json', '{ "compilerOptions": { "strict": tru } ');
    const malformed = await rejection(inspect([], undefined, 'tsconfig.bad.json'));
    expect(malformed).toMatchObject({ origin: 'workspace', code: 'malformed' });
    expect(malformed.message).toContain('tsconfig.bad.json');
  });
});

/** A drafted file whose disk text already has a type error (TS2322 on line 2), and drafts that keep, move, repeat or replace it. */
describe('type stage baseline of a drafted file', () => {
  const LEGACY = 'export function legacy(a: number): number {\n  const label: string = a;\n  return a;\n}\n';
  const files = {
    'package.json': FILES['package.json'],
    'tsconfig.json': FILES['tsconfig.json'],
    'src/legacy.ts': LEGACY,
    // Outside the tsconfig's include and imported by nothing: the disk program does not hold it until a claim drafts it.
    'scripts/old.ts': `export const retries: number = 'three';\n`,
  };
  const cases: Array<{ name: string; text: string; expected: Array<[Issue['origin'], number]> }> = [
    { name: "an unrelated fine edit keeps the old error the workspace's", text: LEGACY.replace('return a;', 'return a + 1;'), expected: [['workspace', 2]] },
    { name: "an edit above it shifts its line, and it is still the workspace's", text: `// Kept as it was.\nexport const unit = 1;\n\n${LEGACY}`, expected: [['workspace', 5]] },
    {
      name: 'a second identical error is exactly one claimant issue, listed first',
      text: `${LEGACY}export function fresh(a: number): number {\n  const label: string = a;\n  return a;\n}\n`,
      expected: [
        ['claimant', 6],
        ['workspace', 2],
      ],
    },
    { name: "fixing the old error and adding another is the claimant's", text: `${LEGACY.replace('= a;', '= String(a);')}export const later: boolean = 1;\n`, expected: [['claimant', 5]] },
  ];
  let project: TempProject;
  let stage: TypeStage;
  const test = { path: 'test/legacy.test.ts', text: `import { legacy } from '../src/legacy.js';\n\nexport const one: number = legacy(1);\n` };
  /** The issues in `path` as [origin, line]; src/legacy.ts's old error is the workspace's in every other draft's inspection. */
  const shown = (issues: Issue[], path = 'src/legacy.ts') => issues.filter((issue) => issue.path === path).map((issue): [Issue['origin'], number | undefined] => [issue.origin, issue.line]);

  beforeAll(async () => {
    project = tempProject('type-draft-baseline', files, { git: false });
    stage = createTypeStage(project.root);
    await stage.warm('tsconfig.json');
  }, 30_000);
  afterAll(async () => {
    await stage.destroy();
    project.remove();
  });

  for (const { name, text, expected } of cases) {
    it(name, { timeout: 30_000 }, async () => {
      const issues = await stage.inspect(inspection(project.root, [{ path: 'src/legacy.ts', text }], test));
      expect(issues.every((issue) => issue.path === 'src/legacy.ts' && issue.code === 'TS2322')).toBe(true);
      expect(shown(issues)).toEqual(expected);
    });
  }

  it('judges a drafted file the disk program did not hold against its disk text too', { timeout: 30_000 }, async () => {
    const draft = (text: string) => inspection(project.root, [{ path: 'scripts/old.ts', text }], test);
    expect(shown(await stage.inspect(draft(`export const retries: number = 'three';\nexport const delay = 10;\n`)), 'scripts/old.ts')).toEqual([['workspace', 1]]);
    expect(shown(await stage.inspect(draft(`export const retries: number = 'three';\nexport const delay: number = 'ten';\n`)), 'scripts/old.ts')).toEqual([
      ['claimant', 2],
      ['workspace', 1],
    ]);
  });

  it("follows the disk: an old error fixed on disk is no longer an excuse, and one added there is one", { timeout: 30_000 }, async () => {
    const kept = LEGACY.replace('return a;', 'return a + 1;');
    project.write('src/legacy.ts', LEGACY.replace('= a;', '= String(a);'));
    try {
      expect(shown(await stage.inspect(inspection(project.root, [{ path: 'src/legacy.ts', text: kept }], test)))).toEqual([['claimant', 2]]);
    } finally {
      project.write('src/legacy.ts', LEGACY);
    }
    expect(shown(await stage.inspect(inspection(project.root, [{ path: 'src/legacy.ts', text: kept }], test)))).toEqual([['workspace', 2]]);
  });
});

describe('type stage options digest', () => {
  it('is equal for two copies of one workspace in different directories', { timeout: 30_000 }, async () => {
    const first = tempProject('type-digest-a', FILES, { git: false });
    const second = tempProject('type-digest-b', FILES, { git: false });
    const stages = [createTypeStage(first.root), createTypeStage(second.root)];
    try {
      const [a, b] = await Promise.all(stages.map((stage) => stage.optionsDigest('tsconfig.json')));
      expect(a).toMatch(/^[0-9a-f]{16,64}$/);
      expect(a).toBe(b);
      // Options that differ digest differently, so equality above is not a constant.
      second.write('tsconfig.json', JSON.stringify({ ...TSCONFIG, compilerOptions: { ...TSCONFIG.compilerOptions, rootDir: 'src' } }));
      expect(await stages[1]!.optionsDigest('tsconfig.json')).not.toBe(a);
    } finally {
      await Promise.all(stages.map((stage) => stage.destroy()));
      first.remove();
      second.remove();
    }
  });
});

describe('type stage failure paths', () => {
  it('refuses TypeScript 7 as workspace/missing, naming the version and the fix', { timeout: 30_000 }, async () => {
    const project = tempProject(
      'type-ts7',
      {
        ...FILES,
        'node_modules/typescript/package.json': JSON.stringify({ name: 'typescript', version: '7.0.0', main: 'index.js' }),
        'node_modules/typescript/index.js': `module.exports = { version: '7.0.0', versionMajorMinor: '7.0' };\n`,
      },
      { git: false },
    );
    const stage = createTypeStage(project.root);
    try {
      const error = await rejection(stage.warm());
      // The built stage's ClaimError class is dist's, so it is matched by name, not by instanceof.
      expect(error).toMatchObject({ name: 'ClaimError', origin: 'workspace', code: 'missing' });
      expect(error.message).toContain('7.0.0');
      expect(error.message).toContain('@typescript/typescript6');
      await expect(stage.inspect(inspection(project.root, [], { path: 'test/a.test.ts', text: TEST }))).rejects.toMatchObject({ origin: 'workspace', code: 'missing' });
    } finally {
      await stage.destroy();
      project.remove();
    }
  });

  it('is stale once another typescript is installed than the one it warmed', { timeout: 30_000 }, async () => {
    const wrapper = `module.exports = { ...require('${join(REPO, 'node_modules', 'typescript').replace(/\\/g, '/')}'), version: '6.0.0' };\n`;
    const project = tempProject(
      'type-upgrade',
      {
        ...FILES,
        'node_modules/typescript/package.json': JSON.stringify({ name: 'typescript', version: '6.0.0', main: 'index.js' }),
        'node_modules/typescript/index.js': wrapper,
      },
      { git: false },
    );
    const stage = createTypeStage(project.root);
    try {
      expect(stage.stale()).toBe(false);
      expect(await stage.warm()).toEqual({ name: 'typescript', version: '6.0.0' });
      expect(stage.stale()).toBe(false);
      project.write('node_modules/typescript/package.json', JSON.stringify({ name: 'typescript', version: '6.0.1', main: 'index.js' }));
      expect(stage.stale()).toBe(true);
    } finally {
      await stage.destroy();
      project.remove();
    }
  });

  it('answers an instrument issue when the compiler kills its worker or throws, and again on the next inspection', { timeout: 30_000 }, async () => {
    // A "TypeScript 6" whose builder ends the worker thread: the inspection could not look, so it must say so.
    const fake = `const ts = require('${join(REPO, 'node_modules', 'typescript').replace(/\\/g, '/')}');
module.exports = {
  ...ts,
  version: '6.0.0',
  createSemanticDiagnosticsBuilderProgram() {
    if (require('node:fs').existsSync(__dirname + '/THROW')) throw new Error('compiler bug');
    process.exit(3);
  },
};
`;
    const project = tempProject(
      'type-crash',
      {
        ...FILES,
        'node_modules/typescript/package.json': JSON.stringify({ name: 'typescript', version: '6.0.0', main: 'index.js' }),
        'node_modules/typescript/index.js': fake,
      },
      { git: false },
    );
    const stage = createTypeStage(project.root);
    try {
      expect(await stage.warm()).toEqual({ name: 'typescript', version: '6.0.0' });
      for (let attempt = 0; attempt < 2; attempt++) {
        const issues = await stage.inspect(inspection(project.root, [], { path: 'test/a.test.ts', text: TEST }));
        expect(issues).toHaveLength(1);
        expect(issues[0]).toMatchObject({ origin: 'instrument', stage: 'type' });
        expect(issues[0]!.message).toContain('code 3');
      }
      // A compiler that throws (rather than dying) fails the inspection the same way, as an instrument issue.
      project.write('node_modules/typescript/THROW', '');
      const issues = await stage.inspect(inspection(project.root, [], { path: 'test/a.test.ts', text: TEST }));
      expect(issues).toEqual([{ origin: 'instrument', stage: 'type', message: expect.stringContaining('compiler bug') }]);
    } finally {
      await stage.destroy();
      project.remove();
    }
  });
});

/** A ~200-module project: whole-program correctness and the cost of one inspection, cold and warm. */
describe('type stage on a 200-module project', () => {
  const files: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'bench', private: true, type: 'module' }),
    'tsconfig.json': JSON.stringify(TSCONFIG),
  };
  for (let i = 0; i < 200; i++) {
    const imports = [1, 2, 3].map((k) => i - k).filter((j) => j >= 0);
    files[`src/mod${i}.ts`] = [
      ...imports.map((j) => `import { make${j}, type Box${j} } from './mod${j}.js';`),
      `export interface Box${i}<T> { value: T; tag: 'm${i}' }`,
      `export type Mapped${i}<T> = { readonly [K in keyof T]: Box${i}<T[K]> };`,
      `export function make${i}(n: number): Box${i}<number> {\n  return { value: n, tag: 'm${i}' };\n}`,
      `export class Service${i} {\n  run(x: number): string {\n    return String(x);\n  }\n}`,
      ...imports.map((j) => `export const use${i}_${j}: Box${j}<number> = make${j}(${i});`),
      '',
    ].join('\n');
  }
  files['src/index.ts'] = Array.from({ length: 200 }, (_, i) => `export * from './mod${i}.js';`).join('\n') + '\n';

  it('catches a broken importer; cold and warm times are reported', { timeout: 60_000 }, async () => {
    const project = tempProject('type-bench', files, { git: false });
    const stage = createTypeStage(project.root);
    const mod100 = files['src/mod100.ts']!;
    const test = { path: 'test/mod100.test.ts', text: `import { make100 } from '../src/mod100.js';\n\nexport const box = make100(1);\n` };
    const timed = async (drafts: Draft[]) => {
      const started = performance.now();
      const issues = await stage.inspect(inspection(project.root, drafts, test));
      return { issues, ms: Math.round(performance.now() - started) };
    };
    try {
      const coldStart = performance.now();
      await stage.warm();
      const cold = await timed([{ path: 'src/mod100.ts', text: mod100.replace('String(x)', 'String(x + 1)') }]);
      const coldMs = Math.round(performance.now() - coldStart);
      expect(cold.issues).toEqual([]);
      const body = await timed([{ path: 'src/mod100.ts', text: mod100.replace('String(x)', 'String(x + 2)') }]);
      const local = await timed([{ path: 'src/mod100.ts', text: `${mod100}const wrong: string = 1;\n` }]);
      const signature = await timed([{ path: 'src/mod100.ts', text: mod100.replace('make100(n: number)', 'make100(n: string)') }]);
      expect(body.issues).toEqual([]);
      expect(claimant(local.issues)).toHaveLength(1);
      // mod101..mod103 call make100 with a number; the test does too.
      const broken = new Set(claimant(signature.issues).map((issue) => issue.path));
      expect([...broken].sort()).toEqual(['src/mod100.ts', 'src/mod101.ts', 'src/mod102.ts', 'src/mod103.ts', 'test/mod100.test.ts']);
      const back = await timed([{ path: 'src/mod100.ts', text: mod100.replace('String(x)', 'String(x + 3)') }]);
      expect(back.issues).toEqual([]);
      console.log(`type stage, 200 modules: cold (warm + first inspection) ${coldMs} ms; warm body ${body.ms} ms, local ${local.ms} ms, signature ${signature.ms} ms, back ${back.ms} ms`);
    } finally {
      await stage.destroy();
      project.remove();
    }
  });
});

describe('type stage destroy', () => {
  it('stops at once mid-inspection and rejects what was pending', { timeout: 30_000 }, async () => {
    const project = tempProject('type-destroy', FILES, { git: false });
    const stage = createTypeStage(project.root);
    try {
      await stage.warm();
      let settled = false;
      const pending = stage.inspect(inspection(project.root, [], { path: 'test/a.test.ts', text: TEST }));
      const outcome = rejection(pending.finally(() => (settled = true)));
      // The first inspection builds the whole program, so 50 ms in it is still checking.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(settled).toBe(false);
      const started = performance.now();
      await stage.destroy();
      const error = await outcome;
      expect(error).toMatchObject({ origin: 'instrument', code: 'destroyed' });
      expect(performance.now() - started).toBeLessThan(2_000);
      await expect(stage.inspect(inspection(project.root, [], { path: 'test/a.test.ts', text: TEST }))).rejects.toMatchObject({ code: 'destroyed' });
    } finally {
      project.remove();
    }
  });
});
