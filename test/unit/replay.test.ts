import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { grepMatcher, replayOutput, splitLines, stripAnsi, trimmerOf, type StoredLog, type Trimmer } from '../../src/core/replay.js';

const log = (text: string | Buffer): StoredLog => {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  return { bytes, offset: 0, size: bytes.length };
};

/** What the real program prints for this input: the replay must equal it. */
function real(argv: string[], input: string): string {
  const result = spawnSync(argv[0]!, argv.slice(1), { input, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C.UTF-8' } });
  return result.stdout;
}

const SAMPLE = ['first line', 'Tests  1 failed | 3 passed (4)', 'FAIL src/a.test.ts > adds', 'a|b literal', 'x+y? (z) {1}', '^caret inside', 'ends with $', '', 'last line without newline'].join('\n');
const MANY = Array.from({ length: 120 }, (_, index) => `line ${index + 1}`).join('\n') + '\n';

describe('trimmerOf reads only the forms it can reproduce', () => {
  it('tail and head with a count', () => {
    expect(trimmerOf(['tail', '-30'])).toEqual({ kind: 'tail', lines: 30 });
    expect(trimmerOf(['tail', '-n', '5'])).toEqual({ kind: 'tail', lines: 5 });
    expect(trimmerOf(['head', '-n', '0'])).toEqual({ kind: 'head', lines: 0 });
    for (const argv of [['tail'], ['tail', '-f'], ['tail', '-n', '+5'], ['head', '-c', '5'], ['tail', '-5', 'file'], ['head', '-n', '-5']]) expect(trimmerOf(argv), argv.join(' ')).toBeNull();
  });

  it('grep with one pattern and at most -F or -E and -v', () => {
    expect(trimmerOf(['grep', 'FAIL'])).toEqual({ kind: 'grep', syntax: 'basic', invert: false, pattern: 'FAIL' });
    expect(trimmerOf(['grep', '-E', '-v', 'a|b'])).toEqual({ kind: 'grep', syntax: 'extended', invert: true, pattern: 'a|b' });
    for (const argv of [['grep'], ['grep', '-i', 'x'], ['grep', 'x', 'file'], ['grep', '-e', 'x'], ['grep', '-F', '-E', 'x'], ['grep', '-v', '-v', 'x'], ['grep', '-vE', 'x'], ['grep', '--', 'x'], ['grep', 'a\nb']]) {
      expect(trimmerOf(argv), JSON.stringify(argv)).toBeNull();
    }
  });
});

describe('replayOutput gives what the command would have printed', () => {
  for (const argv of [['tail', '-3'], ['tail', '-n', '1'], ['head', '-2'], ['head', '-n', '100'], ['tail', '-0'], ['head', '-0']]) {
    it(`${argv.join(' ')} equals the real ${argv[0]}`, () => {
      const trimmer = trimmerOf(argv)!;
      for (const input of [SAMPLE, `${SAMPLE}\n`, '', '\n\n', 'one']) expect(replayOutput(log(input), trimmer, true).text, JSON.stringify(input)).toBe(real(argv, input));
    });
  }

  const greps: string[][] = [
    ['grep', 'FAIL'],
    ['grep', 'line'],
    ['grep', '^first'],
    ['grep', 'line$'],
    ['grep', '^$'],
    ['grep', ''],
    ['grep', 'a|b'],
    ['grep', 'x+y? (z) {1}'],
    ['grep', 'caret ^inside'],
    ['grep', 'with $ x'],
    ['grep', '-v', 'line'],
    ['grep', '-F', '.*[x]'],
    ['grep', '-F', 'ends with $'],
    ['grep', '-E', 'FAIL|Tests'],
    ['grep', '-E', '^first|newline$'],
    ['grep', '-E', '-v', '^Tests|line'],
    ['grep', 'nothing matches this'],
  ];
  for (const argv of greps) {
    it(`${JSON.stringify(argv)} equals the real grep`, () => {
      const trimmer = trimmerOf(argv)!;
      expect(trimmer, 'a form it reads').not.toBeNull();
      expect(grepMatcher(trimmer as Extract<Trimmer, { kind: 'grep' }>), 'a pattern it reproduces').not.toBeNull();
      const replay = replayOutput(log(SAMPLE), trimmer, true);
      expect(replay.notes).toEqual([]);
      expect(replay.text).toBe(real(argv, SAMPLE));
    });
  }

  it('a grep pattern it cannot reproduce exactly is not replayed: the last 40 lines instead, with a note saying so', () => {
    for (const pattern of ['F.IL', 'a*', '[0-9]', 'x\\+', 'a\\|b']) {
      const trimmer = trimmerOf(['grep', pattern])!;
      const replay = replayOutput(log(MANY), trimmer, true);
      expect(replay.part, pattern).toBe('the last 40 lines');
      expect(replay.notes.join(' '), pattern).toContain('cannot reproduce');
      expect(replay.text).toBe(real(['tail', '-40'], MANY));
    }
    for (const pattern of ['a|', '(a)', 'a+', 'x^y']) {
      expect(grepMatcher({ kind: 'grep', syntax: 'extended', invert: false, pattern }), pattern).toBeNull();
    }
  });

  it('grep over a log with a NUL byte is not replayed (grep would call it binary)', () => {
    const replay = replayOutput(log('FAIL one\n\0FAIL two\n'), trimmerOf(['grep', 'FAIL']), true);
    expect(replay.notes.join(' ')).toContain('NUL');
    // GNU grep 3.5 and later say so on stderr, earlier ones on stdout.
    const result = spawnSync('grep', ['FAIL'], { input: 'FAIL one\n\0FAIL two\n', encoding: 'utf8' });
    expect(result.stdout + result.stderr).toMatch(/binary file/i);
  });

  it('a plain command gets the last 40 lines', () => {
    const replay = replayOutput(log(MANY), null, true);
    expect(replay.text).toBe(real(['tail', '-40'], MANY));
    expect(replay).toMatchObject({ part: 'the last 40 lines', lines: 40, omittedLines: 0 });
  });

  it('is bounded to 200 lines and 8 KB, keeping the end for tail and the start for head, and says what it left out', () => {
    const big = Array.from({ length: 1000 }, (_, index) => `${String(index + 1).padStart(4, '0')} ${'x'.repeat(20)}`).join('\n') + '\n';
    const tail = replayOutput(log(big), { kind: 'tail', lines: 500 }, true);
    expect(tail.lines).toBe(200);
    expect(tail.omittedLines).toBe(300);
    expect(tail.text).toBe(real(['tail', '-200'], big));
    const head = replayOutput(log(big), { kind: 'head', lines: 500 }, true);
    expect(head.text).toBe(real(['head', '-200'], big));
    const wide = Array.from({ length: 100 }, (_, index) => `${index} ${'y'.repeat(200)}`).join('\n') + '\n';
    const cut = replayOutput(log(wide), { kind: 'tail', lines: 100 }, true);
    expect(cut.bytes).toBeLessThanOrEqual(8 * 1024);
    expect(cut.text.endsWith(real(['tail', '-1'], wide))).toBe(true);
    expect(wide.endsWith(cut.text)).toBe(true);
    expect(cut.omittedLines).toBe(100 - cut.lines);
    // One line longer than the limit alone: cut at a character, never mid-UTF-8.
    const line = `${'é'.repeat(10_000)}\n`;
    const one = replayOutput(log(line), null, true);
    expect(one.bytes).toBeLessThanOrEqual(8 * 1024);
    expect(line.endsWith(one.text)).toBe(true);
  });

  it('removes ANSI escapes and keeps every other byte as stored', () => {
    const colored = '\x1b[2m Test Files \x1b[22m \x1b[1m\x1b[32m1 passed\x1b[39m\x1b[22m\x1b[90m (1)\x1b[39m\r\n\x1b]8;;https://x.test\x07link\x1b]8;;\x07 \ttab\n';
    expect(replayOutput(log(colored), null, true).text).toBe(' Test Files  1 passed (1)\r\nlink \ttab\n');
    expect(stripAnsi('a\x1b(Bb\x1b=c')).toBe('abc');
  });

  it('says stderr is included when the command filtered stdout only', () => {
    expect(replayOutput(log('x\n'), { kind: 'tail', lines: 5 }, false).notes.join(' ')).toContain('stderr is included');
    expect(replayOutput(log('x\n'), { kind: 'tail', lines: 5 }, true).notes).toEqual([]);
    expect(replayOutput(log('x\n'), null, true).notes).toEqual([]);
  });

  it('reads a window from the end of a large log: the partial first line is not shown, and head is not replayed from it', () => {
    const text = 'cut-off start\nsecond\nthird\n';
    const window: StoredLog = { bytes: Buffer.from(text), offset: 1000, size: 1000 + Buffer.byteLength(text) };
    expect(replayOutput(window, { kind: 'tail', lines: 10 }, true).text).toBe('second\nthird\n');
    const head = replayOutput(window, { kind: 'head', lines: 1 }, true);
    expect(head.notes.join(' ')).toContain('head is not replayed');
    expect(replayOutput(window, trimmerOf(['grep', 'third']), true).notes.join(' ')).toContain('too large');
  });

  it('says when the log holds bytes that are not UTF-8', () => {
    const replay = replayOutput(log(Buffer.from([0x61, 0xff, 0x0a])), null, true);
    expect(replay.text).toBe('a\ufffd\n');
    expect(replay.notes.join(' ')).toContain('not UTF-8');
  });

  it('splits lines as tail counts them', () => {
    expect(splitLines('a\nb')).toEqual(['a\n', 'b']);
    expect(splitLines('a\n')).toEqual(['a\n']);
    expect(splitLines('')).toEqual([]);
  });
});
