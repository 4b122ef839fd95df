import { describe, expect, it } from 'vitest';
import { decideCommand, type CheckAnswer } from '../../src/agents/commandDecision.js';
import { matchCommand, type MatchTarget } from '../../src/agents/commandMatch.js';
import { checkForms, toolOfScript } from '../../src/agents/matchForms.js';
import { definitionOf } from '../../src/core/definition.js';
import type { CheckConfig, PackageManagerName } from '../../src/core/config.js';
import { CORPUS, SCRIPTS, VITEST_ARGS_SCRIPTS, VITEST_SCRIPTS, type CorpusCase, type TargetName } from '../fixtures/agent-corpus.js';

/*
 * Every corpus command through matchCommand and decideCommand (both pure),
 * in each freshness state the matched checks can be in.
 */

const CHECKS: CheckConfig[] = [
  { name: 'typecheck', kind: 'typecheck', script: 'typecheck' },
  { name: 'lint', kind: 'lint', script: 'lint' },
  { name: 'test', kind: 'test', script: 'test' },
  { name: 'build', kind: 'build', script: 'build' },
  { name: 'audit', kind: 'custom', script: 'audit' },
  { name: 'format', kind: 'lint', command: ['prettier', '--check', '.'], env: ['FORMAT_MODE'] },
];

function target(name: TargetName): MatchTarget {
  const packageManager: PackageManagerName = name === 'npmSub' || name === 'npmVitest' || name === 'npmVitestArgs' ? 'npm' : name;
  return {
    root: '/repo',
    cwd: name === 'npmSub' ? '/repo/packages/app' : '/repo',
    packageManager,
    scripts: name === 'npmVitest' ? VITEST_SCRIPTS : name === 'npmVitestArgs' ? VITEST_ARGS_SCRIPTS : SCRIPTS,
    checks: CHECKS.map((check) => definitionOf(check, packageManager)),
  };
}

const NOW = 1_800_000_000_000;
type State = 'current' | 'stale' | 'unverified' | 'currentFail' | 'currentNotReusable';
const STATES: State[] = ['current', 'stale', 'unverified', 'currentFail', 'currentNotReusable'];

function answers(state: State): Map<string, CheckAnswer> {
  const map = new Map<string, CheckAnswer>();
  for (const { name } of CHECKS) {
    const ran = state !== 'unverified';
    map.set(name, {
      name,
      freshness: state === 'stale' ? 'STALE' : state === 'unverified' ? 'UNVERIFIED' : 'CURRENT',
      result: !ran ? null : state === 'currentFail' ? 'FAIL' : 'PASS',
      reuseEligible: state === 'current',
      runId: ran ? `run-${name}` : null,
      finishedAt: ran ? NOW - 5 * 60_000 : null,
      durationMs: ran ? 1234 : null,
    });
  }
  return map;
}

function label(entry: CorpusCase): string {
  return `${entry.target ?? 'npm'}: ${JSON.stringify(entry.command)}`;
}

describe('the agent command corpus', () => {
  it('has at least 300 commands, none twice for the same project', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(300);
    const keys = CORPUS.map((entry) => `${entry.target ?? 'npm'}\0${entry.command}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  for (const entry of CORPUS) {
    it(label(entry), () => {
      const match = matchCommand(entry.command, target(entry.target ?? 'npm'));
      if (entry.parseError) {
        expect(match).toBeNull();
        return;
      }
      expect(match).not.toBeNull();
      expect(match!.force).toBe(entry.force === true);
      expect(match!.parts.flatMap((part) => part.checks)).toEqual(entry.checks ?? []);
      if (entry.checks) expect(match!.onlyChecks).toBe(entry.only === true);

      for (const state of STATES) {
        const decision = decideCommand(entry.command, match!, answers(state), NOW);
        if (entry.forcedRewrite !== undefined) {
          expect(decision, state).toMatchObject({ kind: 'rewrite', command: entry.forcedRewrite });
          continue;
        }
        if (!entry.checks || entry.force) {
          expect(decision.kind, state).toBe('pass');
          continue;
        }
        if (state === 'current' && entry.only) {
          expect(decision.kind, state).toBe('deny');
          if (decision.kind !== 'deny') continue;
          for (const name of entry.checks) {
            expect(decision.reason).toContain(`"${name}"`);
            expect(decision.reason).toContain(`run-${name}`);
          }
          expect(decision.reason).toContain('5 min ago');
          expect(decision.reason).toContain(`VOUCH_FORCE=1 ${entry.command.trimStart()}`);
          expect(decision.checks).toEqual([...new Set(entry.checks)]);
          continue;
        }
        expect(decision, state).toMatchObject({ kind: 'rewrite', command: entry.rewrite });
      }
    });
  }
});

describe('matched parts', () => {
  it('exclude assignments and the 2>&1 | tail suffix, and carry the assignments unquoted', () => {
    const command = "NODE_ENV='test' FOO=\"a b\" npm test 2>&1 | tail -30";
    const match = matchCommand(command, target('npm'))!;
    expect(match.parts).toHaveLength(1);
    const [part] = match.parts;
    expect(command.slice(part!.start, part!.end)).toBe('npm test');
    expect(part!.env).toEqual({ NODE_ENV: 'test', FOO: 'a b' });
  });

  it('uses UTF-16 offsets', () => {
    const command = 'echo "🚀 ✓" && npm run lint';
    const [part] = matchCommand(command, target('npm'))!.parts;
    expect(command.slice(part!.start, part!.end)).toBe('npm run lint');
  });

  it('does not follow a relative cd when CDPATH is set', () => {
    const fromSlash = { ...target('npm'), cwd: '/' };
    expect(matchCommand('cd repo && npm test', fromSlash)!.parts).toHaveLength(1);
    expect(matchCommand('cd repo && npm test', { ...fromSlash, cdpath: true })!.parts).toEqual([]);
    // bash never looks up ./ and ../ paths, nor absolute ones, in CDPATH.
    expect(matchCommand('cd ./repo && npm test', { ...fromSlash, cdpath: true })!.parts).toHaveLength(1);
    expect(matchCommand('cd /repo && npm test', { ...fromSlash, cdpath: true })!.parts).toHaveLength(1);
  });

  it('matches the first check in config order when two share a command', () => {
    const checks = [
      definitionOf({ name: 'unit', kind: 'test', command: ['vitest', 'run'] }, null),
      definitionOf({ name: 'test', kind: 'test', script: 'test' }, 'npm'),
    ];
    expect(matchCommand('vitest run', { ...target('npm'), checks })!.parts[0]!.checks[0]).toBe('unit');
  });
});

describe('decisions', () => {
  it('names the program the caller gives in a rewrite', () => {
    const match = matchCommand('npm test 2>&1 | tail -5', target('npm'))!;
    const decision = decideCommand('npm test 2>&1 | tail -5', match, answers('stale'), NOW, "'/opt/my tools/vouch'");
    expect(decision).toMatchObject({ kind: 'rewrite', command: "'/opt/my tools/vouch' run test --if-due 2>&1 | tail -5" });
  });

  it('passes when the program would not read as one plain command', () => {
    const match = matchCommand('npm test', target('npm'))!;
    expect(decideCommand('npm test', match, answers('stale'), NOW, 'vouch; rm -rf /').kind).toBe('pass');
    expect(decideCommand('npm test', match, answers('stale'), NOW, 'vouch #').kind).toBe('pass');
  });

  it('rewrites when an answer is missing', () => {
    const match = matchCommand('npm test', target('npm'))!;
    expect(decideCommand('npm test', match, new Map(), NOW)).toMatchObject({ kind: 'rewrite', command: 'vouch run test --if-due' });
  });

  it('denies a chain of current checks whole, listing every part', () => {
    const command = 'npm run typecheck && npm test 2>&1 | tail -30';
    const decision = decideCommand(command, matchCommand(command, target('npm'))!, answers('current'), NOW);
    expect(decision.kind).toBe('deny');
    if (decision.kind !== 'deny') return;
    expect(decision.reason).toContain('- npm run typecheck: check "typecheck" PASSED in run run-typecheck, 5 min ago');
    expect(decision.reason).toContain('- npm test: check "test" PASSED in run run-test, 5 min ago');
    expect(decision.reason).toContain(`VOUCH_FORCE=1 ${command}`);
  });

  it('rewrites a chain where one check is current and another is not', () => {
    const command = 'npm run typecheck && npm test';
    const mixed = answers('current');
    mixed.set('test', { ...mixed.get('test')!, freshness: 'STALE', reuseEligible: false });
    const decision = decideCommand(command, matchCommand(command, target('npm'))!, mixed, NOW);
    expect(decision).toMatchObject({ kind: 'rewrite', command: 'vouch run typecheck --if-due && vouch run test --if-due', checks: ['typecheck', 'test'] });
  });
});

describe('checkForms', () => {
  const forms = (check: CheckConfig, scripts: Record<string, string> = {}, packageManager: PackageManagerName = 'npm') =>
    checkForms(definitionOf(check, packageManager), { packageManager, scripts }).map((form) => form.join(' '));

  it('derives the tool from a plain script, with or without npx in it', () => {
    expect(forms({ name: 't', kind: 'typecheck', script: 'tc' }, { tc: 'npx tsc --noEmit' })).toEqual([
      'vouch run t',
      'npm run tc',
      'tsc --noEmit',
      'npx tsc --noEmit',
      'pnpm exec tsc --noEmit',
    ]);
  });

  it('reads a plain script with runs of spaces', () => {
    expect(toolOfScript('  tsc   --noEmit ')).toEqual(['tsc', '--noEmit']);
  });

  it('has no tool for a script that chains, quotes, expands, sets variables or runs another script', () => {
    for (const body of ['tsc && vitest run', 'eslint "src/**"', 'vitest $ARGS', 'NODE_ENV=test vitest run', 'npm run other', 'npx -y tsc', 'tsc\t--noEmit', 'bin/check']) {
      expect(toolOfScript(body), body).toBeNull();
    }
  });

  it('takes node_modules/.bin/X as the tool X, and keeps other paths exact', () => {
    expect(forms({ name: 'l', kind: 'lint', command: ['node_modules/.bin/oxlint', 'src'] })).toEqual([
      'vouch run l',
      'node_modules/.bin/oxlint src',
      'oxlint src',
      'npx oxlint src',
      'pnpm exec oxlint src',
    ]);
    expect(forms({ name: 'c', kind: 'custom', command: ['./scripts/check.sh'] })).toEqual(['vouch run c', './scripts/check.sh']);
  });

  it('adds the forms vitest documents as the same run, after the same runners', () => {
    expect(forms({ name: 't', kind: 'test', script: 'test' }, { test: 'vitest' })).toEqual([
      'vouch run t',
      'npm run test',
      'npm test',
      'vitest',
      'npx vitest',
      'pnpm exec vitest',
      'vitest run',
      'npx vitest run',
      'pnpm exec vitest run',
      'vitest --run',
      'npx vitest --run',
      'pnpm exec vitest --run',
    ]);
    expect(forms({ name: 't', kind: 'test', command: ['vitest', 'run'] })).toEqual(['vouch run t', 'vitest run', 'npx vitest run', 'pnpm exec vitest run', 'vitest --run', 'npx vitest --run', 'pnpm exec vitest --run']);
    // Not the other way round: a typed `vitest` in a terminal watches.
    expect(forms({ name: 't', kind: 'test', command: ['vitest', '--run'] })).not.toContain('vitest');
  });

  it('matches no other form of vitest when the arguments choose a mode or a command', () => {
    for (const body of ['vitest --watch', 'vitest -w', 'vitest run --watch', 'vitest watch', 'vitest dev', 'vitest --ui', 'vitest --standalone', 'vitest src run', 'vitest list', 'vitest --no-watch', 'vitest --watch=false', 'vitest -- x']) {
      const all = forms({ name: 't', kind: 'test', script: 'test' }, { test: body });
      expect(all.filter((form) => form.startsWith('vitest')), body).toEqual([body]);
    }
  });

  it('leaves out the short form for a script named like a package manager command', () => {
    expect(forms({ name: 'i', kind: 'custom', script: 'install' }, {}, 'pnpm')).toEqual(['vouch run i', 'pnpm run install']);
    expect(forms({ name: 'w', kind: 'custom', script: 'why' }, {}, 'yarn')).toEqual(['vouch run w', 'yarn run why']);
    expect(forms({ name: 'e', kind: 'test', script: 'e2e' }, {}, 'yarn')).toEqual(['vouch run e', 'yarn run e2e', 'yarn e2e']);
    expect(forms({ name: 't', kind: 'test', script: 'test' }, {}, 'bun')).toEqual(['vouch run t', 'bun run test']);
  });
});
