import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { replayOutput } from '../../src/core/replay.js';
import { readStoredLog, WHOLE_LOG_BYTES, WINDOW_BYTES } from '../../src/store/storedLog.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vouch-stored-log-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'logs'), { mode: 0o700 });
  return dir;
}

describe('readStoredLog', () => {
  it('reads a log whole', () => {
    const dir = stateDir();
    writeFileSync(join(dir, 'logs', 'R.log'), 'a\nb\n');
    for (const from of ['start', 'end', 'whole'] as const) expect(readStoredLog(dir, 'logs/R.log', from)).toEqual({ bytes: Buffer.from('a\nb\n'), offset: 0, size: 4 });
  });

  it('reads 1 MiB at the end shown, or up to 16 MiB whole for grep', () => {
    const dir = stateDir();
    writeFileSync(join(dir, 'logs', 'R.log'), 'x'.repeat(WINDOW_BYTES * 2));
    expect(readStoredLog(dir, 'logs/R.log', 'end')).toMatchObject({ offset: WINDOW_BYTES, size: WINDOW_BYTES * 2 });
    expect(readStoredLog(dir, 'logs/R.log', 'start')!.bytes.length).toBe(WINDOW_BYTES);
    expect(readStoredLog(dir, 'logs/R.log', 'whole')).toMatchObject({ offset: 0, size: WINDOW_BYTES * 2 });
  });

  it('reads a log larger than 16 MiB only at the end shown, and tail still gets its last lines', () => {
    const dir = stateDir();
    const line = `${'x'.repeat(99)}\n`;
    const count = Math.ceil(WHOLE_LOG_BYTES / line.length) + 10;
    writeFileSync(join(dir, 'logs', 'R.log'), line.repeat(count - 1) + 'the end\n');
    const end = readStoredLog(dir, 'logs/R.log', 'whole')!;
    expect(end.offset).toBeGreaterThan(0);
    expect(end.offset + end.bytes.length).toBe(end.size);
    expect(replayOutput(end, { kind: 'tail', lines: 2 }, true).text).toBe(`${line}the end\n`);
    const start = readStoredLog(dir, 'logs/R.log', 'start')!;
    expect(start.offset).toBe(0);
    expect(replayOutput(start, { kind: 'head', lines: 1 }, true).text).toBe(line);
  });

  it('never follows a link, never leaves logs/, and a missing log is null', () => {
    const dir = stateDir();
    const secret = join(dir, 'secret.txt');
    writeFileSync(secret, 'secret\n');
    symlinkSync(secret, join(dir, 'logs', 'L.log'));
    expect(readStoredLog(dir, 'logs/L.log', 'end')).toBeNull();
    expect(readStoredLog(dir, '../secret.txt', 'end')).toBeNull();
    expect(readStoredLog(dir, 'logs/../secret.txt', 'end')).toBeNull();
    expect(readStoredLog(dir, secret, 'end')).toBeNull();
    expect(readStoredLog(dir, 'logs/missing.log', 'end')).toBeNull();
    // logs/ itself a link to elsewhere
    const other = stateDir();
    writeFileSync(join(other, 'logs', 'R.log'), 'elsewhere\n');
    const linked = mkdtempSync(join(tmpdir(), 'vouch-stored-log-'));
    dirs.push(linked);
    symlinkSync(join(other, 'logs'), join(linked, 'logs'));
    expect(readStoredLog(linked, 'logs/R.log', 'end')).toBeNull();
  });
});
