import { describe, expect, it } from 'vitest';
import { LISTED_CHANGES, summariseChanges, type InstalledCounts } from '../../src/core/changeSummary.js';
import { diffManifest } from '../../src/core/diff.js';
import { countBy, groupInputs, installedBucketOf } from '../../src/core/inputGroups.js';
import { installedPackageOf } from '../../src/core/installedPackage.js';
import { comparePaths, type InputEntry } from '../../src/core/manifest.js';
import { inputChangeLines } from '../../src/cli/explainChanges.js';
import type { Explanation } from '../../src/api/explain.js';
import type { CheckStatus } from '../../src/core/decide.js';
import { explainSummary } from '../../src/mcp/summaries.js';
import { installed, source } from '../helpers/model.js';

const OLD = '10:20:30:644:1:40:50';
const NEW = '10:21:30:644:1:41:51';

const sorted = (entries: InputEntry[]) => [...entries].sort((a, b) => comparePaths(a.path, b.path));

/** n installed files of one package, with one identity. */
function files(pkg: string, n: number, identity = OLD): InputEntry[] {
  return Array.from({ length: n }, (_, index) => installed(`${pkg}/f${String(index).padStart(3, '0')}.js`, identity));
}

function countsOf(before: InputEntry[], after: InputEntry[]): InstalledCounts {
  const of = (entries: InputEntry[]) => countBy(entries.filter((entry) => entry.origin === 'installed').map((entry) => entry.path), installedBucketOf);
  return { before: of(before), after: of(after) };
}

function explainOf(before: InputEntry[], after: InputEntry[]) {
  const b = sorted(before);
  const a = sorted(after);
  const changes = diffManifest(b, a);
  const counts = countsOf(b, a);
  return { changes, counts, summary: summariseChanges(changes, () => counts), lines: inputChangeLines(changes, () => counts, false), all: inputChangeLines(changes, () => counts, true) };
}

describe('installedPackageOf(path)', () => {
  it.each([
    ['node_modules/typescript/lib/tsc.js', 'node_modules/typescript'],
    ['node_modules/@types/node/index.d.ts', 'node_modules/@types/node'],
    ['node_modules/a/node_modules/b/index.js', 'node_modules/a/node_modules/b'],
    ['node_modules/a/node_modules/@s/b/x/y.js', 'node_modules/a/node_modules/@s/b'],
    ['node_modules/.pnpm/vitest@4.1.12/node_modules/vitest/index.js', 'node_modules/.pnpm/vitest@4.1.12'],
    ['node_modules/.pnpm/lock.yaml', 'node_modules/.pnpm'],
    ['node_modules/.package-lock.json', 'node_modules'],
    ['node_modules/.bin/tsc', 'node_modules/.bin'],
    ['node_modules/@scope/file.js', 'node_modules/@scope'],
    ['packages/web/node_modules/react/index.js', 'packages/web/node_modules/react'],
    ['src/node_modules', null],
    ['src/index.ts', null],
    ['vendor/lib/a.js', null],
  ])('%s belongs to %s', (path, expected) => {
    expect(installedPackageOf(path)).toBe(expected);
  });
});

describe('groupInputs(entries)', () => {
  it('counts source files by top-level directory and installed files by package, largest first, then by name', () => {
    const entries = sorted([
      source('package.json'),
      source('src/a.ts'),
      source('src/b/c.ts'),
      source('test/a.test.ts'),
      source('test/b.test.ts'),
      ...files('node_modules/zod', 3),
      ...files('node_modules/@types/node', 1),
      ...files('node_modules/.pnpm/a@1.0.0/node_modules/a', 2),
      installed('vendor/x.so'),
    ]);
    const [src, inst] = groupInputs(entries);
    expect(src).toEqual({
      kind: 'source',
      by: 'directory',
      count: 5,
      buckets: [
        { name: 'src', count: 2 },
        { name: 'test', count: 2 },
        { name: '.', count: 1 },
      ],
      paths: ['package.json', 'src/a.ts', 'src/b/c.ts', 'test/a.test.ts', 'test/b.test.ts'],
    });
    expect(inst?.count).toBe(7);
    expect(inst?.by).toBe('package');
    expect(inst?.buckets).toEqual([
      { name: 'node_modules/zod', count: 3 },
      { name: 'node_modules/.pnpm/a@1.0.0', count: 2 },
      { name: 'node_modules/@types/node', count: 1 },
      { name: 'vendor', count: 1 },
    ]);
    expect(inst?.paths).toHaveLength(7);
  });

  it('gives both groups even when empty', () => {
    expect(groupInputs([]).map((group) => [group.kind, group.count, group.buckets, group.paths])).toEqual([
      ['source', 0, [], []],
      ['installed', 0, [], []],
    ]);
  });
});

describe('summarised input changes', () => {
  it('few changes need no counts of installed files (counting them is not free)', () => {
    const changes = diffManifest(files('node_modules/x', 3), files('node_modules/x', 3, NEW));
    const counts = () => {
      throw new Error('counted');
    };
    expect(summariseChanges(changes, counts).installed.kind).toBe('listed');
    expect(inputChangeLines(changes, counts, false)).toHaveLength(3);
  });

  it('few changes are listed one per line, in path order, as before', () => {
    const { lines, all } = explainOf([source('a.ts', 'd1'), ...files('node_modules/x', 3)], [source('a.ts', 'd2'), ...files('node_modules/x', 3, NEW)]);
    expect(lines).toEqual(all);
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^modified {2}a\.ts /);
    expect(lines[1]).toBe('identity  node_modules/x/f000.js (installed; ino, mtime_ns, ctime_ns changed)');
  });

  it(`source changes past ${LISTED_CHANGES} are counted, --all lists them`, () => {
    const before = Array.from({ length: 45 }, (_, index) => source(`src/f${String(index).padStart(2, '0')}.ts`, 'old'));
    const after = before.map((entry) => ({ ...entry, digest: 'new' }) as InputEntry);
    const { lines, all, summary } = explainOf(before, after);
    expect(summary.source).toHaveLength(LISTED_CHANGES);
    expect(summary.moreSource).toBe(25);
    expect(lines).toHaveLength(LISTED_CHANGES + 1);
    expect(lines.at(-1)).toBe('… and 25 more source changes (--all lists them)');
    expect(all).toHaveLength(45);
  });

  it('every installed file changing identity, and nothing else, is one line that says what vouch sees', () => {
    const packages = ['node_modules/a', 'node_modules/@s/b', 'node_modules/c'];
    const before = [source('src/a.ts'), ...packages.flatMap((pkg) => files(pkg, 400))];
    const after = [source('src/a.ts'), ...packages.flatMap((pkg) => files(pkg, 400, NEW))];
    const { summary, lines, all } = explainOf(before, after);
    expect(summary.installed).toEqual({ kind: 'all-identity', files: 1200, packages: 3, fields: ['ino', 'mtime_ns', 'ctime_ns'] });
    expect(lines).toEqual(['installed: all 1,200 installed files (3 packages) changed identity (ino, mtime_ns, ctime_ns), as a reinstall does (--all lists them)']);
    expect(all).toHaveLength(1200);
  });

  it('one installed file left as it was: not "all", counted per package instead', () => {
    const before = [...files('node_modules/a', 30), ...files('node_modules/b', 2)];
    const after = [...files('node_modules/a', 30, NEW), installed('node_modules/b/f000.js', NEW), installed('node_modules/b/f001.js', OLD)];
    const { summary, lines } = explainOf(before, after);
    expect(summary.installed.kind).toBe('packages');
    expect(lines).toEqual([
      'installed: 31 files changed in 2 packages (--all lists them)',
      '  node_modules/a: all 30 files changed identity (ino, mtime_ns, ctime_ns)',
      '  node_modules/b: 1 file changed identity (ino, mtime_ns, ctime_ns)',
    ]);
  });

  it('packages added and removed are named, with their file counts; mixed changes are counted by kind', () => {
    const before = [...files('node_modules/.pnpm/a@1.0.0', 12), ...files('node_modules/keep', 10), ...files('node_modules/mixed', 5)];
    const after = [
      ...files('node_modules/.pnpm/a@1.1.0', 14),
      ...files('node_modules/keep', 10),
      ...files('node_modules/mixed', 4, NEW),
      installed('node_modules/mixed/new.js'),
    ];
    const { summary, lines, all, changes } = explainOf(before, after);
    expect(summary.installed.kind).toBe('packages');
    expect(lines).toEqual([
      'installed: 32 files changed in 3 packages (--all lists them)',
      '  node_modules/.pnpm/a@1.1.0: added (14 files)',
      '  node_modules/.pnpm/a@1.0.0: removed (12 files)',
      '  node_modules/mixed: 1 added, 1 removed, 4 changed identity (ino, mtime_ns, ctime_ns)',
    ]);
    expect(all).toHaveLength(changes.length);
  });

  it('a file added to an installed tree the receipt did not have is no reinstall', () => {
    const before = files('node_modules/a', 25);
    const after = [...files('node_modules/a', 25, NEW), installed('node_modules/a/zz.js')];
    expect(explainOf(before, after).summary.installed.kind).toBe('packages');
  });

  it(`more than 20 packages: the first 20 by changed files, then a count`, () => {
    const names = Array.from({ length: 23 }, (_, index) => `node_modules/p${String(index).padStart(2, '0')}`);
    const before = names.flatMap((name, index) => files(name, index + 1));
    const after = names.flatMap((name, index) => files(name, index + 1, NEW)).concat(installed('node_modules/zz/x.js'));
    const { lines } = explainOf(before, after);
    expect(lines[0]).toBe('installed: 277 files changed in 24 packages (--all lists them)');
    expect(lines[1]).toBe('  node_modules/p22: all 23 files changed identity (ino, mtime_ns, ctime_ns)');
    expect(lines).toHaveLength(1 + 20 + 1);
    expect(lines.at(-1)).toBe('  … and 4 more packages');
  });
});

describe("the MCP explain tool's text block", () => {
  const status = { name: 'unit', kind: 'test', freshness: 'STALE', result: 'PASS', reuseEligible: false, reasons: [], receipt: null } as unknown as CheckStatus;
  const explanation = (before: InputEntry[], after: InputEntry[]): Explanation => {
    const { changes, counts } = explainOf(before, after);
    return { status, definitionChanges: [], contextChanges: [], inputChanges: changes, installedCounts: () => counts, evidence: null, notices: [] };
  };

  it('few changes: one line each, as before', () => {
    expect(explainSummary(explanation([source('a.ts', 'd1')], [source('a.ts', 'd2')])).split('\n').slice(1)).toEqual(['modified a.ts']);
  });

  it('every installed file changing identity: one line, without the CLI\'s --all', () => {
    const text = explainSummary(explanation(files('node_modules/a', 50), files('node_modules/a', 50, NEW)));
    expect(text.split('\n').slice(1)).toEqual(['installed: all 50 installed files (1 package) changed identity (ino, mtime_ns, ctime_ns), as a reinstall does']);
  });
});
