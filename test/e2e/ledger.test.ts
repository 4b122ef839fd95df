import Database from 'better-sqlite3';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it } from 'vitest';
import { claudeBash } from '../helpers/hookInput.js';
import { inProcess } from '../helpers/inProcess.js';
import { CLI, cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';

/*
 * The ledger, shadow mode and `vouch savings` through real processes: `vouch hook` with the
 * host's JSON on stdin, `vouch agent setup --shadow`, `vouch run --if-due`, and a writer killed
 * with SIGKILL in the middle of moving the ledger into the store. The runs, logs and savings
 * reports around them go through vouch in this process (test/helpers/inProcess.ts); `vouch agent`
 * keeps a process of its own, since what it installs names the script its process runs.
 */

const projects: TempProject[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.remove();
});

const FILES: Record<string, string> = {
  'vouch.config.json': JSON.stringify({ schema: 1, packageManager: 'npm', checks: [{ name: 'test', kind: 'test', script: 'test' }] }, null, 2) + '\n',
  // out/ is ignored, so out/fail is no input of the check: a stand-in for a flaky test, or an input vouch does not see.
  'package.json': JSON.stringify({ name: 'fx', version: '1.0.0', private: true, scripts: { test: 'node check.cjs' } }, null, 2) + '\n',
  '.gitignore': 'node_modules/\nout/\n',
  'check.cjs': "process.exit(require('node:fs').existsSync('out/fail') ? 1 : 0);\n",
  'src/a.js': 'export const a = 1;\n',
};

function project(name: string): TempProject {
  const p = tempProject(name, FILES);
  projects.push(p);
  return p;
}

function validator() {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/);
  for (const name of ['savings', 'agent-doctor', 'agent-setup']) ajv.addSchema(JSON.parse(readFileSync(join(REPO, 'schemas', `${name}.schema.json`), 'utf8')), `${name}.schema.json`);
  return (name: string, value: unknown) => {
    const validate = ajv.getSchema(`${name}.schema.json`)!;
    expect(validate(value) ? null : ajv.errorsText(validate.errors), JSON.stringify(value, null, 2)).toBeNull();
  };
}
const expectValid = validator();

/** A login shell that finds no vouch: setup then writes this install's node and script by path. */
function shellNone(p: TempProject): string {
  const path = join(p.root, 'out', 'shell-none');
  p.write('out/shell-none', '#!/bin/sh\nexit 1\n');
  chmodSync(path, 0o755);
  return path;
}

function hook(p: TempProject, command: string, args: string[] = [], env: NodeJS.ProcessEnv = cleanEnv()): { code: number | null; stdout: string; stderr: string } {
  const input = { ...claudeBash(p.root, command), session_id: 'session-1' };
  const result = spawnSync(process.execPath, [CLI, 'hook', 'claude', ...args], { cwd: p.root, input: JSON.stringify(input), env, encoding: 'utf8', timeout: 60_000 });
  if (result.error) throw result.error;
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function savings(p: TempProject, args: string[] = []): Promise<any> {
  const out = await inProcess(p).json(['savings', ...args]);
  expectValid('savings', out);
  return out;
}

async function ran(p: TempProject, args: string[]): Promise<void> {
  const result = await inProcess(p).vouch(args);
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
}

describe('shadow mode', () => {
  it('setup --shadow installs hooks that decide and record a deny, but let the command run as typed; --enforce turns them on', async () => {
    const p = project('ledger-shadow');
    const env = cleanEnv({ SHELL: shellNone(p), HOME: join(p.root, 'out') });
    const setup = JSON.parse(p.vouch(['agent', 'setup', 'claude', '--apply', '--shadow', '--no-mcp', '--json'], { env }).stdout);
    expectValid('agent-setup', setup);
    expect(setup.command.hook_mode).toBe('shadow');
    expect(setup.command.hook_command).toMatch(/ hook claude --shadow$/);
    const settings = JSON.parse(readFileSync(join(p.root, '.claude', 'settings.local.json'), 'utf8'));
    const installed: string[] = Object.values(settings.hooks as Record<string, Array<{ hooks: Array<{ command: string }> }>>).flatMap((groups) => groups.flatMap((group) => group.hooks.map((handler) => handler.command)));
    expect(installed).toHaveLength(2);
    for (const command of installed) expect(command).toBe(setup.command.hook_command);

    const doctor = JSON.parse(p.vouch(['agent', 'doctor', 'claude', '--json'], { env }).stdout);
    expectValid('agent-doctor', doctor);
    expect(doctor.hosts[0].mode).toBe('shadow');
    expect(doctor.hosts[0].items.find((item: { id: string }) => item.id === 'hooks').state).toBe('intact');
    expect(p.vouch(['agent', 'doctor', 'claude'], { env }).stdout).toContain('mode: shadow');

    await ran(p, ['run', 'test']);
    // Exactly what the installed entry runs: this node, this script, hook claude --shadow.
    const shadow = hook(p, 'npm test 2>&1 | tail -5', ['--shadow']);
    expect(shadow).toEqual({ code: 0, stdout: '', stderr: '' });
    // The same call in enforce mode denies: shadow mode decided the same, and said nothing.
    expect(JSON.parse(hook(p, 'npm test 2>&1 | tail -5').stdout).hookSpecificOutput.permissionDecision).toBe('deny');

    const report = await savings(p);
    expect(report.commands).toEqual({ seen: 2, matched: 2, checks_matched: 2, shadow: 1 });
    expect(report.shadow.decisions).toEqual({ deny: 1, rewrite: 0, pass: 0 });
    expect(report.decisions).toMatchObject({ deny: 1, rewrite: 0, pass: 0 });
    expect(report.shadow.would_avoid.decisions).toBe(1);
    expect(report.shadow.would_avoid.by_session).toEqual([expect.objectContaining({ session: 'session-1', host: 'claude', count: 1 })]);

    // Setup without a mode keeps shadow; --enforce writes the plain entries back.
    const again = JSON.parse(p.vouch(['agent', 'setup', 'claude', '--apply', '--no-mcp', '--json'], { env }).stdout);
    expect(again.command.hook_mode).toBe('shadow');
    expect(again.items.find((item: { id: string }) => item.id === 'hooks').action).toBe('unchanged');
    const enforce = JSON.parse(p.vouch(['agent', 'setup', 'claude', '--apply', '--enforce', '--no-mcp', '--json'], { env }).stdout);
    expect(enforce.command.hook_mode).toBe('enforce');
    expect(enforce.command.hook_command).toMatch(/ hook claude$/);
    expect(readFileSync(join(p.root, '.claude', 'settings.local.json'), 'utf8')).not.toContain('--shadow');
    expect(JSON.parse(p.vouch(['agent', 'doctor', 'claude', '--json'], { env }).stdout).hosts[0].mode).toBe('enforce');
    expect(p.vouch(['agent', 'doctor', '--shadow'], { env }).code).toBe(2);
  });
});

describe('vouch savings', () => {
  it('reports denies, passes, skips and forced reruns from the ledger, and flags a rerun that differs as a bug', async () => {
    const p = project('ledger-savings');
    await ran(p, ['run', 'test']);
    expect(hook(p, 'ls -la').stdout).toBe('');
    expect(JSON.parse(hook(p, 'npm test').stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    // A forced command typed as the check is rewritten to a plain `vouch run test`: it runs, and its result is kept.
    const forced = JSON.parse(hook(p, 'VOUCH_FORCE=1 npm test').stdout).hookSpecificOutput;
    expect(forced.permissionDecision).toBeUndefined();
    expect(forced.updatedInput.command).toMatch(/^VOUCH_FORCE=1 .* run test$/);
    // Run from Claude Code's Bash tool (a rewrite), the skip counts in the hook's session.
    expect((await inProcess(p).vouch(['run', 'test', '--if-due', '--no-observer'], { env: cleanEnv({ CLAUDE_CODE_SESSION_ID: 'session-1' }) })).stdout).toContain('skipped test');
    // The forced rerun, as Claude Code runs it: same inputs, same result.
    const receiptsBefore = (await inProcess(p).json(['log', 'test'])).receipts.length;
    const shell = spawnSync('bash', ['-c', forced.updatedInput.command], { cwd: p.root, env: cleanEnv(), encoding: 'utf8' });
    expect(shell.status, shell.stderr).toBe(0);
    expect(shell.stderr).toMatch(/running test/);
    expect((await inProcess(p).json(['log', 'test'])).receipts.length).toBe(receiptsBefore + 1);

    let report = await savings(p, ['--since', '1h']);
    expect(report.commands).toEqual({ seen: 3, matched: 2, checks_matched: 2, shadow: 0 });
    expect(report.decisions).toEqual({ deny: 1, rewrite: 1, pass: 1, skip: 1 });
    expect(report.avoided.decisions).toBe(2);
    expect(report.avoided.by_check.map((row: { check: string }) => row.check)).toEqual(['test']);
    expect(report.avoided.by_session).toMatchObject([{ session: 'session-1', host: 'claude', count: 2 }]);
    expect(report.forced).toMatchObject({ count: 1, by_check: [{ check: 'test', count: 1 }], latest: [{ command: 'VOUCH_FORCE=1 npm test', checks: ['test'], session: 'session-1' }] });
    expect(report.reruns).toHaveLength(1);
    expect(report.reruns[0]).toMatchObject({ check: 'test', result: 'PASS', previous_result: 'PASS', differs: false, after_force: true });
    expect(report.differing).toBe(0);

    // out/fail is not an input: the check now fails on inputs vouch calls unchanged.
    p.write('out/fail', '');
    expect((await inProcess(p).vouch(['run', 'test'])).code).toBe(1);
    report = await savings(p);
    expect(report.differing).toBe(1);
    expect(report.reruns.at(-1)).toMatchObject({ result: 'FAIL', exit_code: 1, previous_result: 'PASS', differs: true });
    const text = await inProcess(p).vouch(['savings']);
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n')[0]).toMatch(/^BUG: test run \S+ FAIL \(exit 1\) on the same inputs as run \S+, which was PASS/);
    // The spool was moved into the store.
    expect(existsSync(join(p.root, '.vouch', 'ledger.jsonl'))).toBe(false);
    expect((await inProcess(p).vouch(['savings', '--since', '2w'])).code).toBe(2);
  });

  it('a spool of garbage, a dropped table and a state dir without a ledger are reported on, never a failure', async () => {
    const p = project('ledger-damage');
    expect((await savings(p)).commands.seen).toBe(0);
    await ran(p, ['run', 'test']);
    writeFileSync(join(p.root, '.vouch', 'ledger.jsonl'), '\u0000\u0001 not json\n{"at":1}\n');
    expect(JSON.parse(hook(p, 'npm test').stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    expect((await savings(p)).decisions.deny).toBe(1);
    const db = new Database(join(p.root, '.vouch', 'state.db'));
    db.exec('DROP TABLE ledger');
    db.close();
    expect(JSON.parse(hook(p, 'npm test').stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    expect((await savings(p)).decisions.deny).toBe(1);
  });
});

describe('Codex', () => {
  it('a Codex deny is recorded with its host and session', async () => {
    const p = project('ledger-codex');
    await ran(p, ['run', 'test']);
    const input = { session_id: '0199a213-81c0-7800-8aa1-bbab2a035a53', turn_id: 'turn-1', cwd: p.root, hook_event_name: 'PreToolUse', model: 'gpt-5.5-codex', tool_name: 'Bash', tool_input: { command: 'npm test' }, tool_use_id: 'call_abc' };
    const result = spawnSync(process.execPath, [CLI, 'hook', 'codex'], { cwd: p.root, input: JSON.stringify(input), env: cleanEnv(), encoding: 'utf8', timeout: 60_000 });
    expect(JSON.parse(result.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    const report = await savings(p);
    expect(report.decisions.deny).toBe(1);
    expect(report.avoided.by_session).toEqual([expect.objectContaining({ session: input.session_id, host: 'codex', count: 1 })]);
  });
});

describe('the spool', () => {
  it('a hook that finds the spool past 1 MB moves it into the store itself, applying the config\'s retention', async () => {
    const p = project('ledger-spool');
    p.write('vouch.config.json', JSON.stringify({ ...JSON.parse(FILES['vouch.config.json']!), ledger: { days: 30, rows: 1000 } }));
    await ran(p, ['run', 'test']);
    const line = JSON.stringify({ at: Date.now(), source: 'hook', host: 'codex', session: 'old', mode: 'enforce', decision: 'pass', forced: false, command: 'x'.repeat(400), checks: [], receipts: [], latency_ms: 1 }) + '\n';
    writeFileSync(join(p.root, '.vouch', 'ledger.jsonl'), line.repeat(Math.ceil((1024 * 1024) / line.length)));
    expect(hook(p, 'git status').stdout).toBe('');
    expect(existsSync(join(p.root, '.vouch', 'ledger.jsonl'))).toBe(false);
    const db = new Database(join(p.root, '.vouch', 'state.db'), { readonly: true });
    try {
      // The config keeps 1,000 rows: the newest, the hook's own among them.
      expect(db.prepare('SELECT count(*) FROM ledger').pluck().get()).toBe(1000);
      expect(db.prepare('SELECT command FROM ledger ORDER BY seq DESC LIMIT 1').pluck().get()).toBe('git status');
    } finally {
      db.close();
    }
  });
});

describe('skips outside the hook', () => {
  it('vouch run --if-due and the MCP run tool record each skip, with the receipt it relied on and no session', async () => {
    const p = project('ledger-skips');
    await ran(p, ['run', 'test']);
    const receipt = (await inProcess(p).json(['log'])).receipts[0].run_id as string;
    expect((await inProcess(p).vouch(['run', 'test', '--if-due'])).code).toBe(0);
    const env = Object.fromEntries(Object.entries(cleanEnv()).filter((pair): pair is [string, string] => pair[1] !== undefined));
    const client = new Client({ name: 'vouch-test', version: '0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], cwd: p.root, env, stderr: 'pipe' }));
    try {
      const result = (await client.callTool({ name: 'run', arguments: { checks: ['test'], if_due: true } })) as { structuredContent?: { runs?: Array<{ action: string }> } };
      expect(result.structuredContent?.runs?.[0]?.action).toBe('skipped');
    } finally {
      await client.close();
    }
    const report = await savings(p);
    expect(report.decisions.skip).toBe(2);
    expect(report.avoided.by_session).toEqual([expect.objectContaining({ session: null, host: null, count: 2 })]);
    const db = new Database(join(p.root, '.vouch', 'state.db'), { readonly: true });
    try {
      const rows = db.prepare('SELECT source, decision, session, checks, receipts FROM ledger ORDER BY seq').all() as Array<{ source: string; receipts: string }>;
      expect(rows.map((row) => row.source)).toEqual(['run', 'mcp']);
      for (const row of rows) expect(JSON.parse(row.receipts)).toEqual([expect.objectContaining({ check: 'test', run_id: receipt })]);
    } finally {
      db.close();
    }
  });
});

describe('a crash', () => {
  it('SIGKILL while the ledger is moved into the store leaves a readable store, and nothing counted twice', async () => {
    const p = project('ledger-crash');
    await ran(p, ['run', 'test']);
    const stateDir = join(p.root, '.vouch');
    // A writer that spools and moves entries as fast as it can, until killed.
    const script = `
      const { appendLedger } = await import(${JSON.stringify(join(REPO, 'dist', 'store', 'ledgerSpool.js'))});
      const { ingestLedger } = await import(${JSON.stringify(join(REPO, 'dist', 'store', 'ledger.js'))});
      const { openStore } = await import(${JSON.stringify(join(REPO, 'dist', 'store', 'openStore.js'))});
      const store = openStore(${JSON.stringify(stateDir)});
      let n = 0;
      process.stdout.write('started\\n');
      for (;;) {
        for (let i = 0; i < 500; i++) appendLedger(${JSON.stringify(stateDir)}, { at: Date.now(), source: 'hook', host: 'claude', session: 's', mode: 'enforce', decision: 'pass', forced: false, command: 'ls ' + n++, checks: [], receipts: [], latency_ms: 1 });
        await ingestLedger(store.db, ${JSON.stringify(stateDir)}, undefined);
      }`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: p.root, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const deadline = Date.now() + 20_000;
    while (!out.includes('started') && Date.now() < deadline) await delay(10);
    await delay(700);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('close', resolve));

    const db = new Database(join(stateDir, 'state.db'));
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const commands = db.prepare('SELECT command FROM ledger').pluck().all() as string[];
      expect(commands.length).toBeGreaterThan(0);
      expect(new Set(commands).size).toBe(commands.length);
    } finally {
      db.close();
    }
    // What was spooled but not moved is moved now, still without a double.
    const report = await savings(p);
    expect(report.commands.seen).toBeGreaterThan(0);
    const db2 = new Database(join(stateDir, 'state.db'), { readonly: true });
    try {
      const commands = db2.prepare('SELECT command FROM ledger').pluck().all() as string[];
      expect(new Set(commands).size).toBe(commands.length);
      expect(report.commands.seen).toBe(commands.length);
    } finally {
      db2.close();
    }
    expect(JSON.parse(hook(p, 'npm test').stdout).hookSpecificOutput.permissionDecision).toBe('deny');
  });
});
