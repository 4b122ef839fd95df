import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Barrier } from '../../src/observer/barrier.js';
import { ObserverService } from '../../src/observer/observerService.js';
import type { ObservedInputs } from '../../src/observer/protocol.js';
import { InvalidParams } from '../../src/observer/rpcServer.js';
import { WarmIndex } from '../../src/observer/warmIndex.js';
import { WatchSession } from '../../src/observer/watchSession.js';
import { openStore, type Store } from '../../src/store/openStore.js';
import { loadStatCache } from '../../src/store/statCacheTable.js';
import { eventually, FakeWatcher } from '../helpers/fakeWatcher.js';
import { tempProject, type TempProject } from '../helpers/project.js';

/*
 * The observer's answers, in process: a real warm index over a real
 * checkout, a real store, and a watch session fed by a fake watcher. No
 * socket and no daemon: those are the lifecycle's, tested on their own.
 */

const CHECK: ObservedInputs = { name: 'check', inputs: ['src/**'], installed: [] };
const KEY = 'k'.repeat(64);

interface Rig {
  project: TempProject;
  watcher: FakeWatcher;
  index: WarmIndex;
  session: WatchSession;
  service: ObserverService;
  store: Store;
  logs: string[];
}

const rigs: Rig[] = [];
afterEach(async () => {
  for (const rig of rigs.splice(0)) {
    rig.session.stop();
    rig.index.dispose();
    await rig.session.close();
    rig.store.close();
    rig.project.remove();
  }
});

async function rig(): Promise<Rig> {
  const project = tempProject('observer-service', { 'src/a.ts': 'export const a = 1;\n', '.gitignore': '.vouch/\n' });
  const root = project.root;
  const stateDir = join(root, '.vouch');
  const store = openStore(stateDir, { readWhenFull: false });
  const watcher = new FakeWatcher();
  const logs: string[] = [];
  const log = (message: string) => logs.push(message);
  const statCache = loadStatCache(store.db);
  const index: WarmIndex = new WarmIndex(root, [], statCache, (error) => log(error.message), { onSnapshot: (snapshot) => session.scanned(snapshot) });
  const session = new WatchSession({
    root,
    stateDir,
    ownFiles: [],
    barrier: new Barrier(null),
    index,
    watcher,
    log,
    orphaned: () => false,
    onOrphaned: () => undefined,
  });
  const service = new ObserverService({ root, version: '9.9.9', build: 'b1', socket: '/nowhere.sock', started: Date.now(), readyMs: () => 42, envKey: KEY, index, session, store, statCache, log });
  const made = { project, watcher, index, session, service, store, logs };
  rigs.push(made);
  index.track([CHECK]);
  await session.start();
  await index.current([CHECK], Date.now() + 30_000);
  return made;
}

describe('observe', () => {
  it('answers from the warm index, rescanned after the events the watcher delivered', async () => {
    const { project, watcher, service } = await rig();
    const first = await service.observe({ checks: [CHECK], mode: 'cached', entries: true });
    expect(first).toMatchObject({ healthy: true, reasons: [], envKey: KEY });
    expect(first.checks).toHaveLength(1);
    expect(first.checks[0]).toMatchObject({ name: 'check', inputCount: 1, receipt: null });
    expect(first.checks[0]!.entries?.map((entry) => entry.path)).toEqual(['src/a.ts']);
    project.write('src/b.ts', 'export const b = 2;\n');
    watcher.emit([{ path: join(project.root, 'src/b.ts'), type: 'create' }]);
    const second = await service.observe({ checks: [CHECK], mode: 'cached' });
    expect(second.healthy).toBe(true);
    expect(second.checks[0]).toMatchObject({ name: 'check', inputCount: 2 });
    expect(second.checks[0]!.manifestDigest).not.toBe(first.checks[0]!.manifestDigest);
    expect(second.checks[0]).not.toHaveProperty('entries');
  });

  it('refuses a malformed question as invalid params', async () => {
    const { service } = await rig();
    const expected = 'expected {"checks": [{"name", "inputs", "installed"}], "mode": "sync" | "cached"}';
    await expect(service.observe({ checks: [CHECK], mode: 'later' } as never)).rejects.toThrow(new InvalidParams(expected));
    await expect(service.observe({ checks: [{ name: 1 }], mode: 'sync' } as never)).rejects.toThrow(
      new InvalidParams('each check needs "name" (string), "inputs" and "installed" (arrays of globs)'),
    );
  });

  it('answers unhealthy, naming the gap, while the watcher cannot be subscribed again', async () => {
    const { watcher, service } = await rig();
    watcher.failures.push(new Error('watcher gone'), new Error('watcher gone'), new Error('watcher gone'));
    watcher.fail(new Error('boom'));
    const answer = await service.observe({ checks: [CHECK], mode: 'cached' });
    expect(answer).toMatchObject({
      healthy: false,
      reasons: [{ code: 'observer-watcher-error', message: 'the file watcher could not start (watcher gone); retrying' }],
      envKey: KEY,
      checks: [],
    });
  });

  it('waits out a passing gap (an overflow) rather than answer unhealthy', async () => {
    const { index, service } = await rig();
    index.raise({ code: 'observer-overflow', message: 'events may have been lost' }, false);
    const answer = await service.observe({ checks: [CHECK], mode: 'cached' });
    expect(answer.healthy).toBe(true);
    expect(answer.checks[0]).toMatchObject({ inputCount: 1 });
    expect(index.lastRescan?.reason).toBe('observer-overflow');
  });

  it('watches again when a directory holding inputs is not covered, and answers unhealthy if it still is not', async () => {
    const { watcher, service } = await rig();
    watcher.unwatched = ['src'];
    const answer = await service.observe({ checks: [CHECK], mode: 'cached' });
    expect(answer).toMatchObject({
      healthy: false,
      reasons: [{ code: 'observer-watcher-error', message: '1 directory holding inputs is not watched (src), even after watching again' }],
      checks: [],
    });
    expect(watcher.subscriptions).toBe(2);
    watcher.unwatched = [];
    await expect(service.observe({ checks: [CHECK], mode: 'cached' })).resolves.toMatchObject({ healthy: true });
  });
});

describe('info, ping and fault', () => {
  it("reports the index's and the session's figures", async () => {
    const { project, watcher, service } = await rig();
    watcher.emit([{ path: join(project.root, 'src/a.ts'), type: 'update' }]);
    const info = await service.info();
    expect(info).toMatchObject({
      protocol: 1,
      version: '9.9.9',
      build: 'b1',
      pid: process.pid,
      ready: true,
      healthy: true,
      reasons: [],
      watchedPaths: 3,
      indexFiles: 1,
      events: 1,
      overflows: 0,
      readyMs: 42,
      socket: '/nowhere.sock',
      root: project.root,
    });
    expect(info.rescans).toBeGreaterThanOrEqual(1);
    expect(info.lastRescan?.reason).toBe('first-index');
    expect(await service.ping()).toEqual({ protocol: 1, version: '9.9.9', build: 'b1', pid: process.pid, ready: true });
  });

  it('injects only the faults it knows', async () => {
    const { watcher, service } = await rig();
    await expect(service.fault({ kind: 'meltdown' })).rejects.toThrow(new InvalidParams('kind must be overflow, watcher-error, watch-limit or blind-creates'));
    await expect(service.fault({})).rejects.toBeInstanceOf(InvalidParams);
    await expect(service.fault({ kind: 'overflow' })).resolves.toEqual({ injected: 'overflow' });
    expect((await service.info()).overflows).toBe(1);
    await eventually(() => watcher.subscriptions === 2, 'the watcher renewed after the overflow');
    await expect(service.fault({ kind: 'watcher-error' })).resolves.toEqual({ injected: 'watcher-error' });
    expect((await service.info()).reasons).toContainEqual({ code: 'observer-watcher-error', message: 'the file watcher failed (an injected watcher error); watching again' });
    await eventually(() => watcher.subscriptions === 3, 'the watcher renewed after each');
  });
});
