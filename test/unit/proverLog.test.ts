import { Console } from 'node:console';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { divertOutput, proverLogPath } from '../../src/api/proverLog.js';

// What a workspace's tools print to stderr while a prover is open goes to the prover log; vouch's own output does not go through process.stderr.

let scratch: string;
let terminal: string[];
let before: typeof process.stderr.write;
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'vouch-prover-log-'));
  terminal = [];
  before = process.stderr.write;
  // Stands for the terminal: what still reaches stderr lands here.
  process.stderr.write = ((chunk: string | Uint8Array) => {
    terminal.push(Buffer.from(chunk).toString());
    return true;
  }) as typeof process.stderr.write;
});
afterEach(() => {
  process.stderr.write = before;
  rmSync(scratch, { recursive: true, force: true });
});

describe('divertOutput', () => {
  it('sends console.warn and process.stderr writes to <state dir>/logs/prove.log until restored', () => {
    const stateDir = join(scratch, '.vouch');
    const restore = divertOutput(stateDir, ['stderr']);
    // Node's own console, as vouch's process has it (the test runner replaces the global one): it writes to process.stderr.
    new Console({ stdout: process.stdout, stderr: process.stderr }).warn('Browserslist: caniuse-lite is outdated. Please run: npx update-browserslist-db@latest');
    process.stderr.write('a plugin\'s notice\n');
    let called = false;
    process.stderr.write('with a callback\n', () => (called = true));
    restore();
    process.stderr.write('after\n');
    const log = readFileSync(proverLogPath(stateDir), 'utf8');
    expect(log).toContain('Browserslist: caniuse-lite is outdated');
    expect(log).toContain("a plugin's notice");
    expect(log).toContain('with a callback');
    expect(log).not.toContain('after');
    expect(terminal.join('')).toBe('after\n');
    expect(statSync(proverLogPath(stateDir)).mode & 0o777).toBe(0o600);
    return new Promise<void>((resolve) => queueMicrotask(() => (expect(called).toBe(true), resolve())));
  });

  it('creates nothing when nothing is written', () => {
    const stateDir = join(scratch, '.vouch');
    divertOutput(stateDir, ['stderr'])();
    expect(existsSync(stateDir)).toBe(false);
  });

  it('gives the text back to stderr when the log cannot be opened: hidden output would be worse than noise', () => {
    const stateDir = join(scratch, 'not-a-dir');
    writeFileSync(stateDir, 'a file where the state dir should be');
    const restore = divertOutput(stateDir, ['stderr']);
    process.stderr.write('still seen\n');
    restore();
    expect(terminal.join('')).toBe('still seen\n');
  });

  it('takes at most 1 MiB from one prover, and says what it dropped', () => {
    const stateDir = join(scratch, '.vouch');
    const restore = divertOutput(stateDir, ['stderr']);
    const line = 'x'.repeat(1023) + '\n';
    for (let i = 0; i < 2048; i++) process.stderr.write(line);
    restore();
    const log = readFileSync(proverLogPath(stateDir), 'utf8');
    expect(log.length).toBeLessThan((1 << 20) + 1024);
    expect(log).toMatch(/the rest of its output was dropped/);
    expect(terminal).toEqual([]);
  });

  it('takes stdout too when asked (a config\'s console.log would land in --json), and leaves it alone otherwise', () => {
    const stateDir = join(scratch, '.vouch');
    const printed: string[] = [];
    const stdout = process.stdout.write;
    process.stdout.write = ((chunk: string | Uint8Array) => {
      printed.push(Buffer.from(chunk).toString());
      return true;
    }) as typeof process.stdout.write;
    try {
      const restoreBoth = divertOutput(stateDir, ['stdout', 'stderr']);
      new Console({ stdout: process.stdout, stderr: process.stderr }).log('a config logs');
      restoreBoth();
      const restoreStderr = divertOutput(stateDir, ['stderr']);
      process.stdout.write('the protocol\n');
      restoreStderr();
    } finally {
      process.stdout.write = stdout;
    }
    expect(readFileSync(proverLogPath(stateDir), 'utf8')).toContain('a config logs');
    expect(printed).toEqual(['the protocol\n']);
  });

  it('two provers open at once: the newest gets the text, and stderr comes back only when both are closed', () => {
    const first = join(scratch, 'one');
    const second = join(scratch, 'two');
    const restoreFirst = divertOutput(first, ['stderr']);
    const restoreSecond = divertOutput(second, ['stderr']);
    process.stderr.write('to the second\n');
    restoreSecond();
    process.stderr.write('to the first\n');
    restoreFirst();
    process.stderr.write('to the terminal\n');
    expect(readFileSync(proverLogPath(second), 'utf8')).toContain('to the second');
    expect(readFileSync(proverLogPath(first), 'utf8')).toContain('to the first');
    expect(terminal.join('')).toBe('to the terminal\n');
  });
});
