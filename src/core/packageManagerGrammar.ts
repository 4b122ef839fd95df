import { PACKAGE_MANAGERS, type PackageManagerName } from './config.js';

/*
 * How package managers run scripts and installed programs: the one grammar
 * that `vouch init` (reading scripts), command matching (the hook and
 * intercept) and `vouch run` (spawning a script check) share, so that they
 * cannot disagree about what a command line runs. Pure: it reads argv that a
 * caller has already split into words.
 */

/**
 * The commands that run the script named next: `npm run-script` and its
 * aliases (https://docs.npmjs.com/cli/commands/npm-run-script), `pnpm run`
 * and its alias (https://pnpm.io/cli/run); yarn and bun know only `run`.
 */
export const RUN_COMMANDS: Readonly<Record<PackageManagerName, readonly string[]>> = {
  npm: ['run', 'run-script', 'rum', 'urn'],
  pnpm: ['run', 'run-script'],
  yarn: ['run'],
  bun: ['run'],
};

/**
 * The commands that run the "test" script, taking no script name:
 * https://docs.npmjs.com/cli/commands/npm-test and https://pnpm.io/cli/test
 * (both `test`, `t`, `tst`), `yarn test`. `bun test` is bun's own test
 * runner, not the script.
 */
export const TEST_COMMANDS: Readonly<Record<PackageManagerName, readonly string[]>> = {
  npm: ['test', 't', 'tst'],
  pnpm: ['test', 't', 'tst'],
  yarn: ['test'],
  bun: [],
};

/**
 * Commands each package manager runs itself before looking for a script of
 * that name: `pnpm install` installs even when a script "install" exists,
 * so for such a script only the `run` form runs it. npm has no short form at
 * all. Bun's built-in commands take precedence over scripts as well
 * (https://bun.sh/docs/cli/run).
 */
const OWN_COMMANDS: Readonly<Record<'pnpm' | 'yarn' | 'bun', ReadonlySet<string>>> = {
  pnpm: new Set(
    'add i install ln link rm remove un uninstall unlink up update upgrade audit licenses list ls outdated why exec run run-script dlx create init publish pack patch patch-commit patch-remove rebuild rb prune fetch store root bin env setup server config c get set import deploy doctor dedupe self-update approve-builds ignored-builds cat-file cat-index find-hash sbom help start restart stop test t tst'.split(' '),
  ),
  yarn: new Set(
    'add audit autoclean bin cache check config create dedupe dlx exec explain generate-lock-entry global help import info init install licenses link list login logout node npm outdated owner pack patch patch-commit plugin policies publish rebuild remove run search set stage tag team unlink unplug up upgrade upgrade-interactive version versions why workspace workspaces constraints start restart stop test'.split(' '),
  ),
  bun: new Set(
    'run test x repl exec install i add a remove rm update outdated audit link unlink publish patch patch-commit pm info build init create c upgrade feedback why help completions discord getcompletes dev'.split(' '),
  ),
};

/** Whether `PM NAME` runs the package manager's own command NAME rather than a script of that name. */
export function isOwnCommand(packageManager: PackageManagerName, name: string): boolean {
  if (packageManager === 'npm') return true; // npm runs a script only through run-script, test, start, stop, restart
  return OWN_COMMANDS[packageManager].has(name);
}

export function isPackageManager(program: string): program is PackageManagerName {
  return (PACKAGE_MANAGERS as readonly string[]).includes(program);
}

/** The argv `vouch run` spawns for a script check. */
export function scriptArgv(packageManager: PackageManagerName, script: string): string[] {
  return [packageManager, 'run', script];
}

/**
 * The argv that run script S, with no arguments, through this package
 * manager, in their canonical words (see canonicalArgv): `PM run S`,
 * `PM test` for "test", and the short form `pnpm S` / `yarn S` unless S is
 * one of their own commands. Bun's short form is left out: bun would also
 * run a file or a binary named S.
 */
export function scriptForms(script: string, packageManager: PackageManagerName): string[][] {
  const forms = [[packageManager, 'run', script]];
  if (script === 'test' && TEST_COMMANDS[packageManager].length > 0) forms.push([packageManager, 'test']);
  if ((packageManager === 'pnpm' || packageManager === 'yarn') && !isOwnCommand(packageManager, script)) forms.push([packageManager, script]);
  return forms;
}

/**
 * The argv with a package manager's alias replaced by the command it stands
 * for: `npm run-script lint`, `npm rum lint` and `pnpm run-script lint` read
 * as `… run lint`; `npm t`, `npm tst`, `pnpm t` and `pnpm tst` as `… test`.
 * Each pair runs the same thing with the same arguments, so two argv that
 * agree here run the same command. Any other argv is returned as it is.
 */
export function canonicalArgv(argv: readonly string[]): readonly string[] {
  const [program, command, ...rest] = argv;
  if (program === undefined || command === undefined || !isPackageManager(program)) return argv;
  if (command !== 'run' && RUN_COMMANDS[program].includes(command)) return [program, 'run', ...rest];
  if (command !== 'test' && TEST_COMMANDS[program].includes(command)) return [program, 'test', ...rest];
  return argv;
}

/** A script a package-manager command line runs, and the arguments it passes on. */
export interface ScriptRun {
  packageManager: PackageManagerName;
  script: string;
  args: string[];
}

/**
 * The script an argv runs through a package manager: `npm run lint`,
 * `npm run-script lint`, `npm t`, `pnpm lint`, `npm start`. The short form
 * `pnpm S`, `yarn S` or `bun S` counts when S is not the package manager's
 * own command and, if `scripts` is given, S is one of them. Null for
 * anything else.
 */
export function scriptRun(argv: readonly string[], scripts?: Readonly<Record<string, string>>): ScriptRun | null {
  const [program, first, ...rest] = argv;
  if (program === undefined || !isPackageManager(program)) return null;
  if (first === undefined || first.startsWith('-')) return null;
  if (RUN_COMMANDS[program].includes(first)) {
    const [script, ...args] = rest;
    if (script === undefined || script.startsWith('-')) return null;
    return { packageManager: program, script, args };
  }
  if (TEST_COMMANDS[program].includes(first)) return { packageManager: program, script: 'test', args: rest };
  // `npm start`, `pnpm start` and `yarn start` run the start script; for bun it is the short form.
  if (first === 'start') return { packageManager: program, script: 'start', args: rest };
  if (program !== 'npm' && !isOwnCommand(program, first) && (scripts === undefined || first in scripts)) {
    return { packageManager: program, script: first, args: rest };
  }
  return null;
}

/**
 * Programs that run another program named after them: the package runners
 * (https://docs.npmjs.com/cli/commands/npx, https://pnpm.io/cli/exec,
 * https://pnpm.io/cli/dlx, https://yarnpkg.com/cli/exec,
 * https://yarnpkg.com/cli/dlx, https://bun.sh/docs/pm/bunx).
 */
const RUNNERS: readonly (readonly string[])[] = [
  ['npx'], ['npm', 'exec'], ['npm', 'x'], ['pnpx'], ['pnpm', 'exec'], ['pnpm', 'dlx'], ['yarn', 'exec'], ['yarn', 'dlx'], ['bunx'], ['bun', 'x'],
];

/** How many leading words of argv are a package runner (`npx`, `pnpm exec`, `yarn dlx`, `bun x`, …); 0 when none. */
export function runnerLength(argv: readonly string[]): number {
  for (const words of RUNNERS) if (words.every((word, index) => argv[index] === word)) return words.length;
  return 0;
}

/**
 * The runners a typed command may put in front of a check's tool and still
 * stand for it: `npx` runs the project's installed bin when there is one,
 * and `pnpm exec` only ever does. The others are not matched: `npm exec`
 * reads the flags after the program name as its own
 * (https://docs.npmjs.com/cli/commands/npm-exec), `dlx` and `pnpx` always
 * download, and `yarn exec`, `bunx` and `bun x` run it in another way than
 * the check's own PATH lookup.
 */
export const TOOL_RUNNER_FORMS: readonly (readonly string[])[] = [['npx'], ['pnpm', 'exec']];
