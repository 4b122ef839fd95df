import { existsSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { failureText, init, type InitResult } from '../../api/init.js';
import type { ProposedCheck, VerifyOutcome } from '../../api/initProposal.js';
import { VouchError } from '../../core/errors.js';
import type { InitDocument } from '../../core/json/init.js';
import type { DetectedPackageManager } from '../../exec/detectPackageManager.js';
import { writeJson, type CliIo } from '../io.js';
import { parseCommand } from '../options.js';

export const help = `Usage: vouch init [--dry-run] [--all] [--verify] [--json] [--config FILE] [--state-dir DIR]

Proposes checks for this project and writes them to vouch.config.json.

It finds the project root (the nearest directory upward with a package.json),
detects the package manager (package.json "packageManager", else the lockfile,
else npm), and proposes one check for each script that verifies something:
by its name (typecheck, type-check, tsc, lint, test, test:*, build, check) or
by the tool it runs (tsc, vue-tsc, eslint, oxlint, biome, prettier --check,
vitest, jest, mocha, node --test, ava). It leaves out, with the reason shown,
what verifies nothing or not the tree alone: watch and dev modes, --fix and
--write forms, cache-clearing and trace forms (jest --clearCache,
tsc --generateTrace), tsc --noCheck, end-to-end suites that need a browser or
a server (playwright test, cypress run, vitest --browser, wdio,
start-server-and-test), and scripts that only run other scripts that are
checks themselves ("npm run lint && npm run test": its parts are proposed).
Lifecycle scripts and npm's placeholder test are never proposed.

With a tsconfig.json but no typecheck script, it proposes "tsc --noEmit",
marked "invented" and "unverified": the project has no script for it, and
only --verify shows that it passes. A check that reads build output (tsc
beside project references, packages whose "types" point into dist/) is
proposed after the build that writes it; init says so.

In a workspace (pnpm-workspace.yaml, or "workspaces" in package.json) it
also proposes each package's scripts, judged the same way, as checks named
PACKAGE#SCRIPT (@scope/a#test) with "package": its directory. Root scripts
that only run the packages' scripts (pnpm -r test, turbo run test,
npm test --workspaces, nx run-many -t test) are left out.
Where a run can be traced (Linux, with strace), each check is proposed
"traced": its receipts hold what its runs really read. Elsewhere they are
"declared", bound to their inputs globs, and init says why once.

It never overwrites a config: when one exists it prints the proposal and
writes nothing. Otherwise it writes the config and creates the state dir
(.vouch/) with its own .gitignore, so your .gitignore is not touched.

Options:
  --dry-run          print the proposal; write nothing (no config, no .vouch/)
  --all              propose the scripts left out by default too (each says
                     why it would have been left out); never lifecycle scripts
  --verify           run each proposed check once first, in the config's
                     order: an invented check that fails is dropped, a script
                     that fails is flagged, each with its first output lines.
                     Checks run as vouch run runs them, so a build writes its
                     output; nothing is recorded
  --config FILE      write the config here instead; the root is the nearest
                     directory with a package.json at or above FILE's folder
  --state-dir DIR    create the state dir here (default: .vouch/ at the root)
  --json             print the result as JSON (schema 1)
  -h, --help         show this help

Examples:
  vouch init                                  write vouch.config.json
  vouch init --dry-run                        see what it would write
  vouch init --config vouch.proposed.json     compare with an existing config
  vouch init --json --dry-run                 the proposal, machine-readable
  vouch init --verify                         try each check before writing
  vouch init --all --dry-run                  see every script as a check

Exit codes: 0 proposed (written, dry run, or a config already existed);
2 no package.json, ambiguous lockfiles, nothing to check, or a usage error.
Every config field is described in docs/config.md.
`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand('init', argv, {
    'dry-run': { type: 'boolean', default: false },
    all: { type: 'boolean', default: false },
    verify: { type: 'boolean', default: false },
  });
  if (positionals.length > 0) {
    throw new VouchError('usage', `vouch init takes no arguments, but got ${positionals.map((p) => `"${p}"`).join(' ')}. See "vouch init --help".`);
  }
  if (values.root !== undefined) {
    throw new VouchError('usage', 'vouch init finds the root itself (the nearest package.json) and writes it into the config; leave --root out, and run init there, or edit "root" afterwards');
  }
  const result = await init({
    cwd: io.cwd,
    config: values.config,
    stateDir: values['state-dir'],
    dryRun: values['dry-run'],
    all: values.all,
    verify: values.verify,
    env: io.env,
    // Progress goes to stderr: stdout stays the proposal (and parseable under --json).
    onVerify: ({ name, outcome }) => {
      if (outcome === null) io.stderr.write(`vouch init --verify: running ${name}...\n`);
      else io.stderr.write(`vouch init --verify: ${name} ${outcome.passed ? 'passed' : 'FAILED'} (${(outcome.durationMs / 1000).toFixed(1)} s)\n`);
    },
  });
  if (values.json) writeJson(io, toJson(result));
  else io.stdout.write(renderHuman(result, io.cwd));
  return 0;
}

function toJson(result: InitResult): InitDocument {
  const pm = result.packageManager;
  return {
    schema: 1,
    root: result.root,
    config_path: result.configPath,
    state_dir: result.stateDir,
    written: result.written,
    existing: result.existing,
    dry_run: result.dryRun,
    all: result.all,
    verify: result.verify,
    package_manager: { name: pm.name, source: pm.source, lockfile: pm.lockfile, variant: pm.variant ?? null },
    checks: result.proposal.checks.map((proposed) => ({
      name: proposed.check.name,
      kind: proposed.check.kind,
      script: proposed.check.script ?? null,
      command: proposed.check.command ?? null,
      script_command: proposed.scriptCommand,
      package: proposed.packageName === null ? null : { name: proposed.packageName, dir: proposed.check.package ?? '' },
      reason: proposed.reason,
      inputs_note: proposed.inputsNote,
      invented: proposed.invented,
      unverified: proposed.invented && proposed.verify === null,
      needs_first: proposed.needsFirst,
      verify: proposed.verify === null ? null : verifyJson(proposed.verify),
    })),
    skipped: result.proposal.skipped.map((skipped) => ({ script: skipped.script, package: skipped.package, reason: skipped.reason, proposed_by_all: skipped.overridable })),
    dropped: result.proposal.dropped.map((dropped) => ({ name: dropped.name, command: dropped.command, reason: dropped.reason, verify: verifyJson(dropped.verify) })),
    notes: result.proposal.notes,
    config: result.proposal.config,
  };
}

function verifyJson(outcome: VerifyOutcome) {
  return {
    passed: outcome.passed,
    exit_code: outcome.exitCode,
    signal: outcome.signal,
    error: outcome.error,
    duration_ms: outcome.durationMs,
    output_head: outcome.outputHead,
  };
}

function renderHuman(result: InitResult, cwd: string): string {
  const show = (path: string) => {
    const rel = relative(cwd, path);
    return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? path : rel;
  };
  const pm = result.packageManager;
  const lines: string[] = [];
  lines.push(`Project root: ${result.root}`);
  lines.push(`Package manager: ${pmName(pm)}, ${pmWhy(pm, result.root)}`);
  lines.push('');
  const rootChecks = result.proposal.checks.filter((p) => p.packageName === null);
  const packageChecks = result.proposal.checks.filter((p) => p.packageName !== null);
  lines.push(rootChecks.length > 0 ? 'Proposed checks:' : 'Proposed checks: none at the root');
  for (const proposed of rootChecks) {
    const { check } = proposed;
    const runs =
      check.script !== undefined
        ? `${pm.name} run ${check.script}${proposed.scriptCommand ? `  ->  ${proposed.scriptCommand}` : ''}`
        : (check.command ?? []).join(' ');
    lines.push(`  ${check.name} (${checkTags(proposed).join(', ')}): ${runs}`);
    lines.push(`      why: ${proposed.reason}`);
    lines.push(`      ${proposed.inputsNote}`);
    if (check.inputs) lines.push(`      inputs: ${check.inputs.join(', ')}`);
    if (check.installed) lines.push(`      installed: ${check.installed.join(', ')}`);
    lines.push(...checkFooter(proposed, '      '));
  }
  if (packageChecks.length > 0) {
    lines.push('');
    lines.push(`Package checks (each runs "${pm.name} run SCRIPT" in its package's directory; inputs: the package, the packages it depends on, the root's shared config):`);
    for (const [name, group] of groupBy(packageChecks, (p) => p.packageName!)) {
      lines.push(`  ${name} (${group[0]!.check.package}):`);
      for (const proposed of group) {
        lines.push(`    ${proposed.check.name} (${checkTags(proposed).join(', ')}): ${proposed.scriptCommand ?? ''}`);
        // Each line says what runs; why is worth a line only when --all overrode a reason to leave it out.
        if (proposed.reason.includes('--all')) lines.push(`        why: ${proposed.reason}`);
        lines.push(...checkFooter(proposed, '        '));
      }
    }
  }
  if (result.proposal.skipped.length > 0) {
    lines.push('');
    lines.push(`Not proposed${result.all || !result.proposal.skipped.some((skipped) => skipped.overridable) ? '' : ' (vouch init --all proposes all but lifecycle scripts)'}:`);
    for (const [pkg, group] of groupBy(result.proposal.skipped, (s) => s.package ?? '')) {
      const indent = pkg === '' ? '  ' : '    ';
      if (pkg !== '') lines.push(`  ${pkg}:`);
      for (const skipped of group) lines.push(`${indent}${skipped.script}: ${skipped.reason}`);
    }
  }
  if (result.proposal.dropped.length > 0) {
    lines.push('');
    lines.push('Dropped by --verify (invented checks that fail on this tree):');
    for (const dropped of result.proposal.dropped) {
      lines.push(`  ${dropped.name}: ${dropped.command.join(' ')}: ${dropped.reason}`);
      for (const line of dropped.verify.outputHead) lines.push(`      | ${line}`);
    }
  }
  for (const note of result.proposal.notes) {
    lines.push('');
    lines.push(`Note: ${note}`);
  }
  lines.push('');

  const target = show(result.configPath);
  if (result.written) {
    lines.push(`Wrote ${target}.`);
    lines.push(
      `Created ${show(result.stateDir)}/ for receipts, with its own .gitignore ("*"), so your .gitignore is untouched.`,
    );
    lines.push('Review the checks above; edit the file to change them (docs/config.md describes every field).');
    lines.push('');
    lines.push('Next steps:');
    lines.push('  vouch run       run every check once and record its receipt');
    lines.push('  vouch status    see whether each receipt still applies');
  } else {
    if (result.existing) {
      lines.push(`${target} already exists, so nothing was written; it is left exactly as it was.`);
    } else {
      lines.push(`Dry run: nothing was written (no ${target}, no ${show(result.stateDir)}/).`);
    }
    lines.push(`The proposal for ${target}:`);
    lines.push('');
    lines.push(result.configText.trimEnd());
    lines.push('');
    if (result.existing) {
      const alternative = show(join(dirname(result.configPath), freeProposalName(result.configPath)));
      lines.push(`To write the proposal next to it for comparison: vouch init --config ${alternative}`);
    } else {
      lines.push(`To write it: vouch init${result.configPath === join(result.root, 'vouch.config.json') ? '' : ` --config ${target}`}`);
    }
  }
  return lines.join('\n') + '\n';
}

function checkTags(proposed: ProposedCheck): string[] {
  const tags: string[] = [proposed.check.kind];
  if (proposed.check.mode === 'traced') tags.push('traced');
  if (proposed.invented) tags.push('invented');
  if (proposed.invented && proposed.verify === null) tags.push('unverified');
  if (proposed.verify !== null) tags.push(proposed.verify.passed ? 'verified' : 'FAILED under --verify');
  return tags;
}

/** What follows a check's lines: the builds it runs after, and a failure's first output lines. */
function checkFooter(proposed: ProposedCheck, indent: string): string[] {
  const lines: string[] = [];
  if (proposed.needsFirst.length > 0) {
    const first = proposed.needsFirst.length > 5 ? `${proposed.needsFirst.slice(0, 5).join(', ')} and ${proposed.needsFirst.length - 5} more` : proposed.needsFirst.join(', ');
    lines.push(`${indent}after: ${first} (it reads ${proposed.needsFirst.length === 1 ? 'its' : 'their'} build output)`);
  }
  if (proposed.verify !== null && !proposed.verify.passed) {
    lines.push(`${indent}--verify: ${failureText(proposed.verify)}`);
    for (const line of proposed.verify.outputHead) lines.push(`${indent}  | ${line}`);
  }
  return lines;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

function pmName(pm: DetectedPackageManager): string {
  return pm.variant === undefined ? pm.name : `${pm.name} (${pm.variant === 'berry' ? 'berry, 2+' : 'classic, 1.x'})`;
}

function pmWhy(pm: DetectedPackageManager, root: string): string {
  const where = pm.decidedBy === root ? '' : ` of the workspace root ${pm.decidedBy}`;
  switch (pm.source) {
    case 'packageManager-field':
      return `from the "packageManager" field${where} (${JSON.stringify(pm.field)}) in package.json, which wins over lockfiles${pm.lockfile ? `; lockfile ${pm.lockfile}` : ''}`;
    case 'lockfile':
      return `from the lockfile ${pm.lockfile}${where}`;
    case 'workspace-file':
      return `from pnpm-workspace.yaml${where}: there is no lockfile yet, and only pnpm reads that file`;
    case 'default':
      return 'by default: package.json has no "packageManager" field and there is no lockfile';
  }
}

/** A name for a second config that does not exist yet: vouch.proposed.json, else vouch.proposed-2.json, ... */
function freeProposalName(configPath: string): string {
  const dir = dirname(configPath);
  for (let n = 1; ; n += 1) {
    const name = n === 1 ? 'vouch.proposed.json' : `vouch.proposed-${n}.json`;
    if (name !== basename(configPath) && !existsSync(join(dir, name))) return name;
  }
}
