import { describe, expect, it } from 'vitest';
import { commandWords, plainCommand, simpleCommands } from '../../src/core/shellWords.js';

/*
 * Shell command lines split into words by unbash, as init reads package.json
 * scripts (simpleCommands) and as the matcher finds the one tool a script
 * runs (plainCommand).
 */

describe('simpleCommands', () => {
  const cases: Array<[string, string[][]]> = [
    ['tsc --noEmit', [['tsc', '--noEmit']]],
    ['tsc && vitest run; eslint . || true', [['tsc'], ['vitest', 'run'], ['eslint', '.'], ['true']]],
    ['cross-env NODE_ENV=test vitest run', [['cross-env', 'NODE_ENV=test', 'vitest', 'run']]],
    ['FORCE_COLOR=0 jest --ci', [['FORCE_COLOR=0', 'jest', '--ci']]],
    ['mocha "test/**/*.spec.js" 2>&1 | tee log', [['mocha', 'test/**/*.spec.js'], ['tee', 'log']]],
    ["(cd packages/a && tsc -b) & eslint 'src'", [['cd', 'packages/a'], ['tsc', '-b'], ['eslint', 'src']]],
    ['tsc # --watch', [['tsc']]],
    ['npm run lint \\\n  -- --fix', [['npm', 'run', 'lint', '--', '--fix']]],
    ['echo "$(vitest run)"', [['echo', '$(vitest run)'], ['vitest', 'run']]],
    ['', []],
  ];
  for (const [text, expected] of cases) {
    it(JSON.stringify(text), () => {
      expect(simpleCommands(text)).toEqual(expected);
    });
  }
});

describe('plainCommand', () => {
  it('reads one plain command, with runs of spaces and blanks around it', () => {
    expect(plainCommand('tsc --noEmit')).toEqual(['tsc', '--noEmit']);
    expect(plainCommand('  tsc   --noEmit ')).toEqual(['tsc', '--noEmit']);
    expect(plainCommand('npx vitest run --reporter=dot')).toEqual(['npx', 'vitest', 'run', '--reporter=dot']);
  });

  it('reads nothing else', () => {
    for (const text of ['tsc && vitest', 'eslint "src"', "eslint 'src'", 'eslint s\\rc', 'vitest $ARGS', 'eslint src/*.ts', 'NODE_ENV=test vitest', 'tsc # note', 'tsc;', 'tsc &', 'tsc > out', 'tsc\t--noEmit', 'tsc\n--noEmit', 'eslint ~/x', '', ' ']) {
      expect(plainCommand(text), JSON.stringify(text)).toBeNull();
    }
  });
});

describe('commandWords', () => {
  const cases: Array<[string, (string | null)[][] | null]> = [
    ['npm run build && vitest run', [['npm', 'run', 'build'], ['vitest', 'run']]],
    ['CI=1 npm run "lint"', [['npm', 'run', 'lint']]],
    ['npm run $TARGET', [['npm', 'run', null]]],
    ['$npm_execpath run build', [[null, 'run', 'build']]],
    ['echo "$(npm run lint)" > out', [['echo', null], ['npm', 'run', 'lint']]],
    ['tsc && (', null],
    ['', []],
  ];
  for (const [text, expected] of cases) {
    it(JSON.stringify(text), () => {
      expect(commandWords(text)).toEqual(expected);
    });
  }
});
