import type { PackageManagerName } from '../core/config.js';
import type { CheckDefinition } from '../core/definition.js';
import { plainCommand } from '../core/shellWords.js';

/**
 * The exact argv a typed command must have to stand for a check. Different
 * arguments are a different command, so a form is compared word for word.
 */
export type CommandForm = readonly string[];

export interface FormsInput {
  packageManager: PackageManagerName | null;
  scripts: Record<string, string> | null;
}

/**
 * Commands each package manager runs itself before looking for a script of
 * that name: `pnpm install` installs even when a script "install" exists, so
 * for such a script only the `run` form runs it. `test` is left out: every
 * one of these runs the "test" script for `X test` (except bun, whose
 * `bun test` is its own test runner and has no short form here at all).
 */
const OWN_COMMANDS: Record<'pnpm' | 'yarn', ReadonlySet<string>> = {
  pnpm: new Set(
    'add i install ln link rm remove un uninstall unlink up update upgrade audit licenses list ls outdated why exec run dlx create init publish pack patch patch-commit patch-remove rebuild rb prune fetch store root bin env setup server config c get set import deploy doctor dedupe self-update approve-builds ignored-builds cat-file cat-index find-hash sbom help start restart stop'.split(' '),
  ),
  yarn: new Set(
    'add audit autoclean bin cache check config create dedupe dlx exec explain generate-lock-entry global help import info init install licenses link list login logout node npm outdated owner pack patch patch-commit plugin policies publish rebuild remove run search set stage tag team unlink unplug up upgrade upgrade-interactive version versions why workspace workspaces constraints start restart stop'.split(' '),
  ),
};

const PACKAGE_MANAGERS = new Set(['npm', 'pnpm', 'yarn', 'bun', 'npx', 'pnpx', 'bunx']);

/** Every argv that runs this check: `vouch run`, the script through the package manager, the tool, the command. */
export function checkForms(check: CheckDefinition, input: FormsInput): CommandForm[] {
  const forms: CommandForm[] = [['vouch', 'run', check.name]];
  if (check.script !== null) {
    forms.push(...scriptForms(check.script, check.packageManager ?? input.packageManager ?? 'npm'));
    const body = input.scripts?.[check.script];
    const tool = body === undefined ? null : toolOfScript(body);
    if (tool) forms.push(...toolForms(tool));
  }
  if (check.command !== null && check.command.length > 0) {
    forms.push(check.command);
    const tool = toolOfArgv(check.command);
    if (tool) forms.push(...toolForms(tool));
  }
  return dedupe(forms);
}

/** How the project's package manager runs script S. */
export function scriptForms(script: string, packageManager: PackageManagerName): CommandForm[] {
  switch (packageManager) {
    case 'npm':
      return script === 'test' ? [['npm', 'run', 'test'], ['npm', 'test'], ['npm', 't']] : [['npm', 'run', script]];
    case 'pnpm':
    case 'yarn':
      return OWN_COMMANDS[packageManager].has(script) ? [[packageManager, 'run', script]] : [[packageManager, 'run', script], [packageManager, script]];
    case 'bun':
      return [['bun', 'run', script]];
  }
}

/**
 * The tool a script runs, when the script is one plain command: `tsc --noEmit`
 * yields that argv, and `npx tsc --noEmit` the same. A script that chains,
 * quotes, expands or sets variables has no single tool.
 */
export function toolOfScript(body: string): string[] | null {
  const argv = plainCommand(body);
  return argv === null ? null : toolOfArgv(argv);
}

function toolOfArgv(argv: readonly string[]): string[] | null {
  let words = [...argv];
  if (words[0] === 'npx') words = words.slice(1);
  const program = words[0];
  // npx with options, or nothing after it, is not a plain tool call.
  if (program === undefined || program.startsWith('-') || program.includes('=')) return null;
  // A script that runs another script through a package manager is not a tool.
  if (PACKAGE_MANAGERS.has(program)) return null;
  const bin = /^(?:\.\/)?node_modules\/\.bin\/([^/]+)$/.exec(program);
  if (bin) return [bin[1]!, ...words.slice(1)];
  // A path names one file; npx or pnpm exec would look the name up elsewhere.
  if (program.includes('/')) return null;
  return words;
}

/** The tool alone, after npx, or through pnpm exec, with exactly its arguments. */
function toolForms(tool: string[]): CommandForm[] {
  return [tool, ['npx', ...tool], ['pnpm', 'exec', ...tool]];
}

function dedupe(forms: CommandForm[]): CommandForm[] {
  const seen = new Set<string>();
  return forms.filter((form) => {
    const key = JSON.stringify(form);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Whether an environment variable name is one of the patterns (`NAME` or `PREFIX*`). */
export function envNameMatches(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern));
}
