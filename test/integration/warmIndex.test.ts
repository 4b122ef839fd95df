import { linkSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckDefinition } from '../../src/core/definition.js';
import { MemoryStatCache } from '../../src/core/statCache.js';
import { InputScanner } from '../../src/fs/inputScanner.js';
import type { ObservedInputs } from '../../src/observer/protocol.js';
import { ObserverBusy, WarmIndex, type Snapshot } from '../../src/observer/warmIndex.js';
import { tempProject, type TempProject } from '../helpers/project.js';

// In-process: the index over a real project and its real scanner, with the watcher played by the test
// (touched, raise and settle are what the daemon calls on events and faults).
const SRC: ObservedInputs = { name: 'src', inputs: ['src/**'], installed: [] };
const ALL: ObservedInputs = { name: 'all', inputs: ['**/*'], installed: [] };
const SOON = () => Date.now() + 30_000;

const outside = mkdtempSync(join(tmpdir(), 'vouch-warm-index-'));
afterAll(() => rmSync(outside, { recursive: true, force: true }));

let project: TempProject;
let index: WarmIndex;
let snapshots: Snapshot[];
let errors: Error[];

function newIndex(ruleFiles: string[] = []): WarmIndex {
  snapshots = [];
  errors = [];
  index = new WarmIndex(project.root, [], new MemoryStatCache(), (error) => errors.push(error), (snapshot) => snapshots.push(snapshot), ruleFiles);
  return index;
}

/** What a direct status would see now. */
function direct(check: ObservedInputs): string {
  return new InputScanner(project.root, [], new MemoryStatCache()).observe(check as unknown as CheckDefinition).manifest.digest;
}

beforeEach(() => {
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
