import { decideObserved, type CheckStatus } from '../core/decide.js';
import type { ObserveMode } from '../observer/protocol.js';
import { askObserver, type ObserverUse } from './askObserver.js';
import { selectChecks, type Project } from './project.js';

export interface StatusReport {
  observation: { healthy: boolean; source: 'scan' | 'observer'; mode: ObserveMode | null; observedAt: number; durationMs: number };
  checks: CheckStatus[];
  notices: string[];
}

export interface StatusOptions {
  /** 'only': the observer's answer or ObserverDidNotAnswer, never a direct look (a status served inside the observer). */
  observer: ObserverUse | 'only';
  mode: ObserveMode;
  /** The observer was asked already and did not answer, for this reason: it is not asked again. */
  unavailable?: string;
}

/** No answer from the observer where only its answer would do; the reasons are the notices a direct look would have shown. */
export class ObserverDidNotAnswer extends Error {}

export async function status(
  project: Project,
  names: readonly string[],
  env: NodeJS.ProcessEnv,
  options: StatusOptions = { observer: 'auto', mode: 'sync' },
): Promise<StatusReport> {
  const definitions = await selectChecks(project, names);
  const notices: string[] = [];
  if (options.unavailable !== undefined) notices.push(`${options.unavailable}; observed directly instead`);
  else if (options.observer !== 'off') {
    const answer = await askObserver(project, definitions, env, options.mode, notices);
    if (!answer && options.observer === 'only') throw new ObserverDidNotAnswer(notices.join('; ') || 'no observer runs');
    if (answer) {
      return {
        observation: { healthy: true, source: 'observer', mode: options.mode, observedAt: answer.observedAt, durationMs: answer.durationMs },
        checks: answer.checks.map(({ definition, observed, inputs, receipt, earlier, earlierTraced }) => decideObserved(definition, observed, inputs, receipt, earlier, earlierTraced)),
        notices,
      };
    }
  }
  // Loaded only now, as the scan below. git lists the sources and the install trees are walked
  // on other threads from here on, while the scan's code loads and the store opens.
  const { startScans } = await import('../fs/startedScans.js');
  const scans = startScans(project, definitions);
  // Loaded only now: a healthy observer spares this process the SQLite driver and the scan.
  const { scanStatus } = await import('./scan.js');
  const scanned = await scanStatus(project, definitions, env, scans);
  return {
    observation: { healthy: true, source: 'scan', mode: null, observedAt: scanned.observedAt, durationMs: scanned.durationMs },
    checks: scanned.checks,
    notices: [...notices, ...scanned.notices],
  };
}
