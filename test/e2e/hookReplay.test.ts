import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Json } from '../helpers/answers.js';
import { claudeBash } from '../helpers/hookInput.js';
import { inProcess } from '../helpers/inProcess.js';
import { CLI, cleanEnv, tempProject, type TempProject } from '../helpers/project.js';

/*
 * Replay (docs/hooks.md, "Replay"): a deny carries what the rerun would have
 * shown, cut from the stored log exactly as the agent's own command would have
 * cut it. Each expected text here comes from the real tail, head or grep run on
 * the stored log.
 *
 * The runs that set a test up, and the questions and skips of `vouch run --if-due`, go through
 * vouch in this process (test/helpers/inProcess.ts); the hook is the process a host starts, and
 * one skip's summary is read from the built CLI's own stdout.
 */

const projects: TempProject[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.remove();
});

// 60 numbered lines on stdout, a coloured warning on stderr, and vitest's summary lines.
const PASSING = `for (let i = 1; i <= 60; i++) console.log('line ' + i);
console.error('\\x1b[31mwarn on stderr\\x1b[39m');
console.log(' Test Files  1 passed (1)');
console.log('      Tests  3 passed (3)');
`;
const FAILING = `console.log('FAIL src/cart.test.ts > caps the discount');
console.log('AssertionError: expected 120 to be 100');
console.log('      Tests  1 failed | 2 passed (3)');
process.exit(1);
`;

function project(name: string, config: Json = {}): TempProject {
  const p = tempProject(name, {
    'vouch.config.json': JSON.stringify({
      schema: 1,
      packageManager: 'npm',
      ...config,
      checks: [
        { name: 'test', kind: 'test', script: 'test', inputs: ['pass.cjs'] },
        { name: 'unit', kind: 'test', script: 'unit', inputs: ['fail.cjs'] },
      ],
    }),
    'package.json': JSON.stringify({ name: 'fx', version: '1.0.0', private: true, scripts: { test: 'node pass.cjs', unit: 'node fail.cjs' } }),
    '.gitignore': 'node_modules/\n.vouch/\n',
    'pass.cjs': PASSING,
    'fail.cjs': FAILING,
  });
  projects.push(p);
  return p;
}

async function ran(p: TempProject, check: string, code = 0): Promise<{ runId: string; log: string }> {
  const result = await inProcess(p).json(['run', check]);
  expect(result.exit_code, JSON.stringify(result)).toBe(code);
  const receipt = result.runs[0].receipt;
  return { runId: receipt.run_id, log: readFileSync(receipt.log_path, 'utf8') };
}

function decide(p: TempProject, command: string, host: 'claude' | 'codex' = 'claude'): { kind: string; text: string } {
  const input = host === 'claude' ? claudeBash(p.root, command) : { cwd: p.root, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } };
  const result = spawnSync(process.execPath, [CLI, 'hook', host], { cwd: p.root, input: JSON.stringify(input), env: cleanEnv(), encoding: 'utf8', timeout: 120_000 });
  expect(result.status, result.stderr).toBe(0);
  if (result.stdout === '') return { kind: 'pass', text: '' };
  const out = JSON.parse(result.stdout).hookSpecificOutput;
  if (out.permissionDecision === 'deny') return { kind: 'deny', text: out.permissionDecisionReason };
  return { kind: 'rewrite', text: out.updatedInput.command };
}

/** What the real program prints for the stored log, ANSI escapes removed first (as a pipe would have had them: none). */
function real(argv: string[], log: string): string {
  // eslint-disable-next-line no-control-regex
  const plain = log.replace(/\x1b\[[0-9;]*m/g, '');
  return spawnSync(argv[0]!, argv.slice(1), { input: plain, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C.UTF-8' } }).stdout;
}

/** The replayed lines between the markers. */
function replayed(text: string, runId: string): string {
  const start = text.indexOf(`--- output of run ${runId} ---\n`);
  const end = text.indexOf('--- end of output ---', start);
  expect(start, text).toBeGreaterThanOrEqual(0);
  const body = text.slice(start + `--- output of run ${runId} ---\n`.length, end);
  return body;
}

describe('the hook replays the stored output in its deny', () => {
  it('| tail -N, | head -N, | grep and a plain command each get exactly what that command would have shown', async () => {
    const p = project('replay-forms');
    const { runId, log } = await ran(p, 'test');
    const cases: Array<[string, string[], string]> = [
      ['npm test 2>&1 | tail -5', ['tail', '-5'], 'the last 5 lines (| tail -5)'],
      ['npm test 2>&1 | tail -n 12', ['tail', '-n', '12'], 'the last 12 lines (| tail -12)'],
      ['npm test 2>&1 | head -3', ['head', '-3'], 'the first 3 lines (| head -3)'],
      ['npm test 2>&1 | grep -E "line 1|Tests"', ['grep', '-E', 'line 1|Tests'], 'the lines matching grep -E "line 1|Tests"'],
      ['npm test', ['tail', '-40'], 'the last 40 lines'],
    ];
    for (const [command, argv, part] of cases) {
      const decision = decide(p, command);
      expect(decision.kind, command).toBe('deny');
      expect(decision.text, command).toContain(`check "test" PASSED in run ${runId}`);
      expect(decision.text, command).toContain('vitest: Tests 3 passed (3)');
      expect(decision.text, command).toContain(`Its stored output, ${part}, ANSI escapes removed:`);
      expect(replayed(decision.text, runId), command).toBe(real(argv, log));
      expect(decision.text, command).not.toContain('\x1b');
      expect(decision.text.endsWith(`To run the command anyway: VOUCH_FORCE=1 ${command}`), command).toBe(true);
      expect(decision.text, command).not.toContain('stderr is included');
    }
    // Without 2>&1 only stdout would go through the pipe: the log cannot tell, and the reason says so.
    const piped = decide(p, 'npm test | tail -3');
    expect(replayed(piped.text, runId)).toBe(real(['tail', '-3'], log));
    expect(piped.text).toContain('stderr is included');
    // A grep it cannot reproduce exactly is not replayed as grep: the last 40 lines, and why.
    const regex = decide(p, 'npm test 2>&1 | grep "line [0-9]"');
    expect(regex.kind).toBe('deny');
    expect(regex.text).toContain('vouch cannot reproduce grep "line [0-9]" exactly, so it shows the last 40 lines instead');
    expect(replayed(regex.text, runId)).toBe(real(['tail', '-40'], log));
  });

  it('a CURRENT FAIL is denied with its stored failure, not rerun; the reason says how to force a rerun', async () => {
    const p = project('replay-fail');
    const { runId, log } = await ran(p, 'unit', 1);
    const decision = decide(p, 'npm run unit 2>&1 | tail -20');
    expect(decision.kind).toBe('deny');
    expect(decision.text).toContain(`check "unit" FAILED in run ${runId}`);
    expect(decision.text).toContain(': exit 1 in ');
    expect(decision.text).toContain('vitest: Tests 1 failed | 2 passed (3)');
    expect(decision.text).toContain('so a rerun would fail the same way');
    expect(replayed(decision.text, runId)).toBe(real(['tail', '-20'], log));
    expect(decision.text).toContain('AssertionError: expected 120 to be 100');
    expect(decision.text).toContain('if you suspect a flaky test, run it anyway with: VOUCH_FORCE=1 npm run unit 2>&1 | tail -20');
    // Codex gets the same deny (it had no rewrite to offer, and ran the failing check again).
    const ageless = (text: string) => text.replace(/, \d+ s ago/, ', AGE ago');
    const codex = decide(p, 'npm run unit 2>&1 | tail -20', 'codex');
    expect(codex.kind).toBe('deny');
    expect(ageless(codex.text)).toBe(ageless(decision.text));
    // Nothing ran: still one receipt.
    expect((await inProcess(p).json(['log', 'unit'])).receipts).toHaveLength(1);
  });

  it('"replayFailures": false lets a CURRENT FAIL run again (rewritten), while a CURRENT PASS is still denied', async () => {
    const p = project('replay-off', { replayFailures: false });
    await ran(p, 'unit', 1);
    await ran(p, 'test');
    expect(decide(p, 'npm run unit')).toEqual({ kind: 'rewrite', text: expect.stringMatching(/ run unit --if-due$/) });
    expect(decide(p, 'npm run unit', 'codex').kind).toBe('pass');
    expect(decide(p, 'npm test').kind).toBe('deny');
    // The switch is a boolean: anything else is a config error, said as such.
    p.write('vouch.config.json', JSON.stringify({ schema: 1, replayFailures: 'no', checks: [{ name: 'test', kind: 'test', script: 'test' }] }));
    const refused = await inProcess(p).vouch(['status']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('replayFailures');
  });

  it('a CURRENT FAIL whose log is gone is run again: there is nothing to show', async () => {
    const p = project('replay-nolog');
    const { runId } = await ran(p, 'unit', 1);
    rmSync(join(p.root, '.vouch', 'logs', `${runId}.log`));
    expect(decide(p, 'npm run unit').kind).toBe('rewrite');
  });

  it('a chain names each check once, failures replayed first', async () => {
    const p = project('replay-chain');
    const pass = await ran(p, 'test');
    const fail = await ran(p, 'unit', 1);
    const decision = decide(p, 'npm test && npm run unit; npm test 2>&1 | tail -3');
    expect(decision.kind).toBe('deny');
    expect(decision.text.split(`check "test" PASSED in run ${pass.runId}`)).toHaveLength(2);
    expect(decision.text.split(`check "unit" FAILED in run ${fail.runId}`)).toHaveLength(2);
    expect(replayed(decision.text, fail.runId)).toBe(real(['tail', '-40'], fail.log));
  });

  it('the reason is bounded whatever the command: a 100 KB command, and a chain of 8,501 parts', { timeout: 120_000 }, async () => {
    const p = project('replay-bounded');
    await ran(p, 'test');
    const long = `npm test # ${'x'.repeat(100_000)}`;
    const one = decide(p, long);
    expect(one.kind).toBe('deny');
    expect(Buffer.byteLength(one.text)).toBeLessThanOrEqual(16 * 1024);
    expect(one.text).not.toContain('x'.repeat(100));
    expect(one.text).toContain('VOUCH_FORCE=1 in front of your command (npm test # xxx');

    const chain = Array.from({ length: 8501 }, () => 'npm test').join(' && ');
    const many = decide(p, chain);
    expect(many.kind).toBe('deny');
    expect(Buffer.byteLength(many.text)).toBeLessThanOrEqual(16 * 1024);
    expect(many.text.split('check "test" PASSED')).toHaveLength(2);
    expect(many.text).not.toContain('npm test && npm test && npm test && npm test && npm test && npm test && npm test');
  });
});

describe('vouch run --if-due on a skip', () => {
  it('prints the summary, with --replay the stored output, and with --json the summary fields', async () => {
    const p = project('replay-run');
    const { runId, log } = await ran(p, 'test');
    const plain = p.vouch(['run', 'test', '--if-due']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(new RegExp(`^vouch: skipped test: CURRENT PASS, receipt ${runId} from \\d+s ago, saved \\d+(ms|\\.\\ds)\\n`));
    expect(plain.stdout).toContain(`vouch: check "test" PASSED in run ${runId}`);
    expect(plain.stdout).toContain('vitest: Tests 3 passed (3)');
    expect(plain.stdout).not.toContain('--- output of run');

    const replay = await inProcess(p).vouch(['run', 'test', '--if-due', '--replay']);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toContain('vouch: Its stored output, the last 40 lines, ANSI escapes removed:');
    expect(replayed(replay.stdout, runId)).toBe(real(['tail', '-40'], log));

    const json = await inProcess(p).json(['run', 'test', '--if-due', '--replay']);
    const entry = json.runs[0];
    expect(entry).toMatchObject({ name: 'test', action: 'skipped', summary: { line: expect.stringContaining(`PASSED in run ${runId}`), counts: [{ tool: 'vitest', passed: 3, total: 3 }] } });
    expect(entry.output.text).toBe(real(['tail', '-40'], log));
    expect((await inProcess(p).json(['run', 'test', '--if-due'])).runs[0].output).toBeNull();
    expect((await inProcess(p).vouch(['run', 'test', '--replay'])).code).toBe(2);
  });

  it('saved time is the receipt duration less the skip own time, never below zero', async () => {
    const p = project('replay-saved');
    await ran(p, 'test');
    const json = await inProcess(p).json(['run', 'test', '--if-due']);
    const duration = (await inProcess(p).json(['log', 'test'])).receipts[0].duration_ms;
    expect(json.runs[0].summary.saved_ms).toBeGreaterThanOrEqual(0);
    expect(json.runs[0].summary.saved_ms).toBeLessThan(duration);
  });
});
