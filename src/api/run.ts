import type { CheckStatus } from '../core/decide.js';
import type { Receipt } from '../core/receipt.js';
import type { RunError } from '../exec/runCheck.js';
import type { LockHolder } from '../exec/runLock.js';
import { askObserver, type ObserverUse } from './askObserver.js';
import { selectChecks, type Project } from './project.js';
import type { Session } from './session.js';
import type { Output } from '../core/output.js';

export interface RunOptions {
  names: readonly string[];
  ifDue: boolean;
  observer: ObserverUse;
  env: NodeJS.ProcessEnv;
  stdout: Output;
  stderr: Output;
  onWait(holder: LockHolder): void;
  onStart(check: string, runId: string, argv: string[]): void;
  onSkip(status: CheckStatus): void;
  /** error: what vouch could not do after the check ran (the receipt not saved); the exit code stays the check's. */
  onFinish(receipt: Receipt, error: RunError | null): void;
}

export type RunEntry =
  | { name: string; action: 'skipped'; status: CheckStatus; exitCode: 0 }
  | { name: string; action: 'ran'; receipt: Receipt; exitCode: number; error: RunError | null };

export interface RunReport {
  runs: RunEntry[];
  /** The first failing check's own exit code, or 0. */
  exitCode: number;
  notices: string[];
}

/** Runs checks in the order asked (config order by default); an interrupt stops the rest. */
export async function run(project: Project, options: RunOptions): Promise<RunReport> {
  const definitions = await selectChecks(project, options.names);
  const { runCheck } = await import('../exec/runCheck.js');
  const notices: string[] = [];
  // Opened on first need: a check the observer finds current is skipped without the store.
  let opened: { session: Session; close(): void } | null = null;
  const session = async () => {
    if (!opened) {
      const { openSession } = await import('./session.js');
      opened = openSession(project, options.env);
    }
    return opened.session;
  };
  try {
    const runs: RunEntry[] = [];
    let exitCode = 0;
    for (const definition of definitions) {
      const outcome = await runCheck({
        root: project.root,
        stateDir: project.stateDir,
        excluded: project.excluded,
        definition,
        scripts: project.scripts,
        splitScript: project.splitScript,
        env: options.env,
        session,
        ifDue: options.ifDue,
        stdout: options.stdout,
        stderr: options.stderr,
        onWait: options.onWait,
        onStart: (runId, argv) => options.onStart(definition.name, runId, argv),
        ...(options.observer === 'auto'
          ? {
              askObserver: async () => {
                const answer = await askObserver(project, [definition], options.env, 'sync', notices);
                const [check] = answer?.checks ?? [];
                return check ? { inputs: check.inputs, receipt: check.receipt, observed: check.observed } : null;
              },
            }
          : {}),
      });
      if (outcome.action === 'skipped') {
        options.onSkip(outcome.status);
        runs.push({ name: definition.name, action: 'skipped', status: outcome.status, exitCode: 0 });
        continue;
      }
      options.onFinish(outcome.receipt, outcome.error);
      runs.push({ name: definition.name, action: 'ran', receipt: outcome.receipt, exitCode: outcome.exitCode, error: outcome.error });
      if (exitCode === 0) exitCode = outcome.exitCode;
      if (outcome.interrupted) break;
    }
    // The session's notices last: a damaged store can be found, and kept aside, mid-run.
    return { runs, exitCode, notices: [...notices, ...((opened as { session: Session } | null)?.session.notices ?? [])] };
  } finally {
    (opened as { close(): void } | null)?.close();
  }
}
