import { describe, expect, it } from 'vitest';
import type { MatchedPart } from '../../src/agents/commandMatch.js';
import { rewriteCommand, validateRewrite } from '../../src/agents/rewrite.js';

/*
 * The rewrite validator on its own: hand-made parts and candidates, not the
 * matcher's, so that it is tested as the last line of defence it is.
 */

/** A part over the first occurrence of `words` in `command`. */
function part(command: string, words: string, check: string, from = 0): MatchedPart {
  const start = command.indexOf(words, from);
  if (start < 0) throw new Error(`"${words}" is not in "${command}"`);
  return { checks: [check], start, end: start + words.length, env: {} };
}

describe('validateRewrite accepts', () => {
  const accepted: Array<[string, string, (command: string) => MatchedPart[], string?]> = [
    ['npm test', 'vouch run test --if-due', (c) => [part(c, 'npm test', 'test')]],
    ['FOO=1 npm test 2>&1 | tail -30', 'FOO=1 vouch run test --if-due 2>&1 | tail -30', (c) => [part(c, 'npm test', 'test')]],
    ['cd /repo && npm run typecheck', 'cd /repo && vouch run typecheck --if-due', (c) => [part(c, 'npm run typecheck', 'typecheck')]],
    [
      'npm run typecheck && npm test # done',
      'vouch run typecheck --if-due && vouch run test --if-due # done',
      (c) => [part(c, 'npm test', 'test'), part(c, 'npm run typecheck', 'typecheck')],
    ],
    ["cat <<'EOF' > f\nnpm test\nEOF\nnpm test", "cat <<'EOF' > f\nnpm test\nEOF\nvouch run test --if-due", (c) => [part(c, 'npm test', 'test', 20)]],
    ['npx tsc \\\n  --noEmit', 'vouch run typecheck --if-due', (c) => [{ checks: ['typecheck'], start: 0, end: c.length, env: {} }]],
    ['npm test', "'/opt/my tools/vouch' run test --if-due", (c) => [part(c, 'npm test', 'test')], "'/opt/my tools/vouch'"],
    ['npm test', 'node /opt/vouch/dist/bin/main.js run test --if-due', (c) => [part(c, 'npm test', 'test')], 'node /opt/vouch/dist/bin/main.js'],
    ['npm run e2e', "vouch run 'e2e tests' --if-due", (c) => [part(c, 'npm run e2e', 'e2e tests')]],
    ['echo "✓ 🚀" && npm test', 'echo "✓ 🚀" && vouch run test --if-due', (c) => [part(c, 'npm test', 'test')]],
  ];
  for (const [original, candidate, parts, program] of accepted) {
    it(JSON.stringify(original), () => {
      expect(validateRewrite(original, candidate, parts(original), program)).toBe(true);
      expect(rewriteCommand(original, parts(original), program)).toBe(candidate);
    });
  }
});

describe('validateRewrite rejects', () => {
  const npmTest = (c: string) => [part(c, 'npm test', 'test')];
  const rejected: Array<[string, string, string, (command: string) => MatchedPart[], string?]> = [
    ['a byte changed outside the part', 'npm test && echo ok', 'vouch run test --if-due && echo OK', npmTest],
    ['a command appended', 'npm test', 'vouch run test --if-due; rm -rf /', npmTest],
    ['the suffix dropped', 'npm test 2>&1 | tail -30', 'vouch run test --if-due', npmTest],
    ['the assignment dropped', 'FOO=1 npm test', 'vouch run test --if-due', npmTest],
    ['another check named', 'npm test', 'vouch run lint --if-due', npmTest],
    ['--if-due left out', 'npm test', 'vouch run test', npmTest],
    ['no parts', 'npm test', 'npm test', () => []],
    ['a part that is not a whole command', 'npm test', 'vouch run test --if-due test', (c) => [part(c, 'npm', 'test')]],
    ['a part with a trailing blank', 'npm test ', 'vouch run test --if-due', () => [{ checks: ['test'], start: 0, end: 9, env: {} }]],
    ['a part covering the assignment', 'FOO=1 npm test', 'vouch run test --if-due', (c) => [{ checks: ['test'], start: 0, end: c.length, env: {} }]],
    ['a part inside $()', 'echo "$(npm test)"', 'echo "$(vouch run test --if-due)"', npmTest],
    ['a part inside a subshell', '(npm test)', '(vouch run test --if-due)', npmTest],
    ['a part inside a group', '{ npm test; }', '{ vouch run test --if-due; }', npmTest],
    ['a part inside bash -c', "bash -c 'npm test'", "bash -c 'vouch run test --if-due'", npmTest],
    ['a part inside a here-document', 'cat <<EOF\nnpm test\nEOF', 'cat <<EOF\nvouch run test --if-due\nEOF', npmTest],
    ['a part inside a comment', 'true # npm test', 'true # vouch run test --if-due', npmTest],
    ['a part inside quotes', 'echo "npm test"', 'echo "vouch run test --if-due"', npmTest],
    ['a part after a pipe', 'cat x | npm test', 'cat x | vouch run test --if-due', npmTest],
    ['overlapping parts', 'npm test', 'vouch run test --if-due', (c) => [part(c, 'npm test', 'test'), part(c, 'npm test', 'test')]],
    ['a part out of range', 'npm test', 'vouch run test --if-due', () => [{ checks: ['test'], start: 0, end: 99, env: {} }]],
    ['an empty part', 'npm test', 'vouch run test --if-due', () => [{ checks: ['test'], start: 0, end: 0, env: {} }]],
    ['a program that adds a command', 'npm test', 'vouch; rm -rf / run test --if-due', npmTest, 'vouch; rm -rf /'],
    ['a program that starts a comment', 'npm test && deploy', 'vouch # run test --if-due && deploy', npmTest, 'vouch #'],
    ['a program with a substitution', 'npm test', '$(curl x) run test --if-due', npmTest, '$(curl x)'],
    ['a program that opens a quote', 'npm test && echo "a"', 'vouch" run test --if-due && echo "a"', npmTest, 'vouch"'],
    ['a program that is empty', 'npm test', ' run test --if-due', npmTest, ''],
    ['a program that backgrounds', 'npm test && deploy', 'vouch & run test --if-due && deploy', npmTest, 'vouch &'],
    ['a check name with a command in it', 'npm test', "vouch run 'x'; rm -rf / --if-due", (c) => [{ checks: ["x'; rm -rf /"], start: 0, end: c.length, env: {} }]],
    ['an original that does not parse', 'npm test "', 'vouch run test --if-due "', npmTest],
  ];
  for (const [why, original, candidate, parts, program] of rejected) {
    it(why, () => {
      expect(validateRewrite(original, candidate, parts(original), program)).toBe(false);
    });
  }

  it('a candidate built by splicing that re-parses differently', () => {
    // A check name is quoted by the rewrite, so a raw splice with a metacharacter is not what it validates.
    const original = 'npm test';
    const parts = [{ checks: ['a;b'], start: 0, end: 8, env: {} }];
    expect(validateRewrite(original, 'vouch run a;b --if-due', parts)).toBe(false);
    expect(rewriteCommand(original, parts)).toBe("vouch run 'a;b' --if-due");
  });

  it('rewriteCommand returns null when validation fails', () => {
    expect(rewriteCommand('echo "$(npm test)"', [part('echo "$(npm test)"', 'npm test', 'test')])).toBeNull();
    expect(rewriteCommand('npm test', [part('npm test', 'npm test', 'test')], 'vouch; rm -rf /')).toBeNull();
    expect(rewriteCommand('npm test', [])).toBeNull();
  });
});
