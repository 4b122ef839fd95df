import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { nativeWatcherAvailable, watchTreeNatively } from '../../src/observer/nativeTreeWatcher.js';
import { unwatchedDirectories, watchCount, type WatchEvent, type WatchSubscription } from '../../src/observer/treeWatcher.js';
import { REPO } from '../helpers/project.js';

/*
 * native/treeWatch.c against the kernel: every directory watched, a new tree watched as it
 * arrives (and its entries announced, since they raised no event of their own), a directory moved
 * within the tree reported under its new path, one moved out no longer watched, and a name that is
 * not UTF-8 standing in for by its directory.
 */

const available = nativeWatcherAvailable({});
const roots: string[] = [];
const subscriptions: WatchSubscription[] = [];
afterEach(async () => {
  for (const subscription of subscriptions.splice(0)) await subscription.unsubscribe();
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function tempRoot(): string {
  mkdirSync(join(REPO, '.tmp'), { recursive: true });
  const root = mkdtempSync(join(REPO, '.tmp', 'native-watch-'));
  roots.push(root);
  return root;
}

/** A subscription whose events are collected; `until` waits for one that matches. */
async function watched(root: string) {
  const events: WatchEvent[] = [];
  const errors: Error[] = [];
  const overflows: string[] = [];
  const subscription = await watchTreeNatively(root, { onEvents: (batch) => events.push(...batch), onError: (error) => errors.push(error), onOverflow: (why) => overflows.push(why) });
  subscriptions.push(subscription);
  const until = async (match: (event: WatchEvent) => boolean, what: string): Promise<void> => {
    for (let waited = 0; waited < 5000; waited += 5) {
      if (events.some(match)) return;
      await delay(5);
    }
    throw new Error(`no event for ${what}; got ${JSON.stringify(events)}`);
  };
  return { events, errors, overflows, subscription, until };
}

describe.skipIf(!available)('the native tree watcher', () => {
  it('reports creates, updates and deletes of files anywhere in the tree, in order', async () => {
    const root = tempRoot();
    mkdirSync(join(root, 'src/deep'), { recursive: true });
    const w = await watched(root);
    expect(unwatchedDirectories(root, ['', 'src', 'src/deep'])).toEqual([]);
    writeFileSync(join(root, 'src/deep/a.ts'), '1');
    writeFileSync(join(root, 'src/deep/a.ts'), '2');
    rmSync(join(root, 'src/deep/a.ts'));
    writeFileSync(join(root, 'cookie'), '');
    await w.until((event) => event.path === join(root, 'cookie'), 'the cookie');
    const file = w.events.filter((event) => event.path === join(root, 'src/deep/a.ts')).map((event) => event.type);
    expect(file[0]).toBe('create');
    expect(file).toContain('update');
    expect(file.at(-1)).toBe('delete');
    // The cookie came after everything written before it.
    expect(w.events.findIndex((event) => event.path === join(root, 'cookie'))).toBeGreaterThan(w.events.findLastIndex((event) => event.path === join(root, 'src/deep/a.ts')));
    expect(w.errors).toEqual([]);
  });

  it('watches a tree made inside it at once, and announces what was made before its watches', async () => {
    const root = tempRoot();
    const w = await watched(root);
    mkdirSync(join(root, 'made/a/b'), { recursive: true });
    writeFileSync(join(root, 'made/a/b/m.ts'), '');
    await w.until((event) => event.path === join(root, 'made/a/b/m.ts'), 'the file made in the new tree');
    expect(unwatchedDirectories(root, ['', 'made', 'made/a', 'made/a/b'])).toEqual([]);
    writeFileSync(join(root, 'made/a/b/later.ts'), '');
    await w.until((event) => event.path === join(root, 'made/a/b/later.ts'), 'a file made after');
  });

  it('watches a tree moved in whole, and announces its entries', async () => {
    const root = tempRoot();
    const outside = tempRoot();
    mkdirSync(join(outside, 'made/a/b'), { recursive: true });
    writeFileSync(join(outside, 'made/a/b/m.ts'), '');
    const w = await watched(root);
    renameSync(join(outside, 'made'), join(root, 'made'));
    await w.until((event) => event.path === join(root, 'made/a/b/m.ts') && event.type === 'create', 'an entry of the tree moved in');
    expect(unwatchedDirectories(root, ['made', 'made/a', 'made/a/b'])).toEqual([]);
  });

  it('reports a directory moved within the tree under its new path, and nothing from one moved out', async () => {
    const root = tempRoot();
    const outside = tempRoot();
    mkdirSync(join(root, 'src/lib/deep'), { recursive: true });
    mkdirSync(join(root, 'leaving/inner'), { recursive: true });
    const w = await watched(root);
    const count = watchCount();
    renameSync(join(root, 'src/lib'), join(root, 'src/moved'));
    renameSync(join(root, 'leaving'), join(outside, 'left'));
    writeFileSync(join(root, 'sync1'), '');
    await w.until((event) => event.path === join(root, 'sync1'), 'the first cookie');
    writeFileSync(join(root, 'src/moved/deep/x.ts'), '');
    writeFileSync(join(outside, 'left/inner/y.ts'), '');
    writeFileSync(join(root, 'sync2'), '');
    await w.until((event) => event.path === join(root, 'sync2'), 'the second cookie');
    expect(w.events.some((event) => event.path === join(root, 'src/moved/deep/x.ts') && event.type === 'create')).toBe(true);
    expect(w.events.some((event) => event.path.includes('/src/lib/'))).toBe(false);
    expect(w.events.some((event) => event.path.endsWith('/y.ts'))).toBe(false);
    expect(watchCount()).toBe(count - 2);
    expect(unwatchedDirectories(root, ['src', 'src/moved', 'src/moved/deep'])).toEqual([]);
  });

  it('reports a change to a name that is not UTF-8 as a change to its directory', async () => {
    const root = tempRoot();
    mkdirSync(join(root, 'src'));
    const w = await watched(root);
    writeFileSync(Buffer.from(`${join(root, 'src')}/\xff.ts`, 'latin1'), '');
    await w.until((event) => event.path === join(root, 'src') && event.type === 'update', 'its directory');
    expect(w.events.every((event) => !event.path.includes('\ufffd'))).toBe(true);
  });

  it('watches nothing once unsubscribed, and says nothing more', async () => {
    const root = tempRoot();
    mkdirSync(join(root, 'a/b'), { recursive: true });
    const before = watchCount();
    const w = await watched(root);
    expect(watchCount()).toBe(before + 3);
    await w.subscription.unsubscribe();
    expect(watchCount()).toBe(before);
    const seen = w.events.length;
    writeFileSync(join(root, 'a/b/after.ts'), '');
    await delay(50);
    expect(w.events.length).toBe(seen);
  });

  it('fails to start on a root that is not there', async () => {
    await expect(watchTreeNatively(join(tempRoot(), 'missing'), { onEvents: () => undefined, onError: () => undefined })).rejects.toThrow();
  });
});

describe.skipIf(!available)('the native tree watcher, when the kernel drops events', () => {
  it('says so: a stopped process whose queue overflowed is told once it runs again (IN_Q_OVERFLOW)', async () => {
    const root = tempRoot();
    // The watcher in a process of its own, so that process can be stopped while the queue fills.
    const script = join(root, '..', `${root.split('/').pop()}-watch.cjs`);
    writeFileSync(
      script,
      `const addon = require(${JSON.stringify(join(REPO, 'build/Release/vouch_scan.node'))});\n` +
        `addon.treeWatch(${JSON.stringify(root)}, (kind, events, message) => { if (kind !== 'events') console.log(kind + ' ' + (message ?? '')); });\n`,
    );
    roots.push(script);
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [script], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    try {
      for (let waited = 0; !output.includes('ready'); waited += 10) {
        if (waited > 10_000) throw new Error(`the watcher did not start: ${output}`);
        await delay(10);
      }
      child.kill('SIGSTOP');
      // More events than the kernel queues (max_queued_events, 16,384 by default), twice over: a
      // SIGSTOP takes effect when the process next runs, and on a busy machine its watcher thread
      // may read a first batch of these events before it stops.
      const queued = Number((await import('node:fs')).readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'));
      for (let i = 0; i <= 2 * queued; i++) writeFileSync(join(root, `f${i % 64}`), String(i));
      child.kill('SIGCONT');
      for (let waited = 0; !output.includes('overflow'); waited += 10) {
        if (waited > 10_000) throw new Error(`no overflow reported: ${output}`);
        await delay(10);
      }
      expect(output).not.toContain('error');
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe.skipIf(!available)('the native tree watcher, on a root reached through a link', () => {
  it('follows the root itself, reports paths under the root as named, and follows no link below it', async () => {
    const real = tempRoot();
    mkdirSync(join(real, 'src'));
    const outside = tempRoot();
    const { symlinkSync } = await import('node:fs');
    symlinkSync(outside, join(real, 'linked'));
    const root = `${real}-link`;
    symlinkSync(real, root);
    roots.push(root);
    const w = await watched(root);
    writeFileSync(join(outside, 'through-the-link.ts'), '');
    writeFileSync(join(real, 'src/a.ts'), '');
    await w.until((event) => event.path === join(root, 'src/a.ts'), 'a file under the linked root');
    expect(w.events.some((event) => event.path.includes('through-the-link'))).toBe(false);
  });
});
