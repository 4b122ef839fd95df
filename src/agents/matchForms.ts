import type { PackageManagerName } from '../core/config.js';
import type { CheckDefinition } from '../core/definition.js';
import { isPackageManager, runnerLength, scriptForms, TOOL_RUNNER_FORMS } from '../core/packageManagerGrammar.js';
import { plainCommand } from '../core/shellWords.js';
import { equivalentToolForms } from './toolEquivalents.js';

/**
 * The exact argv a typed command must have to stand for a check, once both
 * are read in canonical words (`npm run-script x` is `npm run x`: see
 * canonicalArgv). Different arguments are a different command, so a form is
 * compared word for word.
 */
export type CommandForm = readonly string[];

export interface FormsInput {
  packageManager: PackageManagerName | null;
  scripts: Record<string, string> | null;
}

/** Every argv that runs this check: `vouch run`, the script through the package manager, the tool, the command. Package-manager aliases are left to canonicalArgv. */
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
  // A script that runs another script, or a program, through a package manager is not a tool.
  if (isPackageManager(program) || runnerLength(words) > 0) return null;
  const bin = /^(?:\.\/)?node_modules\/\.bin\/([^/]+)$/.exec(program);
  if (bin) return [bin[1]!, ...words.slice(1)];
  // A path names one file; npx or pnpm exec would look the name up elsewhere.
  if (program.includes('/')) return null;
  return words;
}

/**
 * The tool alone, or after a runner that runs the project's own bin (npx, pnpm exec), with exactly
 * its arguments; and each form the tool documents as the same run (toolEquivalents.ts), the same ways.
 */
function toolForms(tool: string[]): CommandForm[] {
  return [tool, ...equivalentToolForms(tool)].flatMap((form) => [form, ...TOOL_RUNNER_FORMS.map((runner) => [...runner, ...form])]);
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
