import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Json } from '../helpers/answers.js';
import { claudeBash } from '../helpers/hookInput.js';
import { expectCurrentIn, inProcess } from '../helpers/inProcess.js';
import { isRunning, observerRecords, ObserverTracker, until, waitGone } from '../helpers/observer.js';
import { CLI, cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';
import { newestChangeMs, SETTLE_MS } from '../helpers/settle.js';

/*
 * `vouch hook claude|codex` as the hosts run it: a fresh process, the host's
 * hook JSON on stdin, and stdout checked byte for byte. The JSON shapes are
 * the hosts' own: https://docs.anthropic.com/en/docs/claude-code/hooks ("PreToolUse",
 * "SessionStart") and https://developers.openai.com/codex/hooks.
 *
 * The runs that set a test up and the status questions around the hook go through vouch in this
 * process (test/helpers/inProcess.ts); the hook itself is always the process the host starts.
 * The typecheck receipt most tests start from is made once, in a project each of them gets a
 * copy of (its own tree, state dir and git repository), where it must answer CURRENT.
 */

const projects: TempProject[] = [];
const onExit: (() => void)[] = [];
const observers = new ObserverTracker();
afterEach(async () => {
  const problems = await observers.cleanup();
  for (const p of projects.splice(0)) p.remove();
  for (const done of onExit.splice(0)) done();
  expect(problems, 'observers that would not stop').toEqual([]);
});

const CHECKS = [
  { name: 'typecheck', kind: 'typecheck', script: 'typecheck' },
  { name: 'test', kind: 'test', script: 'test' },
];
const FILES: Record<string, string> = {
  'vouch.config.json': JSON.stringify({ schema: 1, packageManager: 'npm', checks: CHECKS }, null, 2) + '\n',
  'package.json': JSON.stringify({ name: 'fx', version: '1.0.0', private: true, scripts: { typecheck: 'node check.cjs', test: 'node check.cjs' } }, null, 2) + '\n',
  '.gitignore': 'node_modules/\n',
  'check.cjs': 'process.exit(0);\n',
  'src/a.js': 'export const a = 1;\n',
};

function project(name: string, files: Record<string, string> = FILES, options: { git?: boolean } = {}): TempProject {
  const p = tempProject(name, files, options);
  projects.push(p);
  return p;
}

/** Codex's PreToolUse input: tool_input holds only the command. */
function codexBash(cwd: string, command: string): Json {
  return {
    session_id: '0199a213-81c0-7800-8aa1-bbab2a035a53',
    turn_id: 'turn-1',
    transcript_path: null,
    cwd,
    hook_event_name: 'PreToolUse',
    model: 'gpt-5.5-codex',
    permission_mode: 'default',
    tool_name: 'Bash',
    tool_input: { command },
    tool_use_id: 'call_abc',
  };
}

function sessionStart(cwd: string): Json {
  return {
    session_id: 'abc123',
    transcript_path: '/home/user/.claude/projects/x/00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl',
    cwd,
    hook_event_name: 'SessionStart',
    source: 'startup',
    model: 'claude-sonnet-5',
  };
}

interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A PATH with node on it and no vouch: the rewrite must then name this install by absolute path. */
const PATH_WITHOUT_VOUCH = process.env.PATH ?? '';

function hook(host: string, stdin: string | Json, options: { cwd: string; env?: NodeJS.ProcessEnv; script?: string }): HookRun {
  const result = spawnSync(process.execPath, [options.script ?? CLI, 'hook', host], {
    cwd: options.cwd,
    input: typeof stdin === 'string' ? stdin : JSON.stringify(stdin),
    env: options.env ?? cleanEnv({ PATH: PATH_WITHOUT_VOUCH }),
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.error) throw result.error;
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The hook's stdout must be one JSON object on one line, and nothing else. */
function parsedLine(run: HookRun): Json {
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout.endsWith('\n')).toBe(true);
  const value = JSON.parse(run.stdout);
  expect(run.stdout).toBe(JSON.stringify(value) + '\n');
  return value;
}

/** `vouch run CHECK` in this process; the run id of its CURRENT receipt. */
async function runCheck(p: TempProject, check: string): Promise<string> {
  // A file changed within the racy window of the run's start would count as changed during it (a copy is new).
  const newest = newestChangeMs(p.root);
  await until(() => Date.now() > newest + SETTLE_MS, `the last change to be ${SETTLE_MS} ms old`, 5_000, 5);
  const result = await inProcess(p).vouch(['run', check]);
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
  return (await expectCurrentIn(inProcess(p), check)).receipt.run_id as string;
}

/** The project typecheck was run in, once; the tests take copies of it. */
let template: Promise<{ root: string; runId: string }> | undefined;
afterAll(async () => {
  if (template) rmSync((await template).root, { recursive: true, force: true });
});

/** A copy of a project whose typecheck has a CURRENT receipt, and that receipt's run id. */
async function typechecked(name: string): Promise<{ p: TempProject; runId: string }> {
  template ??= (async () => {
    const made = tempProject('hook-typechecked', FILES);
    return { root: made.root, runId: await runCheck(made, 'typecheck') };
  })();
  const { root, runId } = await template;
  const p = project(name, {}, { git: false });
  cpSync(root, p.root, { recursive: true });
  expect((await expectCurrentIn(inProcess(p), 'typecheck')).receipt.run_id).toBe(runId);
  return { p, runId };
}

/** The program text a rewrite uses when PATH has no vouch of this install: this node, and the script's real path. */
function absoluteProgram(script = CLI): string {
  const real = realpathSync(script);
  // The repo and the temp projects live at paths no shell treats specially, so no quoting is expected.
  expect(process.execPath).toMatch(/^[\w/.-]+$/);
  expect(real).toMatch(/^[\w/.-]+$/);
  return `${process.execPath} ${real}`;
}

function readLog(file: string): Json[] {
  return readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
}

describe('Claude Code PreToolUse', () => {
  it('a command that runs no check: nothing on stdout', async () => {
    const { p } = await typechecked('hook-nomatch');
    for (const command of ['ls -la', 'git status --short', 'npm run typecheck -- --watch', 'echo "npm run typecheck"']) {
      const run = hook('claude', claudeBash(p.root, command), { cwd: p.root });
      expect(run, command).toEqual({ code: 0, stdout: '', stderr: '' });
    }
  });

  it('a current check: denied, with a reason naming the check, its run id and age, its stored output, and how to force a rerun', async () => {
    const { p, runId } = await typechecked('hook-deny');
    const run = hook('claude', claudeBash(p.root, 'npm run typecheck'), { cwd: p.root });
    const out = parsedLine(run);
    expect(Object.keys(out)).toEqual(['hookSpecificOutput']);
    expect(Object.keys(out.hookSpecificOutput)).toEqual(['hookEventName', 'permissionDecision', 'permissionDecisionReason']);
    expect(out.hookSpecificOutput.hookEventName).toBe('PreToolUse');
    expect(out.hookSpecificOutput.permissionDecision).toBe('deny');
    // The whole line, exactly, up to the receipt's age, time and duration (docs/hooks.md, "Replay", has the wording).
    const receipt = (await expectCurrentIn(inProcess(p), 'typecheck')).receipt;
    const stored = readFileSync(join(p.root, '.vouch', 'logs', `${runId}.log`), 'utf8');
    const reason = [
      'vouch: not run, because check "typecheck" has a CURRENT receipt: nothing it depends on (inputs, configuration, tools, environment) changed since the run below, so a rerun would pass again.',
      `check "typecheck" PASSED in run ${runId}, AGE ago (${receipt.finished_at.replace(/\.\d{3}Z$/, 'Z')}): exit 0 in DURATION`,
      'Its stored output, the last 40 lines, ANSI escapes removed' + (stored === '' ? ' (nothing)' : '') + ':',
      `--- output of run ${runId} ---`,
      ...(stored === '' ? [] : [stored.replace(/\n$/, '')]),
      '--- end of output ---',
      'Use that result. To run the command anyway: VOUCH_FORCE=1 npm run typecheck',
    ].join('\n');
    const line = JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } }) + '\n';
    expect(run.stdout.replace(/, \d+ (s|min) ago/, ', AGE ago').replace(/exit 0 in [\d.]+m?s/, 'exit 0 in DURATION')).toBe(line);
  });

  it('decides in the agent cwd from the JSON, wherever the hook process itself runs', async () => {
    const { p } = await typechecked('hook-cwd');
    const out = parsedLine(hook('claude', claudeBash(p.root, 'npm run typecheck'), { cwd: '/' }));
    expect(out.hookSpecificOutput.permissionDecision).toBe('deny');
  });

  it('a chain of current checks is denied whole, naming every part', async () => {
    const { p, runId: typecheckId } = await typechecked('hook-chain');
    const testId = await runCheck(p, 'test');
    const out = parsedLine(hook('claude', claudeBash(p.root, 'npm run typecheck && npm test'), { cwd: p.root }));
    expect(out.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(out.hookSpecificOutput.permissionDecisionReason).toContain(typecheckId);
    expect(out.hookSpecificOutput.permissionDecisionReason).toContain(testId);
  });

  it('npm\'s aliases stand for the script they run, as init reads them: run-script and tst are denied like run and test', async () => {
    const { p, runId: typecheckId } = await typechecked('hook-alias');
    const testId = await runCheck(p, 'test');
    for (const [command, runId] of [['npm run-script typecheck', typecheckId], ['npm rum typecheck', typecheckId], ['npm tst', testId]] as const) {
      const out = parsedLine(hook('claude', claudeBash(p.root, command), { cwd: p.root }));
      expect(out.hookSpecificOutput.permissionDecision, command).toBe('deny');
      expect(out.hookSpecificOutput.permissionDecisionReason, command).toContain(runId);
    }
    // An alias with other arguments is another command, and runs as typed.
    expect(hook('claude', claudeBash(p.root, 'npm run-script typecheck -- --watch'), { cwd: p.root })).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('a stale check: updatedInput is the whole tool_input with only the command rewritten, and no permissionDecision', async () => {
    const { p } = await typechecked('hook-rewrite');
    p.write('src/a.js', 'export const a = 2;\n');
    const input = claudeBash(p.root, 'npm run typecheck 2>&1 | tail -30');
    input.tool_input.dangerouslyDisableSandbox = false;
    const run = hook('claude', input, { cwd: p.root });
    const expected = {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        updatedInput: {
          command: `${absoluteProgram()} run typecheck --if-due 2>&1 | tail -30`,
          description: 'Run the checks',
          timeout: 120000,
          run_in_background: false,
          dangerouslyDisableSandbox: false,
        },
      },
    };
    expect(run).toEqual({ code: 0, stdout: JSON.stringify(expected) + '\n', stderr: '' });
  });

  it('a check never run (UNVERIFIED) is rewritten too, keeping assignments and the rest of the chain byte for byte', () => {
    const p = project('hook-unverified');
    const command = 'git diff --stat && CI=1  npm test; echo done';
    const out = parsedLine(hook('claude', claudeBash(p.root, command), { cwd: p.root }));
    expect(out.hookSpecificOutput.updatedInput.command).toBe(`git diff --stat && CI=1  ${absoluteProgram()} run test --if-due; echo done`);
    expect(out.hookSpecificOutput.permissionDecision).toBeUndefined();
  });

  it('the rewritten command, run in a shell, runs the check through this install and records a receipt', async () => {
    const p = project('hook-rewrite-runs');
    const out = parsedLine(hook('claude', claudeBash(p.root, 'npm test'), { cwd: p.root }));
    const shell = spawnSync('/bin/sh', ['-c', out.hookSpecificOutput.updatedInput.command], { cwd: p.root, env: cleanEnv({ PATH: PATH_WITHOUT_VOUCH }), encoding: 'utf8' });
    expect(shell.status, `${shell.stdout}\n${shell.stderr}`).toBe(0);
    await expectCurrentIn(inProcess(p), 'test');
  });

  it('plain `vouch` in the rewrite when the first vouch on PATH is this install; else node and the real path of this script', () => {
    const p = project('hook-program');
    // An install as npm lays it out: the bundle with its bin executable, and a bin dir linking to it.
    const install = join(p.root, '.install');
    cpSync(join(REPO, 'dist', 'bin'), join(install, 'dist', 'bin'), { recursive: true });
    // The bundle reads its version from the package's package.json.
    cpSync(join(REPO, 'package.json'), join(install, 'package.json'));
    chmodSync(join(install, 'dist', 'bin', 'main.js'), 0o755);
    mkdirSync(join(install, 'bin'));
    symlinkSync(join('..', 'dist', 'bin', 'main.js'), join(install, 'bin', 'vouch'));
    const linked = join(install, 'bin', 'vouch');
    const input = claudeBash(p.root, 'npm test');

    const onPath = hook('claude', input, { cwd: p.root, script: linked, env: cleanEnv({ PATH: `${join(install, 'bin')}:${PATH_WITHOUT_VOUCH}` }) });
    expect(parsedLine(onPath).hookSpecificOutput.updatedInput.command).toBe('vouch run test --if-due');

    // Another vouch comes first on PATH: that is not this install.
    const other = join(p.root, '.other');
    mkdirSync(other);
    writeFileSync(join(other, 'vouch'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const shadowed = hook('claude', input, { cwd: p.root, script: linked, env: cleanEnv({ PATH: `${other}:${join(install, 'bin')}:${PATH_WITHOUT_VOUCH}` }) });
    expect(parsedLine(shadowed).hookSpecificOutput.updatedInput.command).toBe(`${absoluteProgram(join(install, 'dist', 'bin', 'main.js'))} run test --if-due`);

    // A path with a space is shell-quoted.
    const spaced = join(p.root, 'my tools');
    cpSync(install, spaced, { recursive: true, verbatimSymlinks: true });
    const quoted = hook('claude', input, { cwd: p.root, script: join(spaced, 'bin', 'vouch'), env: cleanEnv({ PATH: PATH_WITHOUT_VOUCH }) });
    expect(parsedLine(quoted).hookSpecificOutput.updatedInput.command).toBe(`${process.execPath} '${realpathSync(join(spaced, 'dist', 'bin', 'main.js'))}' run test --if-due`);
  });

  it('VOUCH_FORCE=1 in the hook environment runs the command as typed; in front of the command, it runs through vouch run, never denied', async () => {
    const { p } = await typechecked('hook-force');
    const forcedEnv = hook('claude', claudeBash(p.root, 'npm run typecheck'), { cwd: p.root, env: cleanEnv({ PATH: PATH_WITHOUT_VOUCH, VOUCH_FORCE: '1' }) });
    expect(forcedEnv).toEqual({ code: 0, stdout: '', stderr: '' });
    // CURRENT and PASS, yet forced: a plain `vouch run typecheck` (no --if-due), whose result is kept as a receipt.
    const forcedCommand = parsedLine(hook('claude', claudeBash(p.root, 'VOUCH_FORCE=1 npm run typecheck 2>&1 | tail -5'), { cwd: p.root }));
    expect(forcedCommand.hookSpecificOutput.permissionDecision).toBeUndefined();
    expect(forcedCommand.hookSpecificOutput.updatedInput.command).toMatch(/^VOUCH_FORCE=1 \S.* run typecheck 2>&1 \| tail -5$/);
    // A force that no matched part carries (here the cd's) runs the chain as typed.
    expect(hook('claude', claudeBash(p.root, 'VOUCH_FORCE=1 cd . && npm run typecheck'), { cwd: p.root })).toEqual({ code: 0, stdout: '', stderr: '' });
    // Codex cannot take a rewrite without skipping the user's approval: the forced command runs as typed.
    expect(hook('codex', codexBash(p.root, 'VOUCH_FORCE=1 npm run typecheck'), { cwd: p.root }).stdout).toBe('');
  });

  it('other tools and events, and a directory without a config: nothing on stdout', async () => {
    const { p } = await typechecked('hook-other');
    const read = { ...claudeBash(p.root, 'x'), tool_name: 'Read', tool_input: { file_path: join(p.root, 'src/a.js') } };
    expect(hook('claude', read, { cwd: p.root })).toEqual({ code: 0, stdout: '', stderr: '' });
    const post = { ...claudeBash(p.root, 'npm run typecheck'), hook_event_name: 'PostToolUse', tool_response: {} };
    expect(hook('claude', post, { cwd: p.root })).toEqual({ code: 0, stdout: '', stderr: '' });
    const bare = project('hook-noconfig', { 'src/a.js': 'export const a = 1;\n' });
    expect(hook('claude', claudeBash(bare.root, 'npm run typecheck'), { cwd: bare.root })).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});

describe('fail open', () => {
  it('malformed or unexpected stdin: nothing on stdout, exit 0', async () => {
    const { p } = await typechecked('hook-malformed');
    const inputs = [
      '',
      'not json',
      '{"hook_event_name":"PreToolUse","tool_name":"Bash"',
      '[]',
      'null',
      '"npm run typecheck"',
      JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash' }),
      JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: ['npm', 'run', 'typecheck'] } }),
      JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: 'npm run typecheck', cwd: p.root }),
    ];
    for (const host of ['claude', 'codex']) {
      for (const input of inputs) expect(hook(host, input, { cwd: p.root }), `${host} ${input}`).toEqual({ code: 0, stdout: '', stderr: '' });
    }
  });

  it('a command that does not parse: nothing on stdout', async () => {
    const { p } = await typechecked('hook-unparsed');
    expect(hook('claude', claudeBash(p.root, 'npm run typecheck "unterminated'), { cwd: p.root })).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('an unknown host or extra arguments: nothing on stdout, exit 0 (exit 2 would block the agent)', () => {
    const p = project('hook-usage');
    for (const args of [['hook'], ['hook', 'cursor'], ['hook', 'claude', 'extra']]) {
      const result = spawnSync(process.execPath, [CLI, ...args], { cwd: p.root, input: JSON.stringify(claudeBash(p.root, 'npm test')), env: cleanEnv(), encoding: 'utf8' });
      expect(result.status, args.join(' ')).toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/claude or codex/);
    }
  });
});

describe('Codex PreToolUse', () => {
  it('a current check is denied; a stale one runs as typed (Codex takes a rewrite only with allow)', async () => {
    const { p, runId } = await typechecked('hook-codex');
    const deny = parsedLine(hook('codex', codexBash(p.root, 'npm run typecheck'), { cwd: p.root }));
    expect(Object.keys(deny.hookSpecificOutput)).toEqual(['hookEventName', 'permissionDecision', 'permissionDecisionReason']);
    expect(deny.hookSpecificOutput.hookEventName).toBe('PreToolUse');
    expect(deny.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(deny.hookSpecificOutput.permissionDecisionReason).toContain(runId);

    p.write('src/a.js', 'export const a = 2;\n');
    expect(hook('codex', codexBash(p.root, 'npm run typecheck 2>&1 | tail -30'), { cwd: p.root })).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(hook('codex', codexBash(p.root, 'ls'), { cwd: p.root })).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});

describe('VOUCH_HOOK_LOG', () => {
  it('a project vouch refuses (a root outside its config) passes, and the log says why, not "no vouch.config.json"', () => {
    const p = project('hook-log-refused', { ...FILES, 'vouch.config.json': JSON.stringify({ schema: 1, root: '..', checks: CHECKS }) });
    const logDir = mkdtempSync(join(REPO, '.tmp', 'hook-log-'));
    onExit.push(() => rmSync(logDir, { recursive: true, force: true }));
    const log = join(logDir, 'hook.log');
    const run = hook('claude', claudeBash(p.root, 'npm test'), { cwd: p.root, env: cleanEnv({ PATH: PATH_WITHOUT_VOUCH, VOUCH_HOOK_LOG: log }) });
    expect(run).toMatchObject({ code: 0, stdout: '' });
    const [line] = readLog(log);
    expect(line?.decision).toBe('pass');
    expect(line?.why).toMatch(/"root" in .* is "\.\."/);
  });

  it('appends one JSON line per Bash command: time, host, command, decision, why, checks, latency', async () => {
    const { p, runId } = await typechecked('hook-log');
    // Outside the project: a log among the inputs would make the check stale.
    const logDir = mkdtempSync(join(REPO, '.tmp', 'hook-log-'));
    onExit.push(() => rmSync(logDir, { recursive: true, force: true }));
    const log = join(logDir, 'hook.log');
    const env = cleanEnv({ PATH: PATH_WITHOUT_VOUCH, VOUCH_HOOK_LOG: log });
    hook('claude', claudeBash(p.root, 'npm run typecheck'), { cwd: p.root, env });
    hook('claude', claudeBash(p.root, 'npm test'), { cwd: p.root, env });
    hook('claude', claudeBash(p.root, 'ls'), { cwd: p.root, env });
    hook('codex', codexBash(p.root, 'npm test'), { cwd: p.root, env });
    hook('claude', claudeBash(p.root, 'npm run typecheck'), { cwd: p.root, env: { ...env, VOUCH_FORCE: '1' } });
    // Not a Bash command: no line.
    hook('claude', sessionStart(join(p.root, 'nowhere')), { cwd: p.root, env });
    hook('claude', 'not json', { cwd: p.root, env });

    const lines = readLog(log);
    expect(lines.map((l) => [l.host, l.command, l.decision])).toEqual([
      ['claude', 'npm run typecheck', 'deny'],
      ['claude', 'npm test', 'rewrite'],
      ['claude', 'ls', 'pass'],
      ['codex', 'npm test', 'pass'],
      ['claude', 'npm run typecheck', 'pass'],
    ]);
    for (const line of lines) {
      expect(Object.keys(line)).toEqual(['time', 'host', 'command', 'decision', 'why', 'checks', 'latency_ms', 'source']);
      expect(line.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(typeof line.why).toBe('string');
      expect(line.why.length).toBeGreaterThan(0);
      expect(Number.isInteger(line.latency_ms) && line.latency_ms > 0).toBe(true);
    }
    expect(lines[0].why).toContain(runId);
    expect(lines[0].checks).toEqual(['typecheck']);
    expect(lines[1].checks).toEqual(['test']);
    expect(lines[2].checks).toEqual([]);
    expect(lines[3].checks).toEqual(['test']);
    expect(lines[3].why).toMatch(/Codex/);
    expect(lines[4].why).toMatch(/VOUCH_FORCE=1/);
  });
});

/** The pid of the observer recorded in the state dir, when it is running. */
function runningObserver(stateDir: string): number | null {
  const found = observerRecords(stateDir).find((r) => typeof r.record.pid === 'number' && isRunning(r.record.pid));
  return found ? (found.record.pid as number) : null;
}

/** `vouch start` processes running in root: what SessionStart spawns, detached, and does not wait for. */
function startProcesses(root: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv.at(-2) === 'start' && argv.some((arg) => arg.endsWith('/dist/bin/main.js')) && realpathSync(`/proc/${name}/cwd`) === realpathSync(root)) found.push(Number(name));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

describe('SessionStart', () => {
  it('starts the observer detached and says nothing; a later SessionStart leaves it running', async () => {
    const p = project('hook-session');
    const stateDir = join(p.root, '.vouch');
    observers.note(p, [], undefined);
    expect(hook('claude', sessionStart(p.root), { cwd: p.root })).toEqual({ code: 0, stdout: '', stderr: '' });
    const pid = await until(() => runningObserver(stateDir), 'an observer started by SessionStart', 60_000);
    observers.note(p, [], pid);
    await until(() => startProcesses(p.root).length === 0, 'the "vouch start" SessionStart spawned to finish', 60_000);
    const info = await inProcess(p).json(['observer']);
    expect(info.running).toBe(true);
    expect(info.pid).toBe(pid);

    // A resumed or cleared session (or Codex in the same checkout) starts it again: the same observer stays.
    expect(hook('codex', sessionStart(p.root), { cwd: p.root })).toEqual({ code: 0, stdout: '', stderr: '' });
    await until(() => startProcesses(p.root).length === 0, 'the second "vouch start" to finish', 60_000);
    expect((await inProcess(p).json(['observer'])).pid).toBe(pid);

    const stopped = await inProcess(p).vouch(['stop']);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(await waitGone(pid, 10_000)).toBe(true);
  });

  it('the observer answers when it runs; a hung one is waited for within the deadline, then the hook observes directly', async () => {
    const { p, runId } = await typechecked('hook-observer');
    const started = observers.start(p);
    const logDir = mkdtempSync(join(REPO, '.tmp', 'hook-log-'));
    onExit.push(() => rmSync(logDir, { recursive: true, force: true }));
    const log = join(logDir, 'hook.log');
    const env = cleanEnv({ PATH: PATH_WITHOUT_VOUCH, VOUCH_HOOK_LOG: log });

    const answered = parsedLine(hook('claude', claudeBash(p.root, 'npm run typecheck'), { cwd: p.root, env }));
    expect(answered.hookSpecificOutput.permissionDecisionReason).toContain(runId);

    process.kill(started.pid, 'SIGSTOP');
    try {
      const fallback = parsedLine(hook('claude', claudeBash(p.root, 'npm run typecheck'), { cwd: p.root, env }));
      expect(fallback.hookSpecificOutput.permissionDecisionReason).toContain(runId);
    } finally {
      process.kill(started.pid, 'SIGCONT');
    }
    const lines = readLog(log);
    expect(lines.map((l) => [l.decision, l.source])).toEqual([
      ['deny', 'observer'],
      ['deny', 'scan'],
    ]);
    // At least the observer's 2 s floor, and not the whole 10 s ceiling plus a scan.
    expect(lines[1].latency_ms).toBeGreaterThanOrEqual(2_000);
  });

  it('in a directory without a config: nothing on stdout, no observer', async () => {
    const p = project('hook-session-noconfig', { 'src/a.js': 'export const a = 1;\n' });
    expect(hook('claude', sessionStart(p.root), { cwd: p.root })).toEqual({ code: 0, stdout: '', stderr: '' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(existsSync(join(p.root, '.vouch'))).toBe(false);
  });
});
