import type { CheckKind } from '../core/config.js';
import { isPackageManager, runnerLength, scriptRun } from '../core/packageManagerGrammar.js';
import { simpleCommands } from '../core/shellWords.js';
import { fanOutScripts, FAN_OUT_PROGRAMS } from './initFanOut.js';

/*
 * How `vouch init` judges one package.json script: whether it verifies
 * something, what kind of check it is, and when it is left out, why. Pure.
 */

/** A script that looks like a check. `skip` set: left out by default, and why. */
export interface Judgement {
  kind: CheckKind;
  /** Why it is a check, and why this kind. */
  reason: string;
  /** It runs tsc alone (directly or through other scripts), so its inputs can be narrowed. */
  tscOnly: boolean;
  tools: string[];
  /** Programs it runs that vouch does not recognise. */
  unknown: string[];
  /** It runs `tsc -b` (build mode), which writes what project references read. */
  tscBuild: boolean;
  /** It runs tsc without -b, which reads the referenced projects' declaration output. */
  tscPlain: boolean;
  /** Scripts of the same package.json it runs (`npm run lint`), with no arguments passed on. */
  delegates: string[];
  /** Commands it runs itself besides such plain delegations, its pre/post scripts included. */
  ownCommands: number;
  /** Scripts it runs in the workspace's packages (`pnpm -r test`, `turbo run lint test`). */
  fanOut: string[];
  skip: Skip | null;
}

export interface Skip {
  reason: string;
  /** `vouch init --all` proposes it anyway; false for what is no check at all (a lifecycle script, npm's placeholder). */
  overridable: boolean;
}

const KIND_PHRASE: Record<CheckKind, string> = {
  typecheck: 'a type checker',
  lint: 'a linter',
  test: 'a test runner',
  build: 'a build',
  custom: 'a custom check',
};

/** npm lifecycle scripts: they run around installs and publishes, not as checks. */
const LIFECYCLE = new Set([
  'preinstall', 'install', 'postinstall', 'prepare', 'prepublish', 'prepublishOnly', 'publish', 'postpublish',
  'prepack', 'pack', 'postpack', 'preversion', 'version', 'postversion', 'dependencies',
  'prestart', 'start', 'poststart', 'prestop', 'stop', 'poststop', 'prerestart', 'restart', 'postrestart',
]);

export function nameKind(script: string): CheckKind | 'check' | null {
  if (/^(typecheck|type-check|tsc)(:.+)?$/.test(script)) return 'typecheck';
  if (/^lint(:.+)?$/.test(script)) return 'lint';
  if (/^test(:.+)?$/.test(script)) return 'test';
  if (script === 'build') return 'build';
  if (script === 'check') return 'check';
  return null;
}

const WATCH_NAME = /^(dev|start|serve|preview|watch)(:.*)?$|:(watch|dev)$/;

/**
 * Judges one script among its package's scripts. Null when it does not look
 * like a check at all (no check's name, no tool vouch knows).
 */
export function judgeScript(script: string, command: string, scripts: Record<string, string>): Judgement | null {
  const byName = nameKind(script);
  const analysis = analyse(script, scripts);
  if (byName === null && analysis.direct.length === 0) return null;

  const tools = [...new Set(analysis.all.map((use) => use.tool))];
  const checking = analysis.all.filter((use) => use.inert === undefined);
  const toolKinds = [...new Set(checking.map((use) => use.kind))];
  const toolText = tools.length > 0 ? `runs ${tools.join(', ')}` : `runs "${command}"`;
  let kind: CheckKind;
  let reason: string;
  if (byName !== null && byName !== 'check') {
    kind = byName;
    reason = `script "${script}": its name says ${kind}; it ${toolText}`;
  } else if (toolKinds.length === 1 && toolKinds[0] !== undefined) {
    kind = toolKinds[0];
    reason = `script "${script}" ${toolText}, ${KIND_PHRASE[kind]}`;
  } else {
    kind = 'custom';
    reason =
      toolKinds.length > 1
        ? `script "${script}" ${toolText}: several kinds at once, so its kind is custom`
        : `script "${script}" is named "check"; it ${toolText}, so its kind is custom`;
  }
  const tscUses = analysis.all.filter((use) => use.tool === 'tsc');
  const tscOnly =
    kind === 'typecheck' && analysis.unknown.length === 0 && analysis.fanOut.length === 0 && analysis.all.length > 0 && analysis.all.every((use) => use.tool === 'tsc');
  return {
    kind,
    reason,
    tscOnly,
    tools,
    unknown: [...new Set(analysis.unknown)],
    tscBuild: tscUses.some((use) => use.tscBuild === true),
    tscPlain: tscUses.some((use) => use.tscBuild !== true),
    delegates: analysis.delegates,
    ownCommands: analysis.ownCommands,
    fanOut: [...new Set(analysis.fanOut)],
    skip: skipOf(script, command, scripts, byName, analysis),
  };
}

function skipOf(script: string, command: string, scripts: Record<string, string>, byName: CheckKind | 'check' | null, analysis: Analysis): Skip | null {
  const never = (reason: string): Skip => ({ reason, overridable: false });
  const unless = (reason: string): Skip => ({ reason, overridable: true });
  if (/no test specified/.test(command)) return never('npm\'s placeholder test script: it only fails');
  if (LIFECYCLE.has(script) || hookTarget(script, scripts) !== null) {
    return never(`a lifecycle script: the package manager runs it around "${hookTarget(script, scripts) ?? script}"`);
  }
  if (WATCH_NAME.test(script)) return unless('a dev or watch mode by its name: it never finishes, so it cannot leave a receipt');
  const watching = analysis.all.find((use) => use.watch);
  if (watching || analysis.watchForwarded) {
    return unless(`runs ${watching ? watching.tool : 'a script'} in watch mode: it never finishes, so it cannot leave a receipt`);
  }
  if (analysis.unknown.includes('lint-staged')) {
    return unless('runs lint-staged, which checks only staged files and may rewrite them: its verdict is not about the working tree');
  }
  const writing = analysis.all.find((use) => use.writes !== false);
  if (writing || analysis.writesForwarded) {
    const what = writing && typeof writing.writes === 'string' ? writing.writes : 'rewrites files (--fix, --write)';
    return unless(`runs ${writing ? writing.tool : 'a script'} in a mode that ${what}: a check must only read what it checks`);
  }
  const inert = analysis.all.find((use) => use.inert !== undefined);
  if (inert) return unless(`runs ${inert.tool} to ${inert.inert}, not to verify anything`);
  const e2e = analysis.all.find((use) => use.e2e !== undefined);
  if (e2e) {
    return unless(
      `an end-to-end suite: ${e2e.tool} ${e2e.e2e}, so its verdict depends on more than the source tree (a browser, a running server, the network)`,
    );
  }
  const typechecks = analysis.all.filter((use) => use.kind === 'typecheck');
  const noCheck = analysis.all.find((use) => use.noCheck === true);
  if (noCheck && typechecks.length === 0 && byName !== 'build' && byName !== 'test' && byName !== 'lint') {
    return unless('runs tsc --noCheck, which emits JavaScript without checking types: it is not a typecheck');
  }
  return null;
}

function hookTarget(script: string, scripts: Record<string, string>): string | null {
  const match = /^(pre|post)(.+)$/.exec(script);
  const target = match?.[2];
  if (target === undefined) return null;
  return target in scripts || LIFECYCLE.has(target) ? target : null;
}

// ---- Reading a script ---------------------------------------------------------

export interface ToolUse {
  tool: string;
  kind: CheckKind;
  watch: boolean;
  /** false, true (--fix, --write), or what else it writes (snapshots). */
  writes: boolean | string;
  /** What this command line does instead of verifying ("clear its cache", "write a performance trace"). */
  inert?: string;
  /** Why its verdict needs more than the source tree (a browser, a server). */
  e2e?: string;
  /** tsc --noCheck: emits without checking types. */
  noCheck?: boolean;
  /** tsc -b. */
  tscBuild?: boolean;
}

interface Analysis {
  /** Recognised tools run by the script itself. */
  direct: ToolUse[];
  /** Recognised tools, including those of scripts it runs and its pre/post scripts. */
  all: ToolUse[];
  /** Programs it runs that are not recognised tools (they may read anything). */
  unknown: string[];
  /** Extra arguments forwarded to another script ("npm run x -- --watch"). */
  watchForwarded: boolean;
  writesForwarded: boolean;
  delegates: string[];
  ownCommands: number;
  fanOut: string[];
}

function analyse(script: string, scripts: Record<string, string>, seen: Set<string> = new Set()): Analysis {
  const analysis: Analysis = { direct: [], all: [], unknown: [], watchForwarded: false, writesForwarded: false, delegates: [], ownCommands: 0, fanOut: [] };
  seen.add(script);
  const body = scripts[script] ?? '';
  // The package manager may run "pre<name>" and "post<name>" around it: what they read counts too.
  for (const hook of [`pre${script}`, `post${script}`]) {
    if (hook in scripts && !seen.has(hook)) {
      merge(analysis, analyse(hook, scripts, seen));
      analysis.ownCommands += 1;
    }
  }
  for (const words of simpleCommands(body)) {
    const invocation = unwrap(words);
    if (invocation === null) continue;
    const fanOut = fanOutScripts(invocation.program, invocation.args);
    if (fanOut !== null) {
      analysis.ownCommands += 1;
      for (const task of fanOut.scripts) {
        analysis.fanOut.push(task);
        const kind = nameKind(task);
        if (kind === null) continue;
        const use: ToolUse = { tool: `${fanOut.runner} ${task}`, kind: kind === 'check' ? 'custom' : kind, watch: fanOut.watch, writes: false };
        analysis.direct.push(use);
        analysis.all.push(use);
      }
      if (!fanOut.scripts.some((task) => nameKind(task) !== null)) analysis.unknown.push(words.join(' '));
      continue;
    }
    const delegated = delegation(invocation, scripts);
    if (delegated !== null) {
      if (delegated.script in scripts && !seen.has(delegated.script)) {
        merge(analysis, analyse(delegated.script, scripts, seen));
      } else if (!(delegated.script in scripts)) {
        analysis.unknown.push(words.join(' '));
      }
      if (delegated.forwarded.some(isWatchFlag)) analysis.watchForwarded = true;
      if (delegated.forwarded.some(isWriteFlag)) analysis.writesForwarded = true;
      if (delegated.forwarded.length === 0 && delegated.script in scripts && delegated.script !== script) analysis.delegates.push(delegated.script);
      else analysis.ownCommands += 1;
      continue;
    }
    analysis.ownCommands += 1;
    const use = classify(invocation.program, invocation.args);
    if (use === null) {
      analysis.unknown.push(invocation.program);
    } else {
      analysis.direct.push(use);
      analysis.all.push(use);
    }
  }
  return analysis;
}

function merge(into: Analysis, from: Analysis): void {
  into.all.push(...from.all);
  into.unknown.push(...from.unknown);
  into.fanOut.push(...from.fanOut);
  into.watchForwarded ||= from.watchForwarded;
  into.writesForwarded ||= from.writesForwarded;
}

const isWatchFlag = (arg: string) => arg === '--watch' || arg === '--watchAll' || arg === '-w';
const isWriteFlag = (arg: string) => arg === '--fix' || arg === '--write';

interface Invocation {
  program: string;
  args: string[];
}

/** Programs that run another program given later on their command line. */
const WRAPPERS = new Set(['cross-env', 'cross-env-shell', 'dotenv', 'dotenv-cli', 'env', 'time', 'nice', 'nohup', 'c8', 'nyc']);
const E2E_PROGRAMS = new Set([
  'playwright', 'cypress', 'start-server-and-test', 'server-test', 'start-test', 'wdio', 'testcafe', 'nightwatch',
  'karma', 'wtr', 'web-test-runner', 'codeceptjs', 'detox', 'wait-on', 'ng',
]);
const TOOLS = new Set([
  'tsc', 'vue-tsc', 'eslint', 'oxlint', 'biome', 'prettier', 'vitest', 'jest', 'mocha', 'node', 'ava', ...E2E_PROGRAMS, ...FAN_OUT_PROGRAMS,
]);

const baseName = (word: string) => word.slice(word.lastIndexOf('/') + 1);
const isAssignment = (word: string) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(word);

/** The program a simple command really runs, past variable assignments, package runners (npx, pnpm exec, …) and wrappers. */
function unwrap(words: readonly string[]): Invocation | null {
  const start = words.findIndex((word) => !isAssignment(word));
  if (start === -1) return null;
  let rest = words.slice(start);
  for (let guard = 0; guard < 8; guard += 1) {
    const program = baseName(rest[0] as string);
    if (runnerLength([program, ...rest.slice(1)]) > 0 || WRAPPERS.has(program)) {
      const next = rest.findIndex((word, index) => index > 0 && (TOOLS.has(baseName(word)) || isPackageManager(baseName(word))));
      if (next === -1) return { program, args: rest.slice(1) };
      rest = rest.slice(next);
      continue;
    }
    return { program, args: rest.slice(1) };
  }
  return { program: baseName(rest[0] as string), args: rest.slice(1) };
}

/** "npm run lint", "npm run-script lint", "pnpm lint", "yarn test": the script it runs and the arguments it forwards. */
function delegation(invocation: Invocation, scripts: Record<string, string>): { script: string; forwarded: string[] } | null {
  const run = scriptRun([invocation.program, ...invocation.args], scripts);
  return run === null ? null : { script: run.script, forwarded: run.args };
}

function firstOperand(args: readonly string[]): string | undefined {
  return args.find((arg) => !arg.startsWith('-'));
}

/** What a recognised tool verifies, and whether this command line watches, writes, or verifies nothing. */
export function classify(program: string, args: readonly string[]): ToolUse | null {
  const has = (...flags: string[]) => args.some((arg) => flags.includes(arg) || flags.some((flag) => arg.startsWith(`${flag}=`)));
  const use = (tool: string, kind: CheckKind, extra: Partial<ToolUse> = {}): ToolUse => ({ tool, kind, watch: false, writes: false, ...extra });
  switch (program) {
    case 'tsc':
    case 'vue-tsc': {
      // https://www.typescriptlang.org/tsconfig/#noCheck, https://github.com/microsoft/TypeScript/wiki/Performance-Tracing
      const tscBuild = has('-b', '--build');
      if (has('--noCheck')) return use(`${program} --noCheck`, 'build', { noCheck: true, tscBuild });
      const extra: Partial<ToolUse> = { watch: has('--watch', '-w'), tscBuild };
      if (has('--generateTrace')) extra.inert = 'write a performance trace (--generateTrace)';
      else if (has('--generateCpuProfile')) extra.inert = 'write a CPU profile (--generateCpuProfile)';
      else if (tscBuild && has('--clean')) extra.inert = 'delete the build\'s outputs (--clean)';
      else if (has('--showConfig', '--listFilesOnly', '--init', '--version', '-v', '--help', '-h')) extra.inert = 'print its configuration, its files or its version';
      return use(program, 'typecheck', extra);
    }
    case 'eslint':
      if (has('--print-config', '--init', '--inspect-config', '--env-info')) return use('eslint', 'lint', { inert: 'print or set up its configuration' });
      return use('eslint', 'lint', { writes: has('--fix') });
    case 'oxlint':
      return use('oxlint', 'lint', { writes: has('--fix', '--fix-suggestions', '--fix-dangerously') });
    case 'biome': {
      const sub = firstOperand(args);
      const writes = has('--write', '--fix', '--apply', '--apply-unsafe');
      if (sub === 'check' || sub === 'lint' || sub === 'ci') return use(`biome ${sub}`, 'lint', { writes });
      // Without --write, "biome format" reports unformatted files and fails: a check.
      if (sub === 'format') return use('biome format', 'lint', { writes });
      return null;
    }
    case 'prettier':
      if (has('--write', '-w')) return use('prettier', 'lint', { writes: true });
      if (has('--check', '-c', '--list-different', '-l')) return use('prettier --check', 'lint');
      return null; // plain prettier prints formatted files; it verifies nothing
    case 'vitest': {
      const sub = firstOperand(args);
      if (sub === 'bench' || sub === 'list' || sub === 'init') return null;
      const extra: Partial<ToolUse> = { watch: sub === 'watch' || sub === 'dev' || has('--watch', '-w') };
      if (has('--clearCache')) extra.inert = 'clear its cache (--clearCache)';
      else if (has('-u', '--update')) extra.writes = 'rewrites snapshots (--update)';
      // https://vitest.dev/guide/browser/
      else if (has('--browser', '--browser.enabled', '--browser.name', '--browser.provider')) extra.e2e = 'runs the tests in a browser (--browser)';
      return use('vitest', 'test', extra);
    }
    case 'jest': {
      const extra: Partial<ToolUse> = { watch: has('--watch', '--watchAll') };
      // https://jestjs.io/docs/cli#--clearcache
      if (has('--clearCache')) extra.inert = 'clear its cache (--clearCache)';
      else if (has('--listTests', '--showConfig', '--init')) extra.inert = 'list its tests or print its configuration';
      else if (has('-u', '--updateSnapshot')) extra.writes = 'rewrites snapshots (--updateSnapshot)';
      return use('jest', 'test', extra);
    }
    case 'mocha':
      return use('mocha', 'test', { watch: has('--watch', '-w') });
    case 'ava': {
      const extra: Partial<ToolUse> = { watch: has('--watch', '-w') };
      if (has('--reset-cache')) extra.inert = 'clear its cache (--reset-cache)';
      else if (has('-u', '--update-snapshots')) extra.writes = 'rewrites snapshots (--update-snapshots)';
      return use('ava', 'test', extra);
    }
    case 'node':
      if (!has('--test')) return null;
      return use('node --test', 'test', {
        watch: has('--watch', '--watch-path'),
        ...(has('--test-update-snapshots') ? { writes: 'rewrites snapshots (--test-update-snapshots)' } : {}),
      });
    case 'bun':
      if (args[0] !== 'test') return null;
      return use('bun test', 'test', { watch: has('--watch') });
    default:
      return endToEnd(program, args);
  }
}

/** Test runners whose tests drive a browser or need a server: their verdict is not the source tree's alone. */
function endToEnd(program: string, args: readonly string[]): ToolUse | null {
  const sub = firstOperand(args);
  const e2e = (tool: string, why: string): ToolUse => ({ tool, kind: 'test', watch: false, writes: false, e2e: why });
  switch (program) {
    case 'playwright':
      return sub === 'test' ? e2e('playwright test', 'drives a browser, and often starts a server (https://playwright.dev/docs/test-webserver)') : null;
    case 'cypress':
      return sub === 'run' || sub === 'open' ? e2e(`cypress ${sub}`, 'drives a browser against a running app') : null;
    case 'start-server-and-test':
    case 'server-test':
    case 'start-test':
      return e2e(program, 'starts a server and tests against it');
    case 'wait-on':
      return e2e('wait-on', 'waits for a server or a file that something else provides');
    case 'wdio':
      return e2e('wdio', 'drives a browser through WebDriver');
    case 'testcafe':
    case 'nightwatch':
    case 'codeceptjs':
      return e2e(program, 'drives a browser');
    case 'karma':
    case 'wtr':
    case 'web-test-runner':
      return e2e(program, 'runs the tests in a browser');
    case 'detox':
      return sub === 'test' ? e2e('detox test', 'drives a mobile simulator') : null;
    case 'ng':
      return sub === 'e2e' ? e2e('ng e2e', 'serves the app and drives a browser') : null;
    default:
      return null;
  }
}
