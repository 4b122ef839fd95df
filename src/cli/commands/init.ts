import { existsSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { init, type InitResult } from '../../api/init.js';
import { VouchError } from '../../core/errors.js';
import type { InitDocument } from '../../core/json/init.js';
import type { DetectedPackageManager } from '../../exec/detectPackageManager.js';
import { writeJson, type CliIo } from '../io.js';
import { parseCommand } from '../options.js';

export const help = `Usage: vouch init [--dry-run] [--json] [--config FILE] [--state-dir DIR]

Proposes checks for this project and writes them to vouch.config.json.

It finds the project root (the nearest directory upward with a package.json),
detects the package manager (package.json "packageManager", else the lockfile,
else npm), and proposes one check for each script that verifies something:
by its name (typecheck, type-check, tsc, lint, test, test:*, build, check) or
by the tool it runs (tsc, vue-tsc, eslint, oxlint, biome, prettier --check,
vitest, jest, mocha, node --test, ava). Watch and dev modes, --fix/--write
scripts and lifecycle scripts are left out, with the reason shown. With a
tsconfig.json but no typecheck script, it proposes "tsc --noEmit".
Where a run can be traced (Linux, with strace), each check is proposed
"traced": its receipts hold what its runs really read. Elsewhere they are
"declared", bound to their inputs globs, and init says why once.

It never overwrites a config: when one exists it prints the proposal and
writes nothing. Otherwise it writes the config and creates the state dir
(.vouch/) with its own .gitignore, so your .gitignore is not touched.

Options:
  --dry-run          print the proposal; write nothing (no config, no .vouch/)
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

Exit codes: 0 proposed (written, dry run, or a config already existed);
2 no package.json, ambiguous lockfiles, nothing to check, or a usage error.
Every config field is described in docs/config.md.
`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand('init', argv, { 'dry-run': { type: 'boolean', default: false } });
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
    package_manager: { name: pm.name, source: pm.source, lockfile: pm.lockfile, variant: pm.variant ?? null },
    checks: result.proposal.checks.map((proposed) => ({
      name: proposed.check.name,
      kind: proposed.check.kind,
      script: proposed.check.script ?? null,
      command: proposed.check.command ?? null,
      script_command: proposed.scriptCommand,
      reason: proposed.reason,
      inputs_note: proposed.inputsNote,
    })),
    skipped: result.proposal.skipped,
    notes: result.proposal.notes,
    config: result.proposal.config,
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
  lines.push('Proposed checks:');
  for (const proposed of result.proposal.checks) {
    const { check } = proposed;
    const runs =
      check.script !== undefined
        ? `${pm.name} run ${check.script}${proposed.scriptCommand ? `  ->  ${proposed.scriptCommand}` : ''}`
        : (check.command ?? []).join(' ');
    lines.push(`  ${check.name} (${check.kind}${check.mode === 'traced' ? ', traced' : ''}): ${runs}`);
    lines.push(`      why: ${proposed.reason}`);
    lines.push(`      ${proposed.inputsNote}`);
    if (check.inputs) lines.push(`      inputs: ${check.inputs.join(', ')}`);
    if (check.installed) lines.push(`      installed: ${check.installed.join(', ')}`);
  }
  if (result.proposal.skipped.length > 0) {
    lines.push('');
    lines.push('Not proposed:');
    for (const skipped of result.proposal.skipped) lines.push(`  ${skipped.script}: ${skipped.reason}`);
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
