import { describe, expect, it } from 'vitest';
import { shellQuote } from '../../src/agents/shellQuote.js';

/*
 * The one shell quoting that rewrites, hook entries, setup's instructions and
 * `vouch agent` output share: plain words stay as they are, anything else is
 * single-quoted, and `=` is quoted so a first word never reads as an
 * assignment.
 */

describe('shellQuote', () => {
  const cases: Array<[string, string]> = [
    ['vouch', 'vouch'],
    ['/opt/vouch/dist/bin/main.js', '/opt/vouch/dist/bin/main.js'],
    ['test:unit', 'test:unit'],
    ['a=b', "'a=b'"],
    ['', "''"],
    ['my tools', "'my tools'"],
    ["it's", "'it'\\''s'"],
    ['a;b', "'a;b'"],
    ['$HOME', "'$HOME'"],
  ];
  for (const [word, quoted] of cases) {
    it(JSON.stringify(word), () => {
      expect(shellQuote(word)).toBe(quoted);
    });
  }
});
