import { describe, expect, it } from 'vitest';
import { mulberry32, parseSeed, testSeed, withSeed } from '../helpers/seed.js';

describe('the seed of a randomized test', () => {
  it('is the fixed one without VOUCH_SEED, CI included', () => {
    expect(testSeed(import.meta.url, 17, {})).toMatchObject({ value: 17, source: 'fixed' });
    expect(testSeed(import.meta.url, 17, { CI: 'true', VOUCH_SEED: '' })).toMatchObject({ value: 17, source: 'fixed' });
  });

  it('is VOUCH_SEED when it is set', () => {
    expect(testSeed(import.meta.url, 17, { VOUCH_SEED: '4242' })).toMatchObject({ value: 4242, source: 'VOUCH_SEED' });
    expect(testSeed(import.meta.url, 17, { VOUCH_SEED: '0' }).value).toBe(0);
  });

  it.each(['-1', '1.5', 'abc', '4294967296', '0x'])('refuses VOUCH_SEED=%s, naming it', (text) => {
    expect(() => parseSeed(text)).toThrow(`VOUCH_SEED=${text} is not a seed`);
  });

  it('says how to replay it, with the test file from the repository root', () => {
    const seed = testSeed(import.meta.url, 17, {});
    expect(seed.replay()).toBe('seed 17 (replay: VOUCH_SEED=17 npx vitest run test/unit/seed.test.ts)');
    expect(seed.replay(23)).toBe('seed 23 (replay: VOUCH_SEED=23 npx vitest run test/unit/seed.test.ts)');
  });

  it('puts the replay line in front of a failure inside withSeed, once', async () => {
    const seed = testSeed(import.meta.url, 17, {});
    const failure = withSeed(seed, () => {
      expect(1, 'one').toBe(2);
    });
    await expect(failure).rejects.toThrow(/^seed 17 \(replay: VOUCH_SEED=17 npx vitest run test\/unit\/seed\.test\.ts\): one: expected 1 to be 2/);
    const nested = withSeed(seed, () => withSeed(seed, () => Promise.reject(new Error('inner'))));
    await expect(nested).rejects.toThrow(/^seed 17 \(replay[^)]*\): inner$/);
    await expect(withSeed(seed, () => 'value')).resolves.toBe('value');
  });

  it('draws the same numbers in [0, 1) for the same seed, and others for another', () => {
    const a = mulberry32(1);
    const b = mulberry32(1);
    const c = mulberry32(2);
    const first = Array.from({ length: 50 }, () => a());
    expect(Array.from({ length: 50 }, () => b())).toEqual(first);
    expect(Array.from({ length: 50 }, () => c())).not.toEqual(first);
    for (const n of first) expect(n >= 0 && n < 1).toBe(true);
  });
});
