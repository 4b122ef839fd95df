import { afterEach, describe, expect, it } from 'vitest';
import { loadProject, scriptsFor, selectCheck } from '../../src/api/project.js';
import { openSession } from '../../src/api/session.js';
import { planCheck } from '../../src/exec/checkPlan.js';
import { runCheck, type ObserverLook } from '../../src/exec/runCheck.js';
import { InputScanner } from '../../src/fs/inputScanner.js';
import { reason } from '../../src/core/reason.js';
import { latestReceipt } from '../../src/store/receipts.js';
import { configText } from '../helpers/answers.js';
import { cleanEnv, tempProject, type TempProject } from '../helpers/project.js';

/*
 * `run --if-due` with the observer up: its answer decides the skip, once. An answer whose inputs
 * cannot stand for a scan before the run (a problem here; a traced check in use) still decided,
 * so the run does not look at everything again to decide a second time. Without an answer, the
 * run decides on its own look.
 */

const projects: TempProject[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.remove();
});

describe('run --if-due, decided by the observer', () => {
  it('runs when the observer found the receipt not reusable, and skips on its own look when no observer answers', async () => {
    const p = tempProject('run-decides', {
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
    try {
      const observed = planCheck({ root: project.root, definition, scripts: scriptsFor(project, definition), splitScript: project.splitScript, env, envKey: session.envKey }).observed;
      const run = (ifDue: boolean, askObserver?: () => Promise<ObserverLook | null>) =>
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
      const first = await run(false);
      expect(first.action).toBe('ran');
      const receipt = latestReceipt(session.db, 'c')!;
      expect(receipt.reuseEligible).toBe(true);

      // The files are as the receipt says: a look of the run's own would find it CURRENT.
      const truth = new InputScanner(project.root, project.excluded, session.statCache).observe(definition);
      expect(truth.manifest.digest).toBe(receipt.manifestDigest);
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
      const decided = await run(true, changing);
      expect(decided.action).toBe('ran');
      expect(asked).toBeGreaterThanOrEqual(1);
      expect(latestReceipt(session.db, 'c')?.runId).not.toBe(receipt.runId);

      const onItsOwn = await run(true, async () => null);
      expect(onItsOwn.action).toBe('skipped');
    } finally {
      opened.close();
    }
  });
});
