import { describe, expect, it } from 'vitest';
import { evidencePerPackage, summariseEvidenceChanges } from '../../src/core/changeSummary.js';
import { evidenceChangeLines } from '../../src/core/changeText.js';
import { compareEvidencePaths, diffEvidence, type EvidenceChange, type EvidenceEntry } from '../../src/core/evidence.js';
import { directoryBucketOf, evidencePackageOf, groupEvidence, parentDirectoryOf, topDirectoryOf, tracedGroupOf, TRACED_GROUPS } from '../../src/core/inputGroups.js';
import { inputsSummary } from '../../src/mcp/summaries.js';
import type { InputsReport } from '../../src/api/explainInputs.js';
import { context, definition, receipt, observation, why } from '../helpers/model.js';

/*
 * A traced receipt, explained: its evidence grouped for `explain --inputs`, and its changed
 * entries summarised for `explain` (core/inputGroups.ts, core/changeSummary.ts, core/changeText.ts).
 */

const read = (path: string, digest = `d-${path}`, extra: Partial<EvidenceEntry> = {}): EvidenceEntry => ({ path, use: 'read', type: 'file', digest, ...extra });
const listed = (path: string, digest = `n-${path}`): EvidenceEntry => ({ path, use: 'listed', type: 'directory', digest });
const lookup = (path: string, type: EvidenceEntry['type'] = 'file', extra: Partial<EvidenceEntry> = {}): EvidenceEntry => ({ path, use: 'lookup', type, ...extra });
const sorted = (entries: EvidenceEntry[]) => [...entries].sort(compareEvidencePaths);

/** n files read in one package. */
const pkg = (name: string, n: number, digest = 'v1') => Array.from({ length: n }, (_, index) => read(`${name}/f${String(index).padStart(3, '0')}.js`, `${digest}-${index}`));

describe('tracedGroupOf(entry): each path in the first group that applies', () => {
  it.each<[string, EvidenceEntry, string]>([
    ['a file read in the root', read('src/a.ts'), 'read'],
    ['an ignored file read', read('.env'), 'read'],
    ['a directory listed', listed('src'), 'listed'],
    ['the root listed', listed('.'), 'listed'],
    ['a lookup that found a file', lookup('tsconfig.json'), 'found'],
    ['a lookup that found a directory', lookup('src', 'directory'), 'found'],
    ['a lookup that found nothing', lookup('src/a.js', 'absent'), 'absent'],
    ['a probe under node_modules that found nothing', lookup('node_modules/missing/package.json', 'absent'), 'absent'],
    ['a file read in a package', read('node_modules/zod/index.js'), 'installed'],
    ['a pnpm package listed', listed('node_modules/.pnpm/zod@3.0.0/node_modules/zod'), 'installed'],
    ['a link in node_modules looked up', lookup('node_modules/zod', 'directory', { link: '.pnpm/zod@3.0.0/node_modules/zod' }), 'installed'],
    ['node_modules itself, listed', listed('node_modules'), 'installed'],
    ['a file read outside the root', read('/home/u/.npmrc'), 'outside'],
    ['a lookup outside the root that found nothing', lookup('/home/u/tsconfig.json', 'absent'), 'outside'],
    ['a cache the run wrote, then read', read('node_modules/.cache/x/a.json', 'd', { own: true }), 'own'],
    ['its own file outside the root', read('/tmp/cache/a', 'd', { own: true }), 'own'],
  ])('%s', (_what, entry, group) => {
    expect(tracedGroupOf(entry)).toBe(group);
  });
});

describe('the buckets of a path', () => {
  it.each([
    ['src/a/b.ts', 'src'],
    ['package.json', '.'],
    ['.', '.'],
  ])('topDirectoryOf(%s) is %s', (path, top) => {
    expect(topDirectoryOf(path)).toBe(top);
  });

  it.each([
    ['.', '.'],
    ['src', 'src'],
    ['src/a/b', 'src'],
  ])('directoryBucketOf(%s) is %s: a directory is counted under the top-level directory it is, or is in', (path, top) => {
    expect(directoryBucketOf(path)).toBe(top);
  });

  it.each([
    ['/home/u/.npmrc', '/home/u'],
    ['/etc/hosts', '/etc'],
    ['/etc', '/'],
  ])('parentDirectoryOf(%s) is %s: outside the root, where a path is says more than its top directory', (path, parent) => {
    expect(parentDirectoryOf(path)).toBe(parent);
  });

  it.each<[EvidenceEntry, string | null]>([
    [lookup('node_modules/zod', 'directory'), 'node_modules/zod'],
    [listed('node_modules/@s/b'), 'node_modules/@s/b'],
    [listed('node_modules'), 'node_modules'],
    [read('node_modules/.package-lock.json'), 'node_modules'],
    [read('node_modules/zod/index.js'), 'node_modules/zod'],
    [lookup('/home/u/.local/lib/node_modules/tool', 'directory'), '/home/u/.local/lib/node_modules/tool'],
    [listed('src'), null],
  ])('evidencePackageOf(%o) is %s: a directory is named as what it is', (entry, name) => {
    expect(evidencePackageOf(entry)).toBe(name);
  });
});

describe('groupEvidence(entries)', () => {
  const entries = sorted([
    read('package.json'),
    read('src/a.ts'),
    read('src/b/c.ts'),
    read('test/a.test.ts'),
    listed('.'),
    listed('src'),
    lookup('tsconfig.json'),
    lookup('src/a.js', 'absent'),
    lookup('src/a.mjs', 'absent'),
    ...pkg('node_modules/.pnpm/zod@3.0.0/node_modules/zod', 3),
    read('node_modules/typescript/lib/tsc.js'),
    lookup('node_modules/typescript', 'directory'),
    read('/home/u/.npmrc'),
    lookup('/etc/hosts'),
    read('node_modules/.cache/tool/a.json', 'd', { own: true }),
  ]);
  const groups = groupEvidence(entries);

  it('gives every traced group, in order, even when empty', () => {
    expect(groups.map((group) => group.kind)).toEqual([...TRACED_GROUPS]);
    expect(groupEvidence([]).map((group) => [group.kind, group.count, group.buckets, group.paths])).toEqual(TRACED_GROUPS.map((kind) => [kind, 0, [], []]));
  });

  it('puts each path in exactly one group, and counts them', () => {
    expect(groups.reduce((sum, group) => sum + group.count, 0)).toBe(entries.length);
    expect(new Set(groups.flatMap((group) => group.paths)).size).toBe(entries.length);
    expect(Object.fromEntries(groups.map((group) => [group.kind, group.count]))).toEqual({ read: 4, listed: 2, found: 1, absent: 2, installed: 5, outside: 2, own: 1 });
  });

  it('counts reads by top-level directory, installed paths by package, outside paths by their top directory', () => {
    const by = (kind: string) => groups.find((group) => group.kind === kind)!;
    expect(by('read')).toEqual({
      kind: 'read',
      by: 'directory',
      count: 4,
      buckets: [
        { name: 'src', count: 2 },
        { name: '.', count: 1 },
        { name: 'test', count: 1 },
      ],
      paths: ['package.json', 'src/a.ts', 'src/b/c.ts', 'test/a.test.ts'],
    });
    expect(by('installed').by).toBe('package');
    expect(by('installed').buckets).toEqual([
      { name: 'node_modules/.pnpm/zod@3.0.0', count: 3 },
      { name: 'node_modules/typescript', count: 2 },
    ]);
    expect(by('outside').buckets).toEqual([
      { name: '/etc', count: 1 },
      { name: '/home/u', count: 1 },
    ]);
    expect(by('listed').buckets).toEqual([
      { name: '.', count: 1 },
      { name: 'src', count: 1 },
    ]);
    expect(by('absent').paths).toEqual(['src/a.js', 'src/a.mjs']);
    expect(by('own').paths).toEqual(['node_modules/.cache/tool/a.json']);
  });
});

/** The changes between two evidence lists of the same paths. */
function changesOf(before: EvidenceEntry[], after: EvidenceEntry[]): { changes: EvidenceChange[]; perPackage: () => Map<string, number> } {
  const b = sorted(before);
  const a = sorted(after);
  return { changes: diffEvidence(b, a), perPackage: () => evidencePerPackage(b) };
}

describe("a traced receipt's changes, summarised", () => {
  it('few changes: one line each, in path order, and no package counts asked for', () => {
    const { changes } = changesOf([read('src/a.ts', 'x'), lookup('src/b.js', 'absent'), listed('src', 'n1')], [read('src/a.ts', 'y'), lookup('src/b.js', 'file'), listed('src', 'n2')]);
    const counts = () => {
      throw new Error('counted');
    };
    expect(evidenceChangeLines(changes, counts, false)).toEqual(['src: entries added, removed or changed kind', 'src/a.ts: content changed', 'src/b.js: absent → a file']);
  });

  it('many changes in a package: counted per package, "files" when every change is a read', () => {
    const before = [...pkg('node_modules/.pnpm/x@1.0.0', 120), ...pkg('node_modules/y', 30), read('src/a.ts', 'x')];
    const after = [...pkg('node_modules/.pnpm/x@1.0.0', 120, 'v2'), ...pkg('node_modules/y', 30).map((entry, index) => (index < 5 ? { ...entry, digest: 'other' } : entry)), read('src/a.ts', 'y')];
    const { changes, perPackage } = changesOf(before, after);
    const summary = summariseEvidenceChanges(changes, perPackage);
    expect(summary.other.map((change) => change.path)).toEqual(['src/a.ts']);
    expect(summary.installed).toMatchObject({ kind: 'packages', changes: 125 });
    expect(evidenceChangeLines(changes, perPackage, false)).toEqual([
      'src/a.ts: content changed',
      'installed: 125 changes in 2 packages (--all lists them)',
      '  node_modules/.pnpm/x@1.0.0: all 120 files changed',
      '  node_modules/y: 5 files changed',
    ]);
    expect(evidenceChangeLines(changes, perPackage, true)).toHaveLength(126);
  });

  it('a package whose every path is gone (a version change) says so; mixed uses say "paths"', () => {
    const before = [...pkg('node_modules/.pnpm/x@1.0.0', 30), listed('node_modules/.pnpm/y@1/node_modules/y'), ...pkg('node_modules/.pnpm/y@1', 25)];
    const after = [
      ...pkg('node_modules/.pnpm/x@1.0.0', 30).map((entry) => ({ path: entry.path, use: entry.use, type: 'absent' as const })),
      listed('node_modules/.pnpm/y@1/node_modules/y', 'n2'),
      ...pkg('node_modules/.pnpm/y@1', 25, 'v2'),
    ];
    const { changes, perPackage } = changesOf(before, after);
    expect(evidenceChangeLines(changes, perPackage, false)).toEqual([
      'installed: 56 changes in 2 packages (--all lists them)',
      '  node_modules/.pnpm/x@1.0.0: gone (30 files the run used, none there now)',
      '  node_modules/.pnpm/y@1: all 26 paths changed',
    ]);
  });

  it('changes outside packages past the limit are counted; --all lists them', () => {
    const before = Array.from({ length: 45 }, (_, index) => read(`src/f${String(index).padStart(2, '0')}.ts`, 'old'));
    const after = before.map((entry) => ({ ...entry, digest: 'new' }));
    const { changes, perPackage } = changesOf(before, after);
    const lines = evidenceChangeLines(changes, perPackage, false);
    expect(lines).toHaveLength(21);
    expect(lines.at(-1)).toBe('… and 25 more changes (--all lists them)');
    expect(evidenceChangeLines(changes, perPackage, true)).toHaveLength(45);
  });
});

describe("the MCP inputs tool's text block for a traced receipt", () => {
  it('counts each group it has, names the mode and the notes', () => {
    const def = definition({ mode: 'traced' });
    const evidence = sorted([read('src/a.ts'), lookup('src/b.js', 'absent'), ...pkg('node_modules/z', 3)]);
    const made = receipt(def, context(), observation(), { evidence: { mode: 'traced', notes: [why('read-outside-inputs', 'read .env, outside its declared inputs')] } });
    const report: InputsReport = { definition: def, receipt: made, mode: 'traced', entries: null, evidence, notices: [] };
    const lines = inputsSummary(report).split('\n');
    expect(lines[0]).toMatch(/inputs as traced$/);
    expect(lines).toContain('1 file read (src 1)');
    expect(lines).toContain('1 path looked up and absent (src 1)');
    expect(lines).toContain('3 installed paths (node_modules/z 3)');
    expect(lines).toContain('read-outside-inputs: read .env, outside its declared inputs');
    expect(lines.some((line) => line.includes('listed'))).toBe(false);
  });
});
