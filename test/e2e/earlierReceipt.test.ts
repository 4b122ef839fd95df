import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { configText, type Json } from '../helpers/answers.js';
import { inProcess, statusIn } from '../helpers/inProcess.js';
import { ObserverTracker, PATIENT, until } from '../helpers/observer.js';
import { CLI, cleanEnv, tempProject, type TempProject } from '../helpers/project.js';
import { A, EDITED, FILES, VERDICT } from '../helpers/verdictProject.js';
import { newestChangeMs, SETTLE_MS } from '../helpers/settle.js';

/*
 * After an edit and its revert, the newest receipt made on the same inputs answers (PASS or FAIL
 * as it recorded), in every path that answers: status by a scan and through the observer,
 * explain, run --if-due and the hook. Never a receipt of another definition or context.
 *
 * Runs, status, explain and log run in this process (test/helpers/inProcess.ts): the same
 * commands, without a Node start each. The hook, the MCP server and the observer (vouch start)
 * are processes of their own.
 */

const projects: TempProject[] = [];
const observers = new ObserverTracker();
afterEach(async () => {
  expect(await observers.cleanup(), 'observers that would not stop').toEqual([]);
  for (const project of projects.splice(0)) project.remove();
});

function project(name: string): TempProject {
  const p = tempProject(name, FILES);
  projects.push(p);
  return p;
}

const STRACE = process.platform === 'linux' && spawnSync('strace', ['-V']).status === 0;

const SCAN = cleanEnv({ VOUCH_NO_OBSERVER: '1' });

async function run(p: TempProject, args: string[], env: NodeJS.ProcessEnv = SCAN): Promise<{ code: number | null; stdout: string }> {
  const result = await inProcess(p).vouch(['run', ...args], { env });
  expect([0, 1], `vouch run ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toContain(result.code);
  return result;
}

/**
 * A traced run takes a file it read whose ctime is not before its start, less a clock slack of
 * 20 ms (fs/runEvidence.ts), for one changed while it ran. A run through the CLI starts long after
 * the test's last write (a Node start and vouch's loading); one in this process may start a few
 * milliseconds after it. So the traced test's runs first wait until nothing in the project changed
 * within SETTLE_MS: the edit is then one made before the run, as the test means it.
 */


async function settled(p: TempProject): Promise<void> {
  const newest = newestChangeMs(p.root);
  await until(() => Date.now() > newest + SETTLE_MS, `the last edit to be ${SETTLE_MS} ms old`, 5_000, 5);
}

async function latestRunId(p: TempProject): Promise<string> {
  return (await inProcess(p).json(['log', 'verdict'])).receipts[0].run_id;
}

async function scanStatus(p: TempProject, env: NodeJS.ProcessEnv = cleanEnv()): Promise<Json> {
  const out = await inProcess(p).json(['status', 'verdict', '--no-observer'], { env });
  expect(out.observation.source).toBe('scan');
  return out.checks[0];
}

function claudeHook(p: TempProject, command: string): Json {
  const input = { session_id: 's', transcript_path: '/tmp/t.jsonl', cwd: p.root, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } };
  const result = spawnSync(process.execPath, [CLI, 'hook', 'claude'], { cwd: p.root, input: JSON.stringify(input), env: SCAN, encoding: 'utf8', timeout: 60_000 });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout === '' ? null : JSON.parse(result.stdout);
}

describe('an earlier receipt answers after an edit and its revert', () => {
  it('edit: STALE; revert: CURRENT with the earlier run id, in status, explain, run --if-due and the hook', async () => {
    const p = project('earlier-revert');
    await run(p, ['verdict']);
    const first = await latestRunId(p);
    p.write('src/a.js', EDITED);
    expect((await scanStatus(p)).freshness).toBe('STALE');
    await run(p, ['verdict']);
    const second = await latestRunId(p);
    expect(second).not.toBe(first);

    p.write('src/a.js', A);
    const status = await scanStatus(p);
    expect(status.freshness, JSON.stringify(status.reasons)).toBe('CURRENT');
    expect(status.result).toBe('PASS');
    expect(status.reuse_eligible).toBe(true);
    expect(status.receipt.run_id).toBe(first);

    const explained = await inProcess(p).json(['explain', 'verdict', '--no-observer']);
    expect(explained.check.freshness).toBe('CURRENT');
    expect(explained.check.receipt.run_id).toBe(first);

    const hook = claudeHook(p, 'npm test 2>&1 | tail -5');
    expect(hook.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(hook.hookSpecificOutput.permissionDecisionReason).toContain(first);

    const skipped = await run(p, ['verdict', '--if-due']);
    expect(skipped.stdout).toContain('skipped');
    expect(skipped.stdout).toContain(first);
    expect((await inProcess(p).json(['log', 'verdict'])).receipts).toHaveLength(2);
  });

  it('the MCP status and run tools answer with the earlier receipt too', async () => {
    const p = project('earlier-mcp');
    await run(p, ['verdict']);
    const first = await latestRunId(p);
    p.write('src/a.js', EDITED);
    await run(p, ['verdict']);
    p.write('src/a.js', A);
    const env = Object.fromEntries(Object.entries(cleanEnv()).filter((pair): pair is [string, string] => pair[1] !== undefined));
    const client = new Client({ name: 'vouch-test', version: '0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], cwd: p.root, env, stderr: 'pipe' }));
    try {
      const status = (await client.callTool({ name: 'status', arguments: { checks: ['verdict'] } })) as { structuredContent: Json };
      expect(status.structuredContent.checks[0].freshness).toBe('CURRENT');
      expect(status.structuredContent.checks[0].receipt.run_id).toBe(first);
      const ran = (await client.callTool({ name: 'run', arguments: { checks: ['verdict'], if_due: true } })) as { structuredContent: Json };
      expect(JSON.stringify(ran.structuredContent)).toContain(first);
    } finally {
      await client.close();
    }
    expect((await inProcess(p).json(['log', 'verdict'])).receipts).toHaveLength(2);
  });

  it('a newer FAIL on the same inputs wins over the older PASS', async () => {
    const p = project('earlier-fail');
    await run(p, ['verdict']);
    p.write('outcome.txt', 'fail\n');
    await run(p, ['verdict']);
    const failed = await latestRunId(p);
    p.write('outcome.txt', 'pass\n');
    p.write('src/a.js', EDITED);
    await run(p, ['verdict']);
    p.write('src/a.js', A);

    const status = await scanStatus(p);
    expect(status.freshness).toBe('CURRENT');
    expect(status.result).toBe('FAIL');
    expect(status.reuse_eligible).toBe(false);
    expect(status.receipt.run_id).toBe(failed);
    // Not reusable: --if-due runs it. The hook replays that FAIL (docs/hooks.md, "Replay"), never the older PASS.
    const denied = claudeHook(p, 'npm test').hookSpecificOutput;
    expect(denied.permissionDecision).toBe('deny');
    expect(denied.permissionDecisionReason).toContain(`FAILED in run ${failed}`);
    expect(denied.permissionDecisionReason).not.toContain('PASSED');
    const rerun = await run(p, ['verdict', '--if-due']);
    expect(rerun.stdout).not.toContain('skipped');
    expect(await latestRunId(p)).not.toBe(failed);
  });

  it('a receipt made under another context does not answer; under its own context it does', async () => {
    const p = project('earlier-context');
    await run(p, ['verdict'], cleanEnv({ VOUCH_NO_OBSERVER: '1', MY_SETTING: '1' }));
    const first = await latestRunId(p);
    p.write('src/a.js', EDITED);
    await run(p, ['verdict'], cleanEnv({ VOUCH_NO_OBSERVER: '1', MY_SETTING: '2' }));
    const second = await latestRunId(p);
    p.write('src/a.js', A);

    const other = await scanStatus(p, cleanEnv({ MY_SETTING: '2' }));
    expect(other.freshness).toBe('STALE');
    expect(other.receipt.run_id).toBe(second);
    const own = await scanStatus(p, cleanEnv({ MY_SETTING: '1' }));
    expect(own.freshness).toBe('CURRENT');
    expect(own.receipt.run_id).toBe(first);
  });

  it('a receipt of another definition does not answer', async () => {
    const p = project('earlier-definition');
    await run(p, ['verdict']);
    p.write('vouch.config.json', configText([{ ...VERDICT, env: ['MY_SETTING', 'OTHER_SETTING'] }]).replace('{\n', '{\n  "packageManager": "npm",\n'));
    p.write('src/a.js', EDITED);
    await run(p, ['verdict']);
    const second = await latestRunId(p);
    p.write('src/a.js', A);
    const status = await scanStatus(p);
    expect(status.freshness).toBe('STALE');
    expect(status.receipt.run_id).toBe(second);
  });

  it.skipIf(!STRACE)('a traced check: after an edit, a run and the revert, the first receipt answers on its own evidence; a third state is STALE', async () => {
    const p = project('earlier-traced');
    p.write('vouch.config.json', JSON.stringify({ schema: 1, packageManager: 'npm', checks: [{ ...VERDICT, mode: 'traced' }] }, null, 2) + '\n');
    await settled(p);
    await run(p, ['verdict']);
    const firstStatus = await scanStatus(p);
    expect(firstStatus.freshness, JSON.stringify(firstStatus.reasons)).toBe('CURRENT');
    expect(firstStatus.receipt.evidence.mode).toBe('traced');
    const first = firstStatus.receipt.run_id;
    p.write('src/a.js', EDITED);
    await settled(p);
    await run(p, ['verdict']);
    const second = await latestRunId(p);
    p.write('src/a.js', A);
    const status = await scanStatus(p);
    expect(status.freshness, JSON.stringify(status.reasons)).toBe('CURRENT');
    expect(status.receipt.run_id).toBe(first);
    p.write('src/a.js', 'export const a = 3; // neither\n');
    const neither = await scanStatus(p);
    expect(neither.freshness).toBe('STALE');
    expect(neither.receipt.run_id).toBe(second);
  });

  it('the observer answers as the scan does, and the hook and run --if-due through it agree', async () => {
    const p = project('earlier-observer');
    await run(p, ['verdict']);
    const first = await latestRunId(p);
    p.write('src/a.js', EDITED);
    await run(p, ['verdict']);
    observers.start(p);
    const observerEnv = cleanEnv({ VOUCH_OBSERVER_TIMEOUT_MS: PATIENT });
    p.write('src/a.js', A);
    const out = await inProcess(p).json(['status', 'verdict', '--sync'], { env: observerEnv });
    expect(out.observation.source).toBe('observer');
    expect(out.checks[0].freshness).toBe('CURRENT');
    expect(out.checks[0].receipt.run_id).toBe(first);
    expect((await scanStatus(p)).receipt.run_id).toBe(first);
    const input = { session_id: 's', transcript_path: '/tmp/t.jsonl', cwd: p.root, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'npm test' } };
    const hook = spawnSync(process.execPath, [CLI, 'hook', 'claude'], { cwd: p.root, input: JSON.stringify(input), env: observerEnv, encoding: 'utf8', timeout: 60_000 });
    expect(JSON.parse(hook.stdout).hookSpecificOutput.permissionDecisionReason, 'the hook through the observer').toContain(first);
    const skipped = await run(p, ['verdict', '--if-due'], observerEnv);
    expect(skipped.stdout).toContain(first);
    expect((await statusIn(inProcess(p), 'verdict', observerEnv)).receipt.run_id).toBe(first);
  });
});
