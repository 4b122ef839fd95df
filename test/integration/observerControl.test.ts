import { afterEach, describe, expect, it } from 'vitest';
import { run as observerCommand } from '../../src/cli/commands/observer.js';
import { run as stopCommand } from '../../src/cli/commands/stop.js';
import type { CliIo } from '../../src/cli/io.js';
import { callObserver } from '../../src/observer/client.js';
import { serveObserver, type ObserverReady } from '../../src/observer/daemon.js';
import { fakeObserverOptions } from '../helpers/fakeWatcher.js';
import { cleanEnv, tempProject, type TempProject } from '../helpers/project.js';

/*
 * "vouch observer" and "vouch stop" share one body (src/cli/observerControl.ts):
 * run here in process, with the project's state dir as the only thing they
 * read. The spawned CLI's output is covered by test/observer.test.ts.
 */

const CONFIG = JSON.stringify({ schema: 1, checks: [{ name: 'check', kind: 'custom', command: ['true'], inputs: ['src/**'] }] });

const projects: TempProject[] = [];
const stops: Array<() => Promise<unknown>> = [];
let umask = process.umask();
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  for (const project of projects.splice(0)) project.remove();
  process.umask(umask);
});

function project(): TempProject {
  const made = tempProject('observer-control', { 'vouch.config.json': CONFIG, 'src/a.ts': 'export const a = 1;\n', '.gitignore': '.vouch/\n' });
  projects.push(made);
  return made;
}

async function command(run: (argv: string[], io: CliIo) => Promise<number>, p: TempProject, argv: string[] = []) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { cwd: p.root, env: cleanEnv(), isTty: async () => false, stdout: { write: (chunk) => (stdout += String(chunk)) }, stderr: { write: (chunk) => (stderr += String(chunk)) } };
  const code = await run(argv, io);
  return { code, stdout, stderr };
}

describe('with no observer running', () => {
  it('vouch observer says so, as text and as JSON', async () => {
    const p = project();
    await expect(command(observerCommand, p)).resolves.toEqual({ code: 0, stdout: 'no observer is running; "vouch start" starts one\n', stderr: '' });
    await expect(command(observerCommand, p, ['--json'])).resolves.toEqual({ code: 0, stdout: '{\n  "schema": 1,\n  "running": false\n}\n', stderr: '' });
  });

  it('vouch stop stops none, as text and as JSON', async () => {
    const p = project();
    await expect(command(stopCommand, p)).resolves.toEqual({ code: 0, stdout: 'no observer is running\n', stderr: '' });
    await expect(command(stopCommand, p, ['--json'])).resolves.toEqual({ code: 0, stdout: '{\n  "schema": 1,\n  "action": "not-running",\n  "pid": null\n}\n', stderr: '' });
  });

  it('both refuse an unknown flag as a usage error naming the command', async () => {
    const p = project();
    await expect(command(stopCommand, p, ['--now'])).rejects.toMatchObject({ code: 'usage', message: expect.stringContaining('See "vouch stop --help".') });
    await expect(command(observerCommand, p, ['--now'])).rejects.toMatchObject({ code: 'usage', message: expect.stringContaining('See "vouch observer --help".') });
  });
});

describe('with an observer running', () => {
  it("vouch observer reports the observer's figures in snake_case JSON", async () => {
    const p = project();
    let ready: ObserverReady | null = null;
    const done = serveObserver(fakeObserverOptions(p.root, { onReady: (made) => (ready = made), log: () => undefined }));
    stops.push(async () => {
      if (ready) await callObserver(ready.socket, 'stop', {}, 2_000).catch(() => undefined);
      await done;
    });
    while (!ready) await new Promise((resolve) => setTimeout(resolve, 10));
    const socket = (ready as ObserverReady).socket;
    const { code, stdout } = await command(observerCommand, p, ['--json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(Object.keys(report)).toEqual([
      'schema',
      'running',
      'pid',
      'version',
      'uptime_ms',
      'healthy',
      'reasons',
      'watched_paths',
      'index_files',
      'memory_rss_bytes',
      'events',
      'overflows',
      'rescans',
      'rescans_by_reason',
      'last_rescan',
      'patches',
      'last_patch',
      'evidence_looks',
      'ready_ms',
      'socket',
    ]);
    expect(report).toMatchObject({ schema: 1, running: true, pid: process.pid, version: '9.9.9', healthy: true, reasons: [], watched_paths: 3, index_files: 1, socket });
    expect(report.last_rescan).toMatchObject({ reason: 'first-index' });
    expect(report.rescans_by_reason).toEqual([{ reason: 'first-index', count: report.rescans }]);
    expect([report.patches, report.last_patch]).toEqual([0, null]);
    expect(report.evidence_looks).toEqual({ full: 0, partial: 0, entries: 0 });
    const text = await command(observerCommand, p);
    expect(text.stdout).toContain(`pid            ${process.pid}`);
  });
});
