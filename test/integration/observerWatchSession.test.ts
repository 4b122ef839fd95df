import { existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { Barrier } from '../../src/observer/barrier.js';
import type { GapCode, GapReason, ObservedInputs, RescanReason } from '../../src/observer/protocol.js';
import type { Snapshot } from '../../src/observer/warmIndex.js';
import { WatchSession, type WatchedIndex } from '../../src/observer/watchSession.js';
import { eventually, FakeWatcher } from '../helpers/fakeWatcher.js';
import { tempProject, type TempProject } from '../helpers/project.js';

/*
 * The watch session alone, in process: a fake watcher delivers the events,
 * errors and failed renewals, the root and state dir are real, and the index
 * is a recorder of what the session told it.
 */

class IndexSignals implements WatchedIndex {
  raised: Array<GapReason & { lasting: boolean }> = [];
  settled: GapCode[] = [];
  touches: RescanReason[] = [];
  raise(reason: GapReason, lasting: boolean): void {
    this.raised.push({ ...reason, lasting });
  }
  settle(code: GapCode): void {
    this.settled.push(code);
  }
  touched(reason: RescanReason = 'file-events'): void {
    this.touches.push(reason);
  }
  checks(): ObservedInputs[] {
    return [{ name: 'check', inputs: ['src/**'], installed: [] }];
  }
}

interface Rig {
  project: TempProject;
  root: string;
  stateDir: string;
  cookieDir: string;
  watcher: FakeWatcher;
  index: IndexSignals;
  session: WatchSession;
  logs: string[];
  orphanedCalls: number;
}

const rigs: Rig[] = [];
afterEach(async () => {
  for (const rig of rigs.splice(0)) {
    rig.session.stop();
    await rig.session.close();
    rig.project.remove();
  }
});

async function rig(options: { queueLength?: number; orphaned?: boolean; files?: Record<string, string>; lossesReported?: boolean } = {}): Promise<Rig> {
  const project = tempProject('watch-session', options.files ?? { 'src/a.ts': 'export const a = 1;\n' });
  const root = project.root;
  const stateDir = join(root, '.vouch');
  const cookieDir = join(stateDir, 'observer');
  mkdirSync(cookieDir, { recursive: true });
  const watcher = new FakeWatcher(options.queueLength);
  const index = new IndexSignals();
  const logs: string[] = [];
  const made: Rig = { project, root, stateDir, cookieDir, watcher, index, logs, orphanedCalls: 0, session: null as unknown as WatchSession };
  made.session = new WatchSession({
    root,
    stateDir,
    ownFiles: [join(cookieDir, 'id.log'), join(cookieDir, 'id.json')],
    barrier: new Barrier(join(cookieDir, 'id.cookie-')),
    index,
    watcher,
    ...(options.lossesReported ? { lossesReported: true } : {}),
    log: (message) => logs.push(message),
    orphaned: () => options.orphaned ?? false,
    onOrphaned: () => made.orphanedCalls++,
  });
  rigs.push(made);
  await made.session.start();
  return made;
}

function snapshot(directories: string[], calm: boolean | null = true): Snapshot {
  return { generation: 0, observedAt: 0, observations: new Map(), indexed: new Map(), linked: [], files: directories.length, directories: new Set(directories), rules: '', calm };
}

describe('the change log (what looks that trust events may skip)', () => {
  it('holds every path events named since a mark, the state dir and quiet paths included, with a watcher that reports its losses', async () => {
    const { root, stateDir, watcher, session } = await rig({ lossesReported: true });
    const mark = session.changes.mark();
    expect(mark).not.toBeNull();
    watcher.emit([
      { path: join(root, 'src/a.ts'), type: 'update' },
      { path: join(stateDir, 'state.db'), type: 'update' },
      { path: root, type: 'update' },
    ]);
    expect(session.changes.since(mark!)).toEqual([
      { path: 'src/a.ts', created: false },
      { path: '.vouch/state.db', created: false },
      { path: '', created: false },
    ]);
  });

  it('is void after a lost event of any kind: an overflow, a watcher error, a renewal, an event outside the root', async () => {
    const { root, watcher, session } = await rig({ lossesReported: true, queueLength: 8 });
    const lost: Array<[string, () => Promise<void> | void]> = [
      ['overflow', () => session.inject('overflow')],
      ['watcher error', () => watcher.fail(new Error('boom'))],
      ['renewal', () => session.watchAgain('a test')],
      ['outside the root', () => watcher.emit([{ path: '/elsewhere/x', type: 'update' }])],
      ['a suspected overflow', () => watcher.emit([{ path: join(root, 'a'), type: 'create' }, { path: join(root, 'b'), type: 'create' }])],
    ];
    for (const [what, lose] of lost) {
      await session.watchAgain('settle');
      const mark = session.changes.mark();
      expect(mark, what).not.toBeNull();
      await lose();
      expect(session.changes.since(mark!), what).toBeNull();
    }
  });

  it('is never trusted with a watcher that does not report its losses (@parcel/watcher)', async () => {
    const { session } = await rig();
    expect(session.changes.mark()).toBeNull();
  });
});

describe('events', () => {
  it("marks the index out of date for a change under the root, but not for the observer's own files or the state dir, except its .gitignore", async () => {
    const { root, stateDir, cookieDir, watcher, index, session } = await rig();
    watcher.emit([{ path: join(root, 'src/a.ts'), type: 'update' }]);
    expect(index.touches).toEqual(['file-events']);
    watcher.emit([
      { path: join(cookieDir, 'id.log'), type: 'update' },
      { path: join(stateDir, 'state.db'), type: 'update' },
    ]);
    expect(index.touches).toEqual(['file-events']);
    watcher.emit([{ path: join(stateDir, '.gitignore'), type: 'create' }]);
    expect(index.touches).toEqual(['file-events', 'file-events']);
    expect(session.events).toBe(4);
    expect(index.raised).toEqual([]);
  });

  it('takes a burst as long as a quarter of the kernel queue for an overflow: one passing gap, and the watcher renewed', async () => {
    // A queue of 8 events makes 2 changes a suspected overflow.
    const { root, watcher, index, session, logs } = await rig({ queueLength: 8 });
    watcher.emit([
      { path: join(root, 'src/a.ts'), type: 'update' },
      { path: join(root, 'src/b.ts'), type: 'create' },
    ]);
    const why = "2 changes within 10 s, enough to have overflowed the kernel's event queue";
    expect(index.raised).toEqual([{ code: 'observer-overflow', message: `${why}; watching again and rescanning`, lasting: false }]);
    expect(session.overflows).toBe(1);
    await eventually(() => watcher.subscriptions === 2, 'the watcher renewed after the overflow');
    await eventually(() => index.touches.includes('rewatch'), 'a rescan after the renewal');
    expect(index.settled).toEqual(['observer-watcher-error', 'observer-watch-limit', 'observer-root-moved']);
    expect(logs).toContain(`watching again: ${why}`);
    // The same window, already flagged: its changes are not counted again.
    watcher.emit([{ path: join(root, 'src/c.ts'), type: 'create' }]);
    expect(session.overflows).toBe(1);
    expect(index.touches.at(-1)).toBe('file-events');
  });
});

describe('renewals', () => {
  it('raises a lasting gap for a watcher error until the watcher is subscribed again', async () => {
    const { watcher, index } = await rig();
    watcher.fail(new Error('boom'));
    expect(index.raised).toEqual([{ code: 'observer-watcher-error', message: 'the file watcher failed (boom); watching again', lasting: true }]);
    await eventually(() => index.settled.includes('observer-watcher-error'), 'the gap settled by a new subscription');
    expect(watcher.subscriptions).toBe(2);
    expect(watcher.unsubscriptions).toBe(1);
  });

  it('says how to raise the inotify limit when a renewal hits it, and retries until one succeeds', async () => {
    const { watcher, index, logs } = await rig();
    watcher.failures.push(Object.assign(new Error('inotify_add_watch: No space left on device'), { code: 'ENOSPC' }));
    watcher.fail(new Error('boom'));
    await eventually(() => index.raised.some((gap) => gap.code === 'observer-watch-limit'), 'the watch-limit gap');
    expect(index.raised.find((gap) => gap.code === 'observer-watch-limit')).toEqual({
      code: 'observer-watch-limit',
      message: 'the inotify watch limit is reached; raise it (sysctl fs.inotify.max_user_watches) or stop other watchers. Retrying',
      lasting: true,
    });
    expect(index.settled).toEqual([]);
    // The retry comes 2 s later.
    await eventually(() => watcher.subscriptions === 2, 'the retried subscription', 6_000);
    expect(index.settled).toContain('observer-watch-limit');
    expect(logs).toContain('watching again: retrying');
  });

  it('fails the next renewal on an injected watch limit, as the fault method asks', async () => {
    const { index, session } = await rig();
    session.inject('watch-limit');
    expect(index.raised[0]).toEqual({ code: 'observer-watcher-error', message: 'the file watcher failed (an injected watch limit); watching again', lasting: true });
    await eventually(() => index.raised.some((gap) => gap.code === 'observer-watch-limit'), 'the injected limit reached on renewal');
  });

  it('notices a moved root by its identity, and watches it again once it is back', async () => {
    const { root, watcher, index, logs } = await rig();
    const aside = `${root}-aside`;
    renameSync(root, aside);
    try {
      watcher.emit([{ path: join(root, 'src/a.ts'), type: 'delete' }]);
      expect(index.raised[0]).toEqual({ code: 'observer-root-moved', message: `the root ${root} was deleted or moved; waiting for it to come back`, lasting: true });
      await eventually(() => index.raised.length === 2, 'the failed renewal');
      expect(index.raised[1]).toEqual({ code: 'observer-root-moved', message: `the root ${root} is gone; waiting for it to come back`, lasting: true });
      expect(watcher.subscriptions).toBe(1);
    } finally {
      renameSync(aside, root);
    }
    await eventually(() => watcher.subscriptions === 2, 'the root watched again', 6_000);
    expect(index.settled).toContain('observer-root-moved');
    expect(logs).toContain('watching again: the root was deleted or moved');
  });

  it('gives up instead of retrying once the observer is orphaned (its record is gone)', async () => {
    const made = await rig({ orphaned: true });
    made.watcher.failures.push(new Error('no such directory'));
    made.watcher.fail(new Error('boom'));
    await eventually(() => made.orphanedCalls === 1, 'the orphaned observer told to stop');
    expect(made.logs).toContain('the state dir is gone; exiting');
    expect(made.index.raised.at(-1)).toEqual({ code: 'observer-watcher-error', message: 'the file watcher could not start (no such directory); retrying', lasting: true });
  });

  it('watches afresh when a directory arrives with directories inside, unless creations are blind', async () => {
    const { root, watcher, logs, session } = await rig();
    mkdirSync(join(root, 'copied/deep'), { recursive: true });
    watcher.emit([{ path: join(root, 'copied'), type: 'create' }]);
    await eventually(() => watcher.subscriptions === 2, 'a renewal for the copied tree');
    expect(logs).toContain(`watching again: ${join(root, 'copied')} arrived with directories inside`);
    // A plain file, or a directory with nothing below it, is covered by the watch it already has.
    mkdirSync(join(root, 'flat'));
    watcher.emit([
      { path: join(root, 'src/new.ts'), type: 'create' },
      { path: join(root, 'flat'), type: 'create' },
    ]);
    session.inject('blind-creates');
    mkdirSync(join(root, 'other/deep'), { recursive: true });
    watcher.emit([{ path: join(root, 'other'), type: 'create' }]);
    await delay(100);
    expect(watcher.subscriptions).toBe(2);
  });

  it('watches afresh when an update or a delete names a directory with directories inside: a directory deleted and made again arrives so', async () => {
    const { root, watcher, logs } = await rig();
    mkdirSync(join(root, 'src/lib/deep'), { recursive: true });
    watcher.emit([{ path: join(root, 'src'), type: 'update' }]);
    await eventually(() => watcher.subscriptions === 2, 'a renewal for the tree made again');
    expect(logs).toContain(`watching again: ${join(root, 'src')} arrived with directories inside`);
    watcher.emit([{ path: join(root, 'src/lib'), type: 'delete' }]);
    await eventually(() => watcher.subscriptions === 3, 'a renewal for a directory reported deleted that is there');
  });

  it('watches again while a renewal leaves directories made during its walk unwatched; after several in a row, is unhealthy and retries', async () => {
    const { watcher, index, session, logs } = await rig();
    watcher.unwatchedTrees = [['src/deep']];
    await session.watchAgain('a test');
    expect(watcher.subscriptions).toBe(3);
    expect(logs).toContain('1 directory made while watching again is not watched (src/deep)');
    // Only the renewal that found every directory watched asks for the scan.
    expect(index.touches).toEqual(['rewatch']);
    watcher.unwatchedTrees = [['a', 'b'], ['a'], ['a'], ['a']];
    await session.watchAgain('another test');
    expect(watcher.subscriptions).toBe(7);
    expect(index.raised).toEqual([
      { code: 'observer-watcher-error', message: '1 directory made while watching again is not watched (a), after 4 renewals in a row; retrying', lasting: true },
    ]);
    expect(index.touches).toEqual(['rewatch']);
    const settled = index.settled.length;
    await eventually(() => index.settled.length > settled, 'the retry, 2 s later', 6_000);
    expect(index.settled.slice(settled)).toContain('observer-watcher-error');
    expect(watcher.subscriptions).toBe(8);
    expect(index.touches).toEqual(['rewatch', 'rewatch']);
  });

  it('walks again at once, unhealthy for no moment, when a directory went away during a renewal walk; a few times in a row at most', async () => {
    const { watcher, index, session, logs } = await rig();
    const gone = () => Object.assign(new Error("inotify_add_watch on '/r/src/dir11' failed: No such file or directory"), { code: 'ENOENT' });
    watcher.failures.push(gone());
    await session.watchAgain('a test');
    expect(watcher.subscriptions).toBe(2);
    expect(index.raised).toEqual([]);
    expect(index.touches).toEqual(['rewatch']);
    expect(logs).toContain("watching again at once: a directory went away during the walk (inotify_add_watch on '/r/src/dir11' failed: No such file or directory)");
    watcher.failures.push(gone(), gone(), gone(), gone());
    await session.watchAgain('another test');
    expect(index.raised.map((gap) => gap.code)).toEqual(['observer-watcher-error']);
  });

  it('stops renewing once stopped: a late error raises nothing, and the subscription ends', async () => {
    const { watcher, index, session } = await rig();
    session.stop();
    session.inject('watcher-error');
    await session.close();
    await delay(50);
    expect(index.raised).toEqual([]);
    expect(watcher.subscriptions).toBe(1);
    expect(watcher.subscribed).toBe(false);
  });
});

describe('stopping during a renewal', () => {
  it('ends a subscription that a renewal made after the session was stopped and closed', async () => {
    const { watcher, index, session } = await rig();
    const release = watcher.holdNextSubscribe();
    session.inject('watcher-error');
    await eventually(() => watcher.unsubscriptions === 1, 'the renewal to end the first subscription');
    session.stop();
    await session.close();
    release();
    await eventually(() => watcher.subscriptions === 2, 'the held subscribe to finish');
    await delay(20);
    expect(watcher.subscribed).toBe(false);
    expect(watcher.unsubscriptions).toBe(2);
    // The renewal that finished after the stop settles nothing, and raises nothing more.
    expect(index.settled).toEqual([]);
    expect(index.raised.map((gap) => gap.code)).toEqual(['observer-watcher-error']);
  });

  it('schedules no retry for a renewal that fails after the session was stopped', async () => {
    const { watcher, index, session, logs } = await rig();
    const release = watcher.holdNextSubscribe();
    watcher.failures.push(new Error('the watcher could not start'));
    session.inject('watcher-error');
    await eventually(() => watcher.unsubscriptions === 1, 'the renewal to end the first subscription');
    session.stop();
    release();
    await delay(2_300);
    expect(index.raised.map((gap) => gap.code)).toEqual(['observer-watcher-error']);
    expect(logs.filter((line) => line.startsWith('watching again'))).toHaveLength(1);
  });
});

describe('coverage', () => {
  it('asks the watcher once per scan, and not again while the directories are those last found covered', async () => {
    const { watcher, session, logs } = await rig();
    watcher.unwatched = ['src'];
    const first = snapshot(['', 'src']);
    expect(session.uncovered(first)).toEqual(['src']);
    expect(session.uncovered(first)).toEqual(['src']);
    expect(watcher.coverageChecks).toEqual([['', 'src']]);
    expect(logs).toContain('unwatched directories holding inputs: src');
    watcher.unwatched = [];
    expect(session.uncovered(snapshot(['', 'src']))).toEqual([]);
    expect(session.uncovered(snapshot(['src', '']))).toEqual([]);
    expect(watcher.coverageChecks).toHaveLength(2);
    expect(session.uncovered(snapshot(['', 'src', 'lib']))).toEqual([]);
    expect(watcher.coverageChecks).toHaveLength(3);
  });

  it('checks coverage again once enough events arrived for one to have been lost', async () => {
    // A queue of 64 events: 16 make an overflow, and 4 since the last check make it worth checking again.
    const { root, watcher, session } = await rig({ queueLength: 64 });
    expect(session.uncovered(snapshot(['src']))).toEqual([]);
    watcher.emit([1, 2, 3].map((n) => ({ path: join(root, `src/${n}.ts`), type: 'create' as const })));
    expect(session.uncovered(snapshot(['src']))).toEqual([]);
    expect(watcher.coverageChecks).toHaveLength(1);
    watcher.emit([{ path: join(root, 'src/4.ts'), type: 'create' }]);
    expect(session.uncovered(snapshot(['src']))).toEqual([]);
    expect(watcher.coverageChecks).toHaveLength(2);
  });

  it('checks coverage again once an event named a directory last found covered, or one above it, whatever its type', async () => {
    // A tree replaced in place keeps its paths (and on ext4 often its inode numbers), not its watches.
    const { root, watcher, session } = await rig();
    const dirs = ['', 'src', 'src/dir33/deep'];
    expect(session.uncovered(snapshot(dirs))).toEqual([]);
    // Files, and a directory beside the covered ones, leave them as they were.
    watcher.emit([
      { path: join(root, 'src/dir33/deep/e.js'), type: 'create' },
      { path: join(root, 'src/a.js'), type: 'delete' },
      { path: join(root, 'docs'), type: 'create' },
    ]);
    expect(session.uncovered(snapshot(dirs))).toEqual([]);
    expect(watcher.coverageChecks).toHaveLength(1);
    for (const [path, type] of [['src/dir33/deep', 'update'], ['src/dir33', 'delete'], ['src', 'update']] as const) {
      watcher.emit([{ path: join(root, path), type }]);
      expect(session.uncovered(snapshot(dirs))).toEqual([]);
      expect(session.uncovered(snapshot(dirs))).toEqual([]);
    }
    expect(watcher.coverageChecks).toHaveLength(4);
  });

  it('checks coverage again after a renewal, and for a scan after a window of the kernel queue that was not calm', async () => {
    const { watcher, session } = await rig();
    expect(session.uncovered(snapshot(['src']))).toEqual([]);
    await session.watchAgain('a test');
    expect(session.uncovered(snapshot(['src']))).toEqual([]);
    expect(watcher.coverageChecks).toHaveLength(2);
    expect(session.uncovered(snapshot(['src'], false))).toEqual([]);
    expect(watcher.coverageChecks).toHaveLength(3);
    // Without a queue watch, the count of events stands alone, as before.
    expect(session.uncovered(snapshot(['src'], null))).toEqual([]);
    expect(watcher.coverageChecks).toHaveLength(3);
  });

  it('after a scan, checks coverage in the background and learns which paths git ignores', async () => {
    const { root, watcher, index, session } = await rig({ files: { 'src/a.ts': 'export const a = 1;\n', '.gitignore': 'dist/\n', 'dist/out.js': '1;\n' } });
    session.scanned(snapshot(['src']));
    await eventually(() => watcher.coverageChecks.length === 1, 'the coverage check after the scan');
    // dist/ is ignored and holds no input: its changes cannot change an answer.
    watcher.emit([{ path: join(root, 'dist/out.js'), type: 'update' }]);
    expect(index.touches).toEqual([]);
    // A changed .gitignore may un-ignore it: every path is loud until the next scan.
    watcher.emit([{ path: join(root, '.gitignore'), type: 'update' }]);
    watcher.emit([{ path: join(root, 'dist/out.js'), type: 'update' }]);
    expect(index.touches).toEqual(['file-events', 'file-events']);
  });
});

describe('synchronize', () => {
  it("in sync mode, waits for the barrier cookie's event; in cached mode, writes none", async () => {
    const { cookieDir, watcher, index, session } = await rig();
    const cookies = () => readdirSync(cookieDir).filter((name) => name.startsWith('id.cookie-'));
    let settled = false;
    const syncing = session.synchronize('sync').then(() => (settled = true));
    await eventually(() => cookies().length === 1, 'the cookie written');
    await delay(50);
    expect(settled).toBe(false);
    const cookie = join(cookieDir, cookies()[0]!);
    watcher.emit([{ path: cookie, type: 'create' }]);
    await syncing;
    expect(existsSync(cookie)).toBe(false);
    expect(index.raised).toEqual([]);
    expect(index.touches).toEqual([]);
    await session.synchronize('cached');
    expect(cookies()).toEqual([]);
  });

  it('takes a lost cookie event for lost events: a passing gap, and the watcher renewed before the answer', async () => {
    const { watcher, index, session } = await rig();
    await session.synchronize('sync');
    expect(index.raised).toEqual([{ code: 'observer-barrier-timeout', message: 'a barrier event did not arrive within 2000 ms', lasting: false }]);
    // The answer waited for the renewal.
    expect(watcher.subscriptions).toBe(2);
    expect(index.touches).toEqual(['rewatch']);
  });
});
