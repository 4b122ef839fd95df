import { afterEach, describe, expect, it } from 'vitest';
import { loadProject, scriptsFor, selectCheck } from '../../src/api/project.js';
import { openSession } from '../../src/api/session.js';
import { planCheck } from '../../src/exec/checkPlan.js';
import { runCheck, type ObserverLook } from '../../src/exec/runCheck.js';
import { InputScanner } from '../../src/fs/inputScanner.js';
import { reason } from '../../src/core/reason.js';
import { latestReceipt, loadManifest } from '../../src/store/receipts.js';
import { configText } from '../helpers/answers.js';
import { cleanEnv, tempProject, type TempProject } from '../helpers/project.js';

/*
 * runCheck with the observer stood in for by answers made here.
 *
 * A run the observer follows names a manifest the observer stores. When it could not (a full
 * disk, a busy store), the run's own store lacks it, and vouch scans for the lines after the run:
 * the receipt is saved if the inputs still have that digest, and not saved, with the reason,
 * if they moved.
 *
 * `run --if-due`: the observer's answer decides the skip, once. An answer whose inputs cannot
 * stand for a scan before the run (a problem here; a traced check in use) still decided, so the
 * run does not look at everything again to decide a second time. Without an answer, the run
 * decides on its own look.
 */

const projects: TempProject[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.remove();
});

async function setUp() {
  const p = tempProject('run-follow', {
    'vouch.config.json': configText([{ name: 'c', kind: 'custom', command: ['node', 'ok.cjs'] }]),
    'ok.cjs': 'process.exit(0);\n',
    'src/a.js': 'export const a = 1;\n',
  });
  projects.push(p);
  const env = cleanEnv();
  const project = await loadProject({ cwd: p.root });
  const definition = await selectCheck(project, 'c');
  const opened = openSession(project, env, { lazyStatCache: true });
  const { session } = opened;
  const truth = new InputScanner(project.root, project.excluded, session.statCache).observe(definition);
  const observed = planCheck({ root: project.root, definition, scripts: scriptsFor(project, definition), splitScript: project.splitScript, env, envKey: session.envKey }).observed;
  const look = (digest: string, after: boolean): ObserverLook => ({
    inputs: { manifest: { digest, entries: [], count: 4 }, problems: [], healthy: true, source: 'observer', sourceIdentities: new Map() },
    receipt: null,
    earlier: null,
    earlierTraced: [],
    observed,
    ...(after ? { written: [] } : {}),
  });
  const runWith = (ifDue: boolean, askObserver?: (since?: number) => Promise<ObserverLook | null>) =>
    runCheck({
      root: project.root,
      stateDir: project.stateDir,
      excluded: project.excluded,
      definition,
      scripts: scriptsFor(project, definition),
      splitScript: project.splitScript,
      env,
      session: async () => session,
      ifDue,
      stdout: { write: () => {} },
      stderr: { write: () => {} },
      onWait: () => {},
      onStart: () => {},
      ...(askObserver ? { askObserver } : {}),
    });
  const run = (afterDigest: string) => runWith(false, async (since?: number) => look(since === undefined ? truth.manifest.digest : afterDigest, since !== undefined));
  return { session, close: opened.close, truth, observed, run, runWith };
}

describe('a run the observer followed, whose manifest the observer could not store', () => {
  it('scans for the lines after the run, and saves the receipt when the inputs still have that digest', async () => {
    const { session, close, truth, run } = await setUp();
    try {
      const outcome = await run(truth.manifest.digest);
      expect(outcome.action).toBe('ran');
      if (outcome.action !== 'ran') return;
      expect(outcome.error).toBeNull();
      expect(outcome.receipt).toMatchObject({ manifestDigest: truth.manifest.digest, reuseEligible: true });
      expect(latestReceipt(session.db, 'c')?.runId).toBe(outcome.receipt.runId);
      expect(loadManifest(session.db, truth.manifest.digest)).toEqual(truth.manifest.entries);
    } finally {
      close();
    }
  });

  it('saves no receipt, and says why, when the inputs moved and that manifest cannot be made again', async () => {
    const { session, close, run } = await setUp();
    try {
      const outcome = await run('f'.repeat(64));
      expect(outcome.action).toBe('ran');
      if (outcome.action !== 'ran') return;
      expect(outcome.exitCode).toBe(0);
      expect(outcome.error?.code).toBe('manifest-unavailable');
      expect(outcome.error?.message).toMatch(/run the check again/);
      expect(latestReceipt(session.db, 'c')).toBeNull();
    } finally {
      close();
    }
  });
});

describe('run --if-due, decided by the observer', () => {
  it('runs when the observer found the receipt not reusable, and skips on its own look when no observer answers', async () => {
    const { session, close, truth, observed, runWith } = await setUp();
    try {
      expect((await runWith(false)).action).toBe('ran');
      const receipt = latestReceipt(session.db, 'c')!;
      // The files are as the receipt says: a look of the run's own finds it CURRENT.
      expect(receipt).toMatchObject({ manifestDigest: truth.manifest.digest, reuseEligible: true });
      let asked = 0;
      const changing = async (): Promise<ObserverLook> => {
        asked++;
        return {
          inputs: { manifest: { digest: truth.manifest.digest, entries: [], count: 1 }, problems: [reason('input-changing', 'src/a.js kept changing while vouch read it')], healthy: true, source: 'observer', sourceIdentities: new Map() },
          receipt,
          earlier: null,
          earlierTraced: [],
          observed,
        };
      };
      expect((await runWith(true, changing)).action).toBe('ran');
      expect(asked).toBeGreaterThanOrEqual(1);
      expect(latestReceipt(session.db, 'c')?.runId).not.toBe(receipt.runId);
      expect((await runWith(true, async () => null)).action).toBe('skipped');
    } finally {
      close();
    }
  });
});
