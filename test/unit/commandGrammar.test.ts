import { describe, expect, it } from 'vitest';
import { decideCommand } from '../../src/agents/commandDecision.js';
import { matchCommand, type MatchTarget } from '../../src/agents/commandMatch.js';
import { proposeConfig } from '../../src/api/initProposal.js';
import { PACKAGE_MANAGERS, type CheckConfig, type PackageManagerName } from '../../src/core/config.js';
import { definitionOf } from '../../src/core/definition.js';
import { canonicalArgv, runnerLength, scriptArgv, scriptForms, scriptRun } from '../../src/core/packageManagerGrammar.js';

/*
 * The package-manager grammar that init, the hook's matcher and `vouch run`
 * share, tested directly, and the promise that init and the matcher read a
 * command the same way.
 */

const words = (command: string) => command.split(' ');

describe('scriptRun reads the script a package-manager command runs', () => {
  const cases: Array<[string, { packageManager: PackageManagerName; script: string; args: string[] } | null]> = [
    ['npm run lint', { packageManager: 'npm', script: 'lint', args: [] }],
    ['npm run-script lint', { packageManager: 'npm', script: 'lint', args: [] }],
    ['npm rum lint', { packageManager: 'npm', script: 'lint', args: [] }],
    ['npm urn lint -- --fix', { packageManager: 'npm', script: 'lint', args: ['--', '--fix'] }],
    ['npm test', { packageManager: 'npm', script: 'test', args: [] }],
    ['npm t', { packageManager: 'npm', script: 'test', args: [] }],
    ['npm tst -- -t x', { packageManager: 'npm', script: 'test', args: ['--', '-t', 'x'] }],
    ['npm start', { packageManager: 'npm', script: 'start', args: [] }],
    ['pnpm run-script lint', { packageManager: 'pnpm', script: 'lint', args: [] }],
    ['pnpm t', { packageManager: 'pnpm', script: 'test', args: [] }],
    ['pnpm tst', { packageManager: 'pnpm', script: 'test', args: [] }],
    ['pnpm lint', { packageManager: 'pnpm', script: 'lint', args: [] }],
    ['yarn lint --max-warnings 0', { packageManager: 'yarn', script: 'lint', args: ['--max-warnings', '0'] }],
    ['yarn test', { packageManager: 'yarn', script: 'test', args: [] }],
    ['bun run test', { packageManager: 'bun', script: 'test', args: [] }],
    ['bun lint', { packageManager: 'bun', script: 'lint', args: [] }],
    // bun has no test alias: `bun t` is the short form of a script named "t".
    ['bun t', { packageManager: 'bun', script: 't', args: [] }],
    // Not a script: another command, an option where the script goes, or no such alias for this package manager.
    ['npm lint', null],
    ['npm run', null],
    ['npm run --silent lint', null],
    ['npm --prefix x test', null],
    ['npm install', null],
    ['pnpm install', null],
    ['pnpm exec tsc', null],
    ['yarn run-script lint', null],
    ['yarn rum lint', null],
    ['bun run-script lint', null],
    ['bun test', null],
    ['bun build', null],
    ['npx lint', null],
    ['make lint', null],
  ];
  const scripts = { lint: 'eslint .', test: 'vitest run', build: 'vite build', t: 'echo t' };
  for (const [command, expected] of cases) {
    it(command, () => {
      expect(scriptRun(words(command), scripts)).toEqual(expected);
    });
  }

  it('takes the short form only for a script that exists, when told the scripts', () => {
    expect(scriptRun(['pnpm', 'e2e'], { lint: 'eslint .' })).toBeNull();
    expect(scriptRun(['pnpm', 'e2e'])).toEqual({ packageManager: 'pnpm', script: 'e2e', args: [] });
  });
});

describe('scriptForms and scriptArgv', () => {
  it('gives every form in words that scriptRun reads back as the same script, with no arguments', () => {
    for (const packageManager of PACKAGE_MANAGERS) {
      for (const script of ['lint', 'test', 'install', 'why', 'e2e', 't', 'build', 'start']) {
        for (const form of [...scriptForms(script, packageManager), scriptArgv(packageManager, script)]) {
          expect(scriptRun(form), form.join(' ')).toEqual({ packageManager, script, args: [] });
        }
      }
    }
  });

  it('leaves out a short form that would run the package manager\'s own command', () => {
    expect(scriptForms('t', 'pnpm')).toEqual([['pnpm', 'run', 't']]);
    expect(scriptForms('install', 'pnpm')).toEqual([['pnpm', 'run', 'install']]);
    expect(scriptForms('test', 'pnpm')).toEqual([['pnpm', 'run', 'test'], ['pnpm', 'test']]);
    expect(scriptForms('test', 'bun')).toEqual([['bun', 'run', 'test']]);
    expect(scriptForms('lint', 'npm')).toEqual([['npm', 'run', 'lint']]);
  });
});

describe('canonicalArgv', () => {
  const cases: Array<[string, string]> = [
    ['npm run-script lint', 'npm run lint'],
    ['npm rum lint', 'npm run lint'],
    ['npm urn lint -- --fix', 'npm run lint -- --fix'],
    ['npm t', 'npm test'],
    ['npm tst', 'npm test'],
    ['pnpm run-script lint', 'pnpm run lint'],
    ['pnpm t', 'pnpm test'],
    ['pnpm tst', 'pnpm test'],
    // Unchanged: already canonical, not an alias for this package manager, or not a package manager.
    ['npm run lint', 'npm run lint'],
    ['npm test', 'npm test'],
    ['yarn run-script lint', 'yarn run-script lint'],
    ['yarn t', 'yarn t'],
    ['bun run-script lint', 'bun run-script lint'],
    ['bun t', 'bun t'],
    ['npx run-script lint', 'npx run-script lint'],
    ['vouch run lint', 'vouch run lint'],
    ['npm', 'npm'],
  ];
  for (const [command, canonical] of cases) {
    it(`${command} → ${canonical}`, () => {
      expect(canonicalArgv(words(command))).toEqual(words(canonical));
    });
  }
});

describe('runnerLength', () => {
  const cases: Array<[string, number]> = [
    ['npx tsc', 1],
    ['pnpx tsc', 1],
    ['bunx tsc', 1],
    ['npm exec tsc', 2],
    ['npm x tsc', 2],
    ['pnpm exec tsc', 2],
    ['pnpm dlx tsc', 2],
    ['yarn dlx tsc', 2],
    ['yarn exec tsc', 2],
    ['bun x tsc', 2],
    ['tsc --noEmit', 0],
    ['pnpm x tsc', 0],
    ['bun exec tsc', 0],
    ['npm run tsc', 0],
  ];
  for (const [command, length] of cases) {
    it(command, () => {
      expect(runnerLength(words(command))).toBe(length);
    });
  }
});

const CHECKS: CheckConfig[] = [
  { name: 'lint', kind: 'lint', script: 'lint' },
  { name: 'test', kind: 'test', script: 'test' },
  { name: 'tee', kind: 'custom', script: 't' },
];
const SCRIPTS = { lint: 'eslint .', test: 'vitest run', t: 'node scripts/t.mjs' };

function target(packageManager: PackageManagerName): MatchTarget {
  return { root: '/repo', cwd: '/repo', packageManager, scripts: SCRIPTS, checks: CHECKS.map((check) => definitionOf(check, packageManager)) };
}

const matched = (command: string, packageManager: PackageManagerName) => matchCommand(command, target(packageManager))?.parts.map((part) => part.checks[0]) ?? null;

describe('the matcher reads package-manager aliases as what they run', () => {
  const matching: Array<[string, PackageManagerName, string]> = [
    ['npm run-script lint', 'npm', 'lint'],
    ['npm rum lint', 'npm', 'lint'],
    ['npm urn lint', 'npm', 'lint'],
    ['npm run-script test', 'npm', 'test'],
    ['npm tst', 'npm', 'test'],
    ['pnpm run-script lint', 'pnpm', 'lint'],
    ['pnpm t', 'pnpm', 'test'],
    ['pnpm tst', 'pnpm', 'test'],
    ['pnpm run t', 'pnpm', 'tee'],
    ['npm run t', 'npm', 'tee'],
  ];
  for (const [command, packageManager, check] of matching) {
    it(`${packageManager}: ${command} is ${check}`, () => {
      expect(matched(command, packageManager)).toEqual([check]);
    });
  }

  const notMatching: Array<[string, PackageManagerName]> = [
    // Another package manager than the one the receipts were made with.
    ['npm run-script lint', 'pnpm'],
    ['pnpm run-script lint', 'npm'],
    // Not an alias for this package manager.
    ['yarn run-script lint', 'yarn'],
    ['bun run-script lint', 'bun'],
    ['bun t', 'bun'],
    // Different arguments are a different command.
    ['npm run-script lint -- --fix', 'npm'],
    ['npm run-script lint --silent', 'npm'],
    ['npm tst -- -t foo', 'npm'],
    ['npm run-script', 'npm'],
    ['npm run-script --silent lint', 'npm'],
    // The alias inside something else.
    ['bash -c "npm run-script lint"', 'npm'],
    ['npm run-script lint | grep -i x', 'npm'],
    ['npm run-script lint | grep x file.txt', 'npm'],
    ['npm run-script lint | grep -e x', 'npm'],
  ];
  for (const [command, packageManager] of notMatching) {
    it(`${packageManager}: ${command} matches nothing`, () => {
      expect(matched(command, packageManager)).toEqual([]);
    });
  }

  it('takes pnpm t for the test script, and yarn t for a script named "t", as each runs them', () => {
    expect(matched('pnpm t', 'pnpm')).toEqual(['test']);
    expect(matched('yarn t', 'yarn')).toEqual(['tee']);
  });

  it('rewrites and denies an alias like the command it stands for', () => {
    const command = 'npm run-script lint 2>&1 | tail -30';
    const match = matchCommand(command, target('npm'))!;
    const rewrite = decideCommand(command, match, new Map(), 0);
    expect(rewrite).toMatchObject({ kind: 'rewrite', command: 'vouch run lint --if-due 2>&1 | tail -30', checks: ['lint'] });
    const current = new Map([['lint', { name: 'lint', freshness: 'CURRENT' as const, result: 'PASS' as const, reuseEligible: true, runId: 'r1', finishedAt: 0, durationMs: 1 }]]);
    expect(decideCommand(command, match, current, 60_000)).toMatchObject({ kind: 'deny', checks: ['lint'] });
  });

  it('matches a command check written with an alias by what it runs', () => {
    const checks = [definitionOf({ name: 'l', kind: 'lint', command: ['npm', 'run-script', 'lint'] }, 'npm')];
    const t = { ...target('npm'), checks };
    expect(matchCommand('npm run-script lint', t)!.parts.map((part) => part.checks[0])).toEqual(['l']);
    expect(matchCommand('npm run lint', t)!.parts.map((part) => part.checks[0])).toEqual(['l']);
  });
});

describe('init and the matcher read a script command the same way', () => {
  // Each command delegates to the "lint" script: init must see it ("check" is left out as made of the lint check; with --all, its
  // kind comes from what it runs), and the matcher must match the lint check.
  const delegating: Array<[string, PackageManagerName]> = [
    ['npm run lint', 'npm'],
    ['npm run-script lint', 'npm'],
    ['npm rum lint', 'npm'],
    ['npm urn lint', 'npm'],
    ['pnpm run-script lint', 'pnpm'],
    ['pnpm lint', 'pnpm'],
    ['yarn run lint', 'yarn'],
    ['yarn lint', 'yarn'],
    ['bun run lint', 'bun'],
  ];
  for (const [command, packageManager] of delegating) {
    it(`${packageManager}: ${command}`, () => {
      const input = {
        packageJson: { scripts: { check: command, lint: 'eslint .' } },
        packageManager: { name: packageManager, lockfile: null },
        hasTsconfig: false,
        tsc: null,
      };
      const proposal = proposeConfig(input);
      expect(proposal.checks.map((p) => p.check.name)).toEqual(['lint']);
      expect(proposal.skipped.find((s) => s.script === 'check')?.reason, 'init sees the delegation').toMatch(/only runs "lint"/);
      const check = proposeConfig({ ...input, all: true }).checks.find((p) => p.check.name === 'check');
      expect(check?.check.kind, 'init sees the delegation').toBe('lint');
      expect(check?.reason).toContain('eslint');
      expect(matched(command, packageManager), 'the matcher sees it').toEqual(['lint']);
    });
  }

  it('neither takes the package manager\'s own command for a script', () => {
    const proposal = proposeConfig({
      packageJson: { scripts: { check: 'pnpm install', install: 'eslint .' } },
      packageManager: { name: 'pnpm', lockfile: null },
      hasTsconfig: false,
      tsc: null,
    });
    expect(proposal.checks.find((p) => p.check.name === 'check')?.check.kind).toBe('custom');
    const checks = [definitionOf({ name: 'install', kind: 'lint', script: 'install' }, 'pnpm')];
    expect(matchCommand('pnpm install', { ...target('pnpm'), checks })!.parts).toEqual([]);
  });
});
