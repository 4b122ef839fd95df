import { describe, expect, it } from 'vitest';
import { decideCommand, type CheckAnswer } from '../../src/agents/commandDecision.js';
import { matchCommand, type MatchTarget } from '../../src/agents/commandMatch.js';
import { fanOutOf } from '../../src/agents/fanOut.js';
import { shellQuote } from '../../src/agents/shellQuote.js';
import type { PackageManagerName } from '../../src/core/config.js';
import { definitionOf } from '../../src/core/definition.js';
import { isPackageManager } from '../../src/core/packageManagerGrammar.js';
import { CORPUS, TARGETS, type FanOutCase } from '../fixtures/fanout-corpus.js';

/*
 * The fan-out corpus joined to the hook's decisions: each command, quoted so
 * that the shell's words are the corpus's, through matchCommand and
 * decideCommand (both pure), with a package check for every package script.
 * A command the resolver cannot resolve exactly must pass in every state:
 * never a deny, never a rewrite.
 */

const NOW = 1_800_000_000_000;

function target(entry: FanOutCase): { match: MatchTarget; names: Map<string, string> } {
  const base = TARGETS[entry.target ?? 'base'];
  const argv = entry.command.split(' ');
  // The checks run with the project's package manager; a package-manager form typed through another is the resolver's to refuse.
  const packageManager: PackageManagerName = base.packageManager ?? (isPackageManager(argv[0] ?? '') ? (argv[0] as PackageManagerName) : 'pnpm');
  const names = new Map<string, string>();
  const checks = base.workspace.packages.flatMap((pkg) =>
    Object.keys(pkg.scripts).map((script) => {
      names.set(`${pkg.name}\0${script}`, `${pkg.name}#${script}`);
      return definitionOf({ name: `${pkg.name}#${script}`, kind: 'custom', script, package: pkg.dir }, packageManager, base.workspace);
    }),
  );
  const root = '/repo';
  return {
    names,
    match: {
      root,
      cwd: entry.cwd ? `${root}/${entry.cwd}` : root,
      packageManager,
      scripts: base.root?.scripts ? { ...base.root.scripts } : null,
      checks,
      workspace: { ...base.workspace, rootName: base.root?.name ?? base.workspace.rootName ?? null },
      turbo: base.turbo,
      nx: base.nx,
      fanOut: fanOutOf,
      rootExcluded: base.rootExcluded === true,
      yarnVariant: base.yarnVariant ?? null,
    },
  };
}

function answers(names: Iterable<string>, stale: ReadonlySet<string>): Map<string, CheckAnswer> {
  const map = new Map<string, CheckAnswer>();
  for (const name of names) {
    const current = !stale.has(name);
    map.set(name, { name, freshness: current ? 'CURRENT' : 'STALE', result: 'PASS', reuseEligible: current, runId: `run-${name}`, finishedAt: NOW - 60_000, durationMs: 2000 });
  }
  return map;
}

// A corpus row whose root is unknown (no package.json read) cannot be a hook's case: the hook always knows the root's scripts.
const ROWS = CORPUS.filter((entry) => TARGETS[entry.target ?? 'base'].root !== undefined);

describe('fan-out commands through the hook', () => {
  it('joins at least 150 fan-out forms over pnpm, npm, yarn, bun, turbo and nx', () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(150);
    for (const tool of ['pnpm', 'npm', 'yarn', 'bun', 'turbo', 'nx']) expect(ROWS.some((entry) => entry.command.split(' ').includes(tool)), tool).toBe(true);
  });

  it.each(ROWS.map((entry) => [`${entry.target ?? 'base'}${entry.cwd ? ` in ${entry.cwd}` : ''}: ${entry.command}`, entry] as const))('%s', (_label, entry) => {
    const { match: matchTarget, names } = target(entry);
    const command = entry.command === '' ? '' : entry.command.split(' ').map(shellQuote).join(' ');
    const match = matchCommand(command, matchTarget);
    expect(match).not.toBeNull();
    const all = [...names.values()];
    const [program, verb, name, ...rest] = entry.command.split(' ');
    if (program === 'vouch' && verb === 'run' && rest.length === 0 && all.includes(name!)) {
      // Not a fan-out: `vouch run CHECK` names its check, as at the root.
      expect(match!.parts.map((part) => part.checks)).toEqual([[name]]);
      return;
    }
    if (entry.expected === null || entry.expected.kind !== 'packages') {
      // Unresolved, or no workspace command: it runs as typed whatever the receipts say.
      expect(match!.parts).toEqual([]);
      for (const stale of [new Set<string>(), new Set(all)]) expect(decideCommand(command, match!, answers(all, stale), NOW).kind).toBe('pass');
      return;
    }
    const { packages, script } = entry.expected;
    const expected = packages.map((pkg) => names.get(`${pkg}\0${script}`)!);
    expect(match!.parts.map((part) => part.checks)).toEqual([expected]);
    expect(match!.onlyChecks).toBe(true);

    const denied = decideCommand(command, match!, answers(all, new Set()), NOW);
    expect(denied.kind).toBe('deny');
    if (denied.kind === 'deny') for (const name of expected) expect(denied.reason).toContain(`"${name}" PASSED in run run-${name}`);

    // One package changed: only its check is named in the rewrite.
    const changed = expected[expected.length - 1]!;
    const rewritten = decideCommand(command, match!, answers(all, new Set([changed])), NOW);
    expect(rewritten).toMatchObject({ kind: 'rewrite', command: `vouch run ${shellQuote(changed)} --if-due` });
  });

  it("a package manager's setting in front of a resolved fan-out makes it run as typed", () => {
    const resolved = ROWS.filter((entry) => entry.expected?.kind === 'packages' && !entry.command.startsWith('vouch '));
    expect(resolved.length).toBeGreaterThan(50);
    for (const entry of resolved) {
      const { match: matchTarget } = target(entry);
      const command = entry.command.split(' ').map(shellQuote).join(' ');
      expect(matchCommand(command, matchTarget)!.parts.length, command).toBe(1);
      for (const setting of ['npm_config_workspace=packages/a', 'NPM_CONFIG_IGNORE_SCRIPTS=true', 'pnpm_config_filter=a', 'YARN_IGNORE_SCRIPTS=1', 'BUN_CONFIG_SILENT=1']) {
        expect(matchCommand(`${setting} ${command}`, matchTarget)!.parts, `${setting} ${command}`).toEqual([]);
      }
    }
  });
});
