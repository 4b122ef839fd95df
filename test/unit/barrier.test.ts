import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { Barrier } from '../../src/observer/barrier.js';

// The watcher is played by the test: it calls seen(path) as the daemon does when a cookie's event arrives.
const scratch = mkdtempSync(join(tmpdir(), 'vouch-barrier-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
afterEach(() => {
  vi.useRealTimers();
});

let dirs = 0;
function cookieDir(): { dir: string; prefix: string } {
  const dir = join(scratch, `d${++dirs}`);
  mkdirSync(dir);
  return { dir, prefix: join(dir, '.vouch-cookie-') };
}
const cookie = (prefix: string, count: number) => `${prefix}${process.pid}-${count}`;

describe('a barrier without a cookie directory', () => {
  const barrier = new Barrier(null);

  it('is unavailable, knows no cookie, and never syncs', async () => {
    expect(barrier.available).toBe(false);
    expect(barrier.isCookie('/anything')).toBe(false);
    await expect(barrier.sync(1_000)).resolves.toBe(false);
    expect(() => barrier.sweep()).not.toThrow();
  });
});

describe('a barrier with a cookie prefix', () => {
  it('knows its cookies by prefix only', () => {
    const barrier = new Barrier('/w/.vouch-cookie-');
    expect(barrier.available).toBe(true);
    expect(barrier.isCookie('/w/.vouch-cookie-12-1')).toBe(true);
    expect(barrier.isCookie('/w/.vouch-cookie')).toBe(false);
    expect(barrier.isCookie('/w/src/a.ts')).toBe(false);
  });

  it('resolves true once the cookie event is seen, and only then removes the cookie', async () => {
    const { dir, prefix } = cookieDir();
    const barrier = new Barrier(prefix);
    const synced = barrier.sync(60_000);
    // The cookie is on disk while its event is awaited.
    expect(existsSync(cookie(prefix, 1))).toBe(true);
    barrier.seen(join(dir, 'src', 'unrelated.ts'));
    barrier.seen(cookie(prefix, 1));
    await expect(synced).resolves.toBe(true);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('uses a new cookie for every question, so an old event cannot answer a new one', async () => {
    const { prefix } = cookieDir();
    const barrier = new Barrier(prefix);
    const first = barrier.sync(60_000);
    barrier.seen(cookie(prefix, 1));
    await first;
    const second = barrier.sync(60_000);
    barrier.seen(cookie(prefix, 1));
    expect(existsSync(cookie(prefix, 2))).toBe(true);
    barrier.seen(cookie(prefix, 2));
    await expect(second).resolves.toBe(true);
  });

  it('resolves false when the event never comes, and removes the cookie', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { dir, prefix } = cookieDir();
    const barrier = new Barrier(prefix);
    const synced = barrier.sync(500);
    await vi.advanceTimersByTimeAsync(500);
    await expect(synced).resolves.toBe(false);
    expect(readdirSync(dir)).toEqual([]);
    // A late event for it is ignored.
    expect(() => barrier.seen(cookie(prefix, 1))).not.toThrow();
  });

  it('refuses at once, writing nothing through it, when a link is planted at the cookie path', async () => {
    const { prefix } = cookieDir();
    const target = join(scratch, `target-${dirs}`);
    symlinkSync(target, cookie(prefix, 1));
    const barrier = new Barrier(prefix);
    await expect(barrier.sync(60_000)).resolves.toBe(false);
    expect(existsSync(target)).toBe(false);
  });

  it('resolves false when the cookie directory is gone', async () => {
    const barrier = new Barrier(join(scratch, 'missing', '.vouch-cookie-'));
    await expect(barrier.sync(60_000)).resolves.toBe(false);
  });

  it('sweeps the cookies a killed observer left: files and links, never a link target or a directory', () => {
    const { dir, prefix } = cookieDir();
    const target = join(scratch, `kept-${dirs}`);
    writeFileSync(target, 'keep');
    writeFileSync(`${prefix}1-1`, '');
    writeFileSync(`${prefix}2-7`, '');
    symlinkSync(target, `${prefix}3-1`);
    mkdirSync(`${prefix}dir`);
    writeFileSync(join(dir, 'other'), '');
    new Barrier(prefix).sweep();
    expect(readdirSync(dir).sort()).toEqual(['.vouch-cookie-dir', 'other']);
    expect(lstatSync(target).isFile()).toBe(true);
  });
});
