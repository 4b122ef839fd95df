import { chmodSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckDefinition } from '../../src/core/definition.js';
import { MemoryStatCache } from '../../src/core/statCache.js';
import { InputScanner } from '../../src/fs/inputScanner.js';
import type { ObservedInputs } from '../../src/observer/protocol.js';
import type { QueueWindow } from '../../src/fs/nativeAddon.js';
import type { QueueWindows } from '../../src/observer/queueWatch.js';
import { ObserverBusy, WarmIndex, type Snapshot } from '../../src/observer/warmIndex.js';
import { tempProject, type TempProject } from '../helpers/project.js';
import { mulberry32 } from '../helpers/seed.js';

// In-process: the index over a real project and its real scanner, with the watcher played by the test
// (touched, raise and settle are what the daemon calls on events and faults).
const SRC: ObservedInputs = { name: 'src', inputs: ['src/**'], installed: [] };
const ALL: ObservedInputs = { name: 'all', inputs: ['**/*'], installed: [] };
const SOON = () => Date.now() + 30_000;
/** The random campaign's length and seed: VOUCH_PATCH_OPS=5000 for the benchmark's run, VOUCH_SEED to replay. */
const PATCH_OPS = Number(process.env.VOUCH_PATCH_OPS ?? 150);
const PATCH_SEED = Number(process.env.VOUCH_SEED ?? 2112);

const outside = mkdtempSync(join(tmpdir(), 'vouch-warm-index-'));
afterAll(() => rmSync(outside, { recursive: true, force: true }));

let project: TempProject;
let index: WarmIndex;
let snapshots: Snapshot[];
/** What the index is told of its event queue: calm unless a test says it stalled, or that there is no queue watch. */
let calm: 'calm' | 'stalled' | 'none' = 'calm';
const QUIET_WINDOW: QueueWindow = { samples: 100, gaps: 0, over: 0, failures: 0, maxBytes: 0, idleNs: 500_000, longestGapNs: 1_500_000, fds: 1 };
const queue: QueueWindows = {
  window: () => (calm === 'none' ? null : calm === 'calm' ? QUIET_WINDOW : { ...QUIET_WINDOW, gaps: 1, longestGapNs: 2_000_000_000 }),
};
let errors: Error[];

function newIndex(ruleFiles: string[] = []): WarmIndex {
  snapshots = [];
  errors = [];
  index = new WarmIndex(project.root, [], new MemoryStatCache(), (error) => errors.push(error), { onSnapshot: (snapshot) => snapshots.push(snapshot), ruleFiles, queue, patch: true });
  return index;
}

/** What a direct status would see now. */
function direct(check: ObservedInputs): string {
  return new InputScanner(project.root, [], new MemoryStatCache()).observe(check as unknown as CheckDefinition).manifest.digest;
}

beforeEach(() => {
  calm = 'calm';
  project = tempProject('warm-index', { 'src/a.ts': 'a', 'src/deep/b.ts': 'b', 'README.md': 'r' });
  newIndex();
});
afterEach(() => {
  index.dispose();
  project.remove();
});

describe('the warm index', () => {
  it('builds its first snapshot on the first question, equal to a direct scan', async () => {
    expect(index.ready).toBe(false);
    const { snapshot, observations } = await index.current([SRC], SOON());
    expect(index.ready).toBe(true);
    expect(observations.map((o) => o.manifest.digest)).toEqual([direct(SRC)]);
    expect(snapshot.directories).toEqual(new Set(['src', 'src/deep']));
    expect(index.files).toBe(2);
    expect(index.rescans).toBe(1);
    expect(index.lastRescan?.reason).toBe('first-index');
    expect(snapshots).toEqual([snapshot]);
    expect(index.healthy).toBe(true);
  });

  it('answers again from the same snapshot while no event came', async () => {
    const first = await index.current([SRC], SOON());
    const second = await index.current([SRC], SOON());
    expect(second.snapshot).toBe(first.snapshot);
    expect(index.rescans).toBe(1);
  });

  it('rescans for a check it does not cover yet, and then covers both', async () => {
    await index.current([SRC], SOON());
    const { observations } = await index.current([SRC, ALL], SOON());
    expect(observations.map((o) => o.manifest.digest)).toEqual([direct(SRC), direct(ALL)]);
    expect(index.rescans).toBe(2);
    expect(index.checks()).toEqual([SRC, ALL]);
    index.track([{ ...SRC, name: 'same inputs, another name' }]);
    expect(index.checks()).toHaveLength(2);
  });

  it('never answers from a snapshot older than the last event: a touched index rescans before answering', async () => {
    const before = await index.current([SRC], SOON());
    project.write('src/a.ts', 'edited');
    index.touched();
    const after = await index.current([SRC], SOON());
    expect(after.snapshot).not.toBe(before.snapshot);
    expect(after.observations[0]?.manifest.digest).toBe(direct(SRC));
    expect(after.observations[0]?.manifest.digest).not.toBe(before.observations[0]?.manifest.digest);
    expect(index.lastRescan?.reason).toBe('file-events');
  });

  it('rescans on its own shortly after an event, without a question', async () => {
    await index.current([SRC], SOON());
    index.touched();
    for (let waited = 0; index.rescans < 2 && waited < 5_000; waited += 10) await delay(10);
    expect(index.rescans).toBe(2);
    expect(snapshots).toHaveLength(2);
  });

  it('is unhealthy while a lasting gap stands, and answers nothing until it is settled', async () => {
    await index.current([SRC], SOON());
    index.raise({ code: 'observer-watcher-error', message: 'the watcher failed' }, true);
    expect(index.healthy).toBe(false);
    expect(index.reasons()).toEqual([{ code: 'observer-watcher-error', message: 'the watcher failed' }]);
    await expect(index.current([SRC], Date.now() + 50)).rejects.toBeInstanceOf(ObserverBusy);
    index.settle('observer-watcher-error');
    await index.current([SRC], SOON());
    expect(index.healthy).toBe(true);
    expect(index.lastGap?.reason.code).toBe('observer-watcher-error');
  });

  it('clears a passing gap with the first scan that began after it', async () => {
    await index.current([SRC], SOON());
    index.raise({ code: 'observer-overflow', message: 'events were lost' }, false);
    expect(index.healthy).toBe(false);
    await index.current([SRC], SOON());
    expect(index.healthy).toBe(true);
    expect(index.lastRescan?.reason).toBe('observer-overflow');
  });

  it('settling a gap that was never raised changes nothing', async () => {
    const { snapshot } = await index.current([SRC], SOON());
    index.settle('observer-root-moved');
    expect((await index.current([SRC], SOON())).snapshot).toBe(snapshot);
  });

  it('gives up at the deadline with ObserverBusy', async () => {
    await expect(index.current([SRC], Date.now() - 1)).rejects.toBeInstanceOf(ObserverBusy);
  });

  it('re-stats hard-linked inputs on every question: a write through the other link raises no event here', async () => {
    const other = join(outside, `a-${Date.now()}.ts`);
    linkSync(join(project.root, 'src/a.ts'), other);
    const before = await index.current([SRC], SOON());
    expect(before.snapshot.linked.map(([path]) => path)).toEqual(['src/a.ts']);
    writeFileSync(other, 'written elsewhere');
    const after = await index.current([SRC], SOON());
    expect(index.lastRescan?.reason).toBe('hard-linked-input');
    expect(after.observations[0]?.manifest.digest).toBe(direct(SRC));
    expect(after.observations[0]?.manifest.digest).not.toBe(before.observations[0]?.manifest.digest);
  });

  it('rescans when a git rule file outside the root changes', async () => {
    const rules = join(outside, `exclude-${Date.now()}`);
    writeFileSync(rules, '');
    newIndex([rules]);
    const before = await index.current([SRC], SOON());
    expect((await index.current([SRC], SOON())).snapshot).toBe(before.snapshot);
    writeFileSync(rules, 'src/deep/\n');
    const after = await index.current([SRC], SOON());
    expect(after.snapshot).not.toBe(before.snapshot);
    expect(index.lastRescan?.reason).toBe('git-rules');
  });
});

describe('patches from events', () => {
  const INSTALLED: ObservedInputs = { name: 'installed', inputs: ['src/**'], installed: ['node_modules/**'] };

  /** Asks, after the change is made and its paths told, and checks the answer against a direct scan. */
  async function after(paths: string[], checks = [SRC]): Promise<void> {
    index.touched('file-events', paths);
    const { observations } = await index.current(checks, SOON());
    expect(observations.map((o) => o.manifest.digest)).toEqual(checks.map(direct));
  }

  it('takes in an edit of a source it holds without a scan, with the digest a scan gives, and its new executable bit', async () => {
    const before = await index.current([SRC, ALL], SOON());
    project.write('src/a.ts', 'edited');
    await after(['src/a.ts'], [SRC, ALL]);
    chmodSync(join(project.root, 'src/deep/b.ts'), 0o755);
    await after(['src/deep/b.ts'], [SRC, ALL]);
    expect(index.rescans).toBe(1);
    expect(index.patches).toBe(2);
    expect(index.lastPatch?.paths).toBe(1);
    const now = await index.current([SRC, ALL], SOON());
    expect(now.observations[0]?.manifest.digest).not.toBe(before.observations[0]?.manifest.digest);
    expect(now.observations[0]?.manifest.entries.find((entry) => entry.path === 'src/deep/b.ts')).toMatchObject({ executable: true });
    // The patched index's own snapshot is no scan's: nothing runs after it that only a scan needs.
    expect(snapshots).toHaveLength(1);
  });

  it('takes in a change to a path that is no input of any check without a scan, and answers as before', async () => {
    const before = await index.current([SRC], SOON());
    project.write('README.md', 'changed');
    project.write('notes.txt', 'new, but outside src/');
    await after(['README.md', 'notes.txt']);
    expect(index.rescans).toBe(1);
    expect((await index.current([SRC], SOON())).observations[0]?.manifest.digest).toBe(before.observations[0]?.manifest.digest);
  });

  it('scans in full for whatever a patch cannot prove: a new input, a deleted one, a link, a directory, .gitignore, .git, an installed file', async () => {
    project.write('node_modules/dep/index.js', 'dep');
    project.write('.gitignore', 'node_modules/\n');
    newIndex();
    await index.current([SRC, INSTALLED], SOON());
    const cases: [string, () => string[]][] = [
      ['a new source', () => (project.write('src/new.ts', 'new'), ['src/new.ts'])],
      ['a deleted source', () => (rmSync(join(project.root, 'src/new.ts')), ['src/new.ts'])],
      ['a source replaced by a link', () => (rmSync(join(project.root, 'src/a.ts')), symlinkSync('deep/b.ts', join(project.root, 'src/a.ts')), ['src/a.ts'])],
      ['a directory made', () => (mkdirSync(join(project.root, 'src/made')), ['src/made'])],
      ['a directory holding inputs removed', () => (rmSync(join(project.root, 'src/deep'), { recursive: true }), ['src/deep'])],
      ['.gitignore', () => (project.write('.gitignore', 'node_modules/\nsrc/a.ts\n'), ['.gitignore'])],
      ['git index', () => (project.git('rm', '-q', '--cached', 'README.md'), ['.git/index'])],
      ['an installed file', () => (project.write('node_modules/dep/index.js', 'changed'), ['node_modules/dep/index.js'])],
    ];
    for (const [what, change] of cases) {
      const rescans = index.rescans;
      await after(change(), [SRC, INSTALLED]);
      expect(index.rescans, what).toBe(rescans + 1);
    }
    expect(index.patches).toBe(0);
  });

  it('scans in full when events named no paths, or too many', async () => {
    await index.current([SRC], SOON());
    project.write('src/a.ts', 'edited');
    index.touched('file-events', ['src/a.ts']);
    index.touched('rewatch');
    await index.current([SRC], SOON());
    expect([index.rescans, index.patches]).toEqual([2, 0]);
    index.touched('file-events', Array.from({ length: 300 }, (_, n) => `other/${n}`));
    await index.current([SRC], SOON());
    expect([index.rescans, index.patches]).toEqual([3, 0]);
  });

  it('a gap raised after an event makes the next refresh a full scan, which clears it', async () => {
    await index.current([SRC], SOON());
    project.write('src/a.ts', 'edited');
    index.touched('file-events', ['src/a.ts']);
    index.raise({ code: 'observer-overflow', message: 'events were lost' }, false);
    const { observations } = await index.current([SRC], SOON());
    expect(observations[0]?.manifest.digest).toBe(direct(SRC));
    expect([index.rescans, index.patches]).toEqual([2, 0]);
    expect(index.lastRescan?.reason).toBe('observer-overflow');
    expect(index.healthy).toBe(true);
  });

  it('scans in full on its own a while after it was patched (the safety scan)', async () => {
    index.dispose();
    index = new WarmIndex(project.root, [], new MemoryStatCache(), (error) => errors.push(error), { queue, safetyRescanMs: 200, patch: true });
    await index.current([SRC], SOON());
    project.write('src/a.ts', 'edited');
    await after(['src/a.ts']);
    expect(index.patches).toBe(1);
    for (let waited = 0; index.rescans < 2 && waited < 5_000; waited += 20) await delay(20);
    expect(index.lastRescan?.reason).toBe('safety');
  });

  it('patches nothing while the kernel queue may have dropped events, and scans in full before answering after such a window, even with no event', async () => {
    await index.current([SRC], SOON());
    project.write('src/a.ts', 'edited');
    calm = 'stalled';
    await after(['src/a.ts']);
    expect([index.rescans, index.patches]).toEqual([2, 0]);
    // No event at all: a write whose event was dropped is still found.
    project.write('src/deep/b.ts', 'edited, its event lost');
    const { observations } = await index.current([SRC], SOON());
    expect(observations[0]?.manifest.digest).toBe(direct(SRC));
    expect(index.lastRescan?.reason).toBe('lost-events');
  });

  it('without a queue watch, patches nothing and answers from the index while no event came, as before', async () => {
    calm = 'none';
    const { snapshot } = await index.current([SRC], SOON());
    expect((await index.current([SRC], SOON())).snapshot).toBe(snapshot);
    project.write('src/a.ts', 'edited');
    await after(['src/a.ts']);
    expect([index.rescans, index.patches]).toEqual([2, 0]);
  });

  it('with a watcher that reports its losses, patches without a queue watch, and rescans once a loss is raised', async () => {
    index.dispose();
    index = new WarmIndex(project.root, [], new MemoryStatCache(), (error) => errors.push(error), { lossesReported: true, patch: true });
    await index.current([SRC], SOON());
    project.write('src/a.ts', 'edited');
    await after(['src/a.ts']);
    expect([index.rescans, index.patches]).toEqual([1, 1]);
    // A loss the watcher read: only a full scan can tell what else changed.
    project.write('src/deep/b.ts', 'edited, its event lost');
    index.raise({ code: 'observer-overflow', message: 'events were lost' }, false);
    const { observations } = await index.current([SRC], SOON());
    expect(observations[0]?.manifest.digest).toBe(direct(SRC));
    expect(index.lastRescan?.reason).toBe('observer-overflow');
  });

  it(`random edits, creations, deletions, renames, links and rule changes, each told by its paths: every answer equals a direct scan (${PATCH_OPS} operations)`, { timeout: 120_000 }, async () => {
    const random = mulberry32(PATCH_SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const files = () => project.git('ls-files', '--cached', '--others', '--exclude-standard').split('\n').filter((path) => (path.startsWith('src/') || path === 'README.md') && lstatSync(join(project.root, path), { throwIfNoEntry: false }) !== undefined);
    const checks = [SRC, ALL, { name: 'ts', inputs: ['src/**/*.ts', '!src/deep/**'], installed: [] }];
    await index.current(checks, SOON());
    const kinds = new Map<string, number>();
    for (let op = 0; op < PATCH_OPS; op++) {
      const present = files();
      const target = present.length > 0 ? pick(present) : 'src/a.ts';
      const fresh = `src/${pick(['', 'deep/', 'other/'])}${pick(['x', 'y', 'z'])}${op % 7}.${pick(['ts', 'js'])}`;
      let kind = pick(['edit', 'edit', 'edit', 'same bytes', 'chmod', 'create', 'delete', 'rename', 'link', 'ignore', 'readme']);
      if (present.length === 0) kind = 'create';
      // A link may dangle: writing through it is no edit of the link.
      if (['edit', 'same bytes', 'chmod'].includes(kind) && lstatSync(join(project.root, target), { throwIfNoEntry: false })?.isSymbolicLink()) kind = 'delete';
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      const abs = (path: string) => join(project.root, path);
      let paths = [target];
      if (kind === 'edit') project.write(target, `${op} ${random()}`);
      else if (kind === 'same bytes') writeFileSync(abs(target), readFileSync(abs(target)));
      else if (kind === 'chmod') chmodSync(abs(target), random() < 0.5 ? 0o755 : 0o644);
      else if (kind === 'delete') rmSync(abs(target), { force: true });
      else if (kind === 'create') {
        project.write(fresh, `${op}`);
        paths = [fresh];
      } else if (kind === 'rename') {
        mkdirSync(dirname(abs(fresh)), { recursive: true });
        renameSync(abs(target), abs(fresh));
        paths = [target, fresh];
      } else if (kind === 'link') {
        rmSync(abs(fresh), { force: true });
        mkdirSync(dirname(abs(fresh)), { recursive: true });
        symlinkSync(basename(target), abs(fresh));
        paths = [fresh];
      } else if (kind === 'ignore') {
        project.write('.gitignore', random() < 0.5 ? '' : `${target}\n`);
        paths = ['.gitignore'];
      } else {
        project.write('README.md', `${op}`);
        paths = ['README.md'];
      }
      index.touched('file-events', paths);
      const { observations } = await index.current(checks, SOON());
      const seen = observations.map((o) => o.manifest.digest);
      const scanned = checks.map((check) => new InputScanner(project.root, [], new MemoryStatCache()).observe(check as unknown as CheckDefinition));
      const differs = checks.flatMap((check, n) => {
        const indexed = new Map(observations[n]!.manifest.entries.map((entry) => [entry.path, JSON.stringify(entry)]));
        const byScan = new Map(scanned[n]!.manifest.entries.map((entry) => [entry.path, JSON.stringify(entry)]));
        return [...new Set([...indexed.keys(), ...byScan.keys()])].filter((path) => indexed.get(path) !== byScan.get(path)).map((path) => `${check.name} ${path}: ${indexed.get(path)} vs ${byScan.get(path)}`);
      });
      expect(seen, `operation ${op} (${kind} ${paths.join(', ')}), seed ${PATCH_SEED}: ${differs.join('; ')}`).toEqual(scanned.map((observation) => observation.manifest.digest));
    }
    expect(index.patches).toBeGreaterThan(PATCH_OPS / 4);
    console.log(`[warm index] ${PATCH_OPS} operations, seed ${PATCH_SEED}: ${index.patches} patches, ${index.rescans} scans; ${JSON.stringify(Object.fromEntries(kinds))}`);
  });
});
