import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { configText, statusOf, type Json } from '../helpers/answers.js';
import { ObserverTracker, PATIENT } from '../helpers/observer.js';
import { CLI, cleanEnv, tempProject, type TempProject } from '../helpers/project.js';
import { mulberry32, testSeed, withSeed } from '../helpers/seed.js';

/*
 * After an edit and its revert, the newest receipt made on the same inputs answers (PASS or FAIL
 * as it recorded), in every path that answers: status by a scan and through the observer,
 * explain, run --if-due and the hook. Never a receipt of another definition or context.
 */

const projects: TempProject[] = [];
const observers = new ObserverTracker();
afterEach(async () => {
  expect(await observers.cleanup(), 'observers that would not stop').toEqual([]);
  for (const project of projects.splice(0)) project.remove();
});

// The verdict depends on the inputs (a "bad" line fails) and on outcome.txt, which is not an input:
// a same-inputs rerun can then differ, as a flaky test does.
const VERDICT = {
  name: 'verdict',
  kind: 'test',
  script: 'test',
  inputs: ['src/**', 'verdict.cjs'],
  env: ['MY_SETTING'],
};
const VERDICT_JS = `const fs = require('fs');
const bad = fs.readdirSync('src').some((name) => fs.readFileSync('src/' + name, 'utf8').includes('bad'));
const flaky = fs.readFileSync('outcome.txt', 'utf8').trim() === 'fail';
process.exit(bad || flaky ? 1 : 0);
`;
const FILES: Record<string, string> = {
  'vouch.config.json': JSON.stringify({ schema: 1, packageManager: 'npm', checks: [VERDICT] }, null, 2) + '\n',
  'package.json': JSON.stringify({ name: 'fx', version: '1.0.0', private: true, scripts: { test: 'node verdict.cjs' } }, null, 2) + '\n',
  '.gitignore': 'node_modules/\n',
  'verdict.cjs': VERDICT_JS,
  'outcome.txt': 'pass\n',
  'src/a.js': 'export const a = 1;\n',
  'src/b.js': 'export const b = 1;\n',
};
const A = 'export const a = 1;\n';
const EDITED = 'export const a = 2; // edited\n';

function project(name: string): TempProject {
  const p = tempProject(name, FILES);
  projects.push(p);
  return p;
}

const STRACE = process.platform === 'linux' && spawnSync('strace', ['-V']).status === 0;

const SCAN = cleanEnv({ VOUCH_NO_OBSERVER: '1' });

function run(p: TempProject, args: string[], env: NodeJS.ProcessEnv = SCAN): { code: number | null; stdout: string } {
  const result = p.vouch(['run', ...args], { env });
  expect([0, 1], `vouch run ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toContain(result.code);
  return result;
}

function latestRunId(p: TempProject): string {
  return p.json(['log', 'verdict']).receipts[0].run_id;
}

function scanStatus(p: TempProject, env: NodeJS.ProcessEnv = cleanEnv()): Json {
  const out = p.json(['status', 'verdict', '--no-observer'], { env });
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
  it('edit: STALE; revert: CURRENT with the earlier run id, in status, explain, run --if-due and the hook', () => {
    const p = project('earlier-revert');
    run(p, ['verdict']);
    const first = latestRunId(p);
    p.write('src/a.js', EDITED);
    expect(scanStatus(p).freshness).toBe('STALE');
    run(p, ['verdict']);
    const second = latestRunId(p);
    expect(second).not.toBe(first);

    p.write('src/a.js', A);
    const status = scanStatus(p);
    expect(status.freshness, JSON.stringify(status.reasons)).toBe('CURRENT');
    expect(status.result).toBe('PASS');
    expect(status.reuse_eligible).toBe(true);
    expect(status.receipt.run_id).toBe(first);

    const explained = p.json(['explain', 'verdict', '--no-observer']);
    expect(explained.check.freshness).toBe('CURRENT');
    expect(explained.check.receipt.run_id).toBe(first);

    const hook = claudeHook(p, 'npm test 2>&1 | tail -5');
    expect(hook.hookSpecificOutput.permissionDecision).toBe('deny');
    expect(hook.hookSpecificOutput.permissionDecisionReason).toContain(first);

    const skipped = run(p, ['verdict', '--if-due']);
    expect(skipped.stdout).toContain('skipped');
    expect(skipped.stdout).toContain(first);
    expect(p.json(['log', 'verdict']).receipts).toHaveLength(2);
  });

  it('the MCP status and run tools answer with the earlier receipt too', async () => {
    const p = project('earlier-mcp');
    run(p, ['verdict']);
    const first = latestRunId(p);
    p.write('src/a.js', EDITED);
    run(p, ['verdict']);
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
    expect(p.json(['log', 'verdict']).receipts).toHaveLength(2);
  });

  it('a newer FAIL on the same inputs wins over the older PASS', () => {
    const p = project('earlier-fail');
    run(p, ['verdict']);
    p.write('outcome.txt', 'fail\n');
    run(p, ['verdict']);
    const failed = latestRunId(p);
    p.write('outcome.txt', 'pass\n');
    p.write('src/a.js', EDITED);
    run(p, ['verdict']);
    p.write('src/a.js', A);

    const status = scanStatus(p);
    expect(status.freshness).toBe('CURRENT');
    expect(status.result).toBe('FAIL');
    expect(status.reuse_eligible).toBe(false);
    expect(status.receipt.run_id).toBe(failed);
    // Not reusable: --if-due runs it. The hook replays that FAIL (docs/hooks.md, "Replay"), never the older PASS.
    const denied = claudeHook(p, 'npm test').hookSpecificOutput;
    expect(denied.permissionDecision).toBe('deny');
    expect(denied.permissionDecisionReason).toContain(`FAILED in run ${failed}`);
    expect(denied.permissionDecisionReason).not.toContain('PASSED');
    const rerun = run(p, ['verdict', '--if-due']);
    expect(rerun.stdout).not.toContain('skipped');
    expect(latestRunId(p)).not.toBe(failed);
  });

  it('a receipt made under another context does not answer; under its own context it does', () => {
    const p = project('earlier-context');
    run(p, ['verdict'], cleanEnv({ VOUCH_NO_OBSERVER: '1', MY_SETTING: '1' }));
    const first = latestRunId(p);
    p.write('src/a.js', EDITED);
    run(p, ['verdict'], cleanEnv({ VOUCH_NO_OBSERVER: '1', MY_SETTING: '2' }));
    const second = latestRunId(p);
    p.write('src/a.js', A);

    const other = scanStatus(p, cleanEnv({ MY_SETTING: '2' }));
    expect(other.freshness).toBe('STALE');
    expect(other.receipt.run_id).toBe(second);
    const own = scanStatus(p, cleanEnv({ MY_SETTING: '1' }));
    expect(own.freshness).toBe('CURRENT');
    expect(own.receipt.run_id).toBe(first);
  });

  it('a receipt of another definition does not answer', () => {
    const p = project('earlier-definition');
    run(p, ['verdict']);
    p.write('vouch.config.json', configText([{ ...VERDICT, env: ['MY_SETTING', 'OTHER_SETTING'] }]).replace('{\n', '{\n  "packageManager": "npm",\n'));
    p.write('src/a.js', EDITED);
    run(p, ['verdict']);
    const second = latestRunId(p);
    p.write('src/a.js', A);
    const status = scanStatus(p);
    expect(status.freshness).toBe('STALE');
    expect(status.receipt.run_id).toBe(second);
  });

  it.skipIf(!STRACE)('a traced check: after an edit, a run and the revert, the first receipt answers on its own evidence; a third state is STALE', () => {
    const p = project('earlier-traced');
    p.write('vouch.config.json', JSON.stringify({ schema: 1, packageManager: 'npm', checks: [{ ...VERDICT, mode: 'traced' }] }, null, 2) + '\n');
    run(p, ['verdict']);
    const firstStatus = scanStatus(p);
    expect(firstStatus.freshness, JSON.stringify(firstStatus.reasons)).toBe('CURRENT');
    expect(firstStatus.receipt.evidence.mode).toBe('traced');
    const first = firstStatus.receipt.run_id;
    p.write('src/a.js', EDITED);
    run(p, ['verdict']);
    const second = latestRunId(p);
    p.write('src/a.js', A);
    const status = scanStatus(p);
    expect(status.freshness, JSON.stringify(status.reasons)).toBe('CURRENT');
    expect(status.receipt.run_id).toBe(first);
    p.write('src/a.js', 'export const a = 3; // neither\n');
    const neither = scanStatus(p);
    expect(neither.freshness).toBe('STALE');
    expect(neither.receipt.run_id).toBe(second);
  });

  it('the observer answers as the scan does, and the hook and run --if-due through it agree', async () => {
    const p = project('earlier-observer');
    run(p, ['verdict']);
    const first = latestRunId(p);
    p.write('src/a.js', EDITED);
    run(p, ['verdict']);
    observers.start(p);
    const observerEnv = cleanEnv({ VOUCH_OBSERVER_TIMEOUT_MS: PATIENT });
    p.write('src/a.js', A);
    const out = p.json(['status', 'verdict', '--sync'], { env: observerEnv });
    expect(out.observation.source).toBe('observer');
    expect(out.checks[0].freshness).toBe('CURRENT');
    expect(out.checks[0].receipt.run_id).toBe(first);
    expect(scanStatus(p).receipt.run_id).toBe(first);
    const input = { session_id: 's', transcript_path: '/tmp/t.jsonl', cwd: p.root, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'npm test' } };
    const hook = spawnSync(process.execPath, [CLI, 'hook', 'claude'], { cwd: p.root, input: JSON.stringify(input), env: observerEnv, encoding: 'utf8', timeout: 60_000 });
    expect(JSON.parse(hook.stdout).hookSpecificOutput.permissionDecisionReason, 'the hook through the observer').toContain(first);
    const skipped = run(p, ['verdict', '--if-due'], observerEnv);
    expect(skipped.stdout).toContain(first);
    expect(statusOf(p, 'verdict', observerEnv).receipt.run_id).toBe(first);
  });
});

const SEED = testSeed(import.meta.url, 1919);
const STEPS = 20;

/** What a receipt is bound to: the inputs' contents, the context (MY_SETTING) and the definition (config variant). */
interface State {
  a: string;
  b: string;
  setting: string;
  config: number;
}
const keyOf = (s: State) => JSON.stringify(s);
// Same-size variants too: only the bytes tell them apart.
const A_VARIANTS = [A, 'export const a = 3;\n', EDITED, 'export const a = "bad";\n'];
const B_VARIANTS = ['export const b = 1;\n', 'export const b = 2;\n'];
const CONFIGS = [VERDICT, { ...VERDICT, env: ['MY_SETTING', 'OTHER_SETTING'] }];
const configFile = (variant: number) => JSON.stringify({ schema: 1, packageManager: 'npm', checks: [CONFIGS[variant]] }, null, 2) + '\n';

describe('edit-revert campaign: a CURRENT answer is always the newest run on exactly this state', () => {
  it(`random edits, reverts, context and definition changes, runs and reruns (seed ${SEED.value})`, { timeout: 240_000 }, async () => {
    const p = project('earlier-campaign');
    const random = mulberry32(SEED.value);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const state: State = { a: A, b: B_VARIANTS[0]!, setting: '1', config: 0 };
    const ranOn = new Map<string, string>();
    /** Run ids in the order they ran. */
    const runs: string[] = [];
    const history: string[] = [];
    let fromEarlier = 0;
    let current = 0;
    observers.start(p);
    await withSeed(SEED, async () => {
      const envNow = (extra: NodeJS.ProcessEnv = {}) => cleanEnv({ MY_SETTING: state.setting, ...extra });
      const runNow = (args: string[]) => {
        const before = runs.length;
        const result = p.vouch(['run', 'verdict', ...args, '--no-observer'], { env: envNow() });
        expect([0, 1], `${history.join('\n')}\n${result.stdout}\n${result.stderr}`).toContain(result.code);
        const receipts = p.json(['log', 'verdict']).receipts as Json[];
        if (receipts.length > before) {
          expect(receipts.length).toBe(before + 1);
          runs.push(receipts[0].run_id);
          ranOn.set(receipts[0].run_id, keyOf(state));
          history.push(`run ${args.join(' ')} -> ${receipts[0].run_id} ${receipts[0].result}`);
        } else {
          history.push(`run ${args.join(' ')} -> skipped`);
        }
      };
      runNow([]);
      for (let step = 0; step < STEPS; step++) {
        const roll = random();
        if (roll < 0.45) {
          state.a = pick(A_VARIANTS);
          p.write('src/a.js', state.a);
        } else if (roll < 0.6) {
          state.b = pick(B_VARIANTS);
          p.write('src/b.js', state.b);
        } else if (roll < 0.72) {
          state.setting = state.setting === '1' ? '2' : '1';
        } else if (roll < 0.82) {
          state.config = 1 - state.config;
          p.write('vouch.config.json', configFile(state.config));
        } else {
          // Not an input: a rerun on the same state may now differ, as a flaky test's does.
          p.write('outcome.txt', random() < 0.5 ? 'fail\n' : 'pass\n');
        }
        history.push(`step ${step}: ${keyOf(state)}`);
        if (random() < 0.4) runNow(random() < 0.5 ? ['--if-due'] : []);

        const scanned = p.json(['status', 'verdict', '--no-observer'], { env: envNow() }).checks[0];
        const asked = p.json(['status', 'verdict', '--sync'], { env: envNow({ VOUCH_OBSERVER_TIMEOUT_MS: PATIENT }) });
        expect(asked.observation.source).toBe('observer');
        const observed = asked.checks[0];
        const what = `${history.slice(-8).join('\n')}\nscan: ${JSON.stringify(scanned)}\nobserver: ${JSON.stringify(observed)}`;
        expect([observed.freshness, observed.result, observed.reuse_eligible, observed.receipt?.run_id], what).toEqual([scanned.freshness, scanned.result, scanned.reuse_eligible, scanned.receipt?.run_id]);
        if (scanned.freshness !== 'CURRENT') continue;
        current++;
        const answering = scanned.receipt.run_id as string;
        // The ground truth: the receipt ran on exactly this state, and no run on it is newer.
        expect(ranOn.get(answering), what).toBe(keyOf(state));
        const newest = runs.filter((id) => ranOn.get(id) === keyOf(state)).at(-1);
        expect(answering, what).toBe(newest);
        if (answering !== runs.at(-1)) fromEarlier++;
      }
    });
    console.log(`[edit-revert campaign] ${SEED.replay()}: ${runs.length} runs, ${current} CURRENT answers, ${fromEarlier} from an earlier receipt`);
    expect(current).toBeGreaterThan(0);
    expect(fromEarlier).toBeGreaterThan(0);
  });
});
