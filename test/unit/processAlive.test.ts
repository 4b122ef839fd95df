import { describe, expect, it } from 'vitest';
import { aliveByStat } from '../../src/fs/processStart.js';

/*
 * What processAlive decides once kill(pid, 0) found the pid, from the process's /proc stat fields
 * (state first, start time at index 19). A process that ends between the kill and the read leaves
 * no stat to read: where /proc exists it is gone, or a dead observer's record and socket would be
 * taken for a live one's.
 */

const fields = (state: string, start: string) => [state, ...Array.from({ length: 18 }, () => '0'), start];

describe('aliveByStat', () => {
  it('a pid with no stat to read is gone where /proc exists, and taken as alive only without /proc', () => {
    expect(aliveByStat(null, '123', () => true)).toBe(false);
    expect(aliveByStat(null, null, () => true)).toBe(false);
    expect(aliveByStat(null, '123', () => false)).toBe(true);
  });

  it('a zombie or a dead process is not alive; a reused pid is not the one recorded', () => {
    expect(aliveByStat(fields('Z', '123'), '123', () => true)).toBe(false);
    expect(aliveByStat(fields('X', '123'), '123', () => true)).toBe(false);
    expect(aliveByStat(fields('S', '999'), '123', () => true)).toBe(false);
    expect(aliveByStat(fields('S', '123'), '123', () => true)).toBe(true);
    expect(aliveByStat(fields('R', '999'), null, () => true)).toBe(true);
  });
});
