import { describe, expect, it } from 'vitest';
import { daemonEnv } from '../../src/observer/launch.js';

describe("the observer's environment", () => {
  it('fixes glibc malloc mmap threshold, alongside tunables already set', () => {
    expect(daemonEnv({ PATH: '/bin' })).toEqual({ PATH: '/bin', GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=131072' });
    expect(daemonEnv({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }).GLIBC_TUNABLES).toBe('glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=131072');
  });

  it("leaves a threshold the user set alone, and the caller's environment unchanged", () => {
    const own = { GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=4096' };
    expect(daemonEnv(own)).toEqual(own);
    expect(daemonEnv({ MALLOC_MMAP_THRESHOLD_: '65536' })).toEqual({ MALLOC_MMAP_THRESHOLD_: '65536' });
    const env = { PATH: '/bin' };
    daemonEnv(env);
    expect(env).toEqual({ PATH: '/bin' });
  });
});
