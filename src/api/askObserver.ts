import type { CheckDefinition } from '../core/definition.js';
import type { Observation } from '../core/observation.js';
import type { Receipt } from '../core/receipt.js';
import { definitionDigest } from '../core/definition.js';
import type { EarlierTracedLook } from '../core/decide.js';
import { planCheck } from '../exec/checkPlan.js';
import { callObserver, deadlineFrom, findObserver, ObserverUnavailable } from '../observer/client.js';
import type { ObserveMode } from '../observer/protocol.js';
import { scriptsFor, type Project } from './project.js';
import type { CheckObservation } from './scan.js';

export type ObserverUse = 'auto' | 'off';

/** After a run (`since`): the sources written since. */
export interface RunFollowUp {
  written?: string[];
}

export interface ObserverAnswer {
  checks: Array<CheckObservation & RunFollowUp & { receipt: Receipt | null; earlier: Receipt | null; earlierTraced: EarlierTracedLook[] }>;
  observedAt: number;
  durationMs: number;
  /** The store's key for environment digests, so contexts are digested as a direct look would. */
  envKey: string;
}

/**
 * Asks the running observer for these checks' inputs and receipts. Null when
 * there is none, or it is unhealthy, slow or unreachable: the caller then
 * observes directly, and says why in `notices`.
 */
export async function askObserver(
  project: Project,
  definitions: CheckDefinition[],
  env: NodeJS.ProcessEnv,
  mode: ObserveMode,
  notices: string[],
  options: { entries?: boolean; deadlineMs?: number; since?: number; beforeRun?: boolean } = {},
): Promise<ObserverAnswer | null> {
  const found = findObserver(project.stateDir, project.configPath);
  if (!found) return null;
  const started = Date.now();
  let result;
  try {
    result = await callObserver(
      found.record.socket,
      'observe',
      {
        checks: definitions.map((definition) => ({ name: definition.name, inputs: definition.inputs, installed: definition.installed, definitionDigest: definitionDigest(definition) })),
        mode,
        ...(options.entries ? { entries: true } : {}),
        ...(options.since !== undefined ? { since: options.since } : {}),
        ...(options.beforeRun ? { beforeRun: true } : {}),
      },
      options.deadlineMs ?? deadlineFrom(env),
    );
  } catch (error) {
    if (!(error instanceof ObserverUnavailable)) throw error;
    notices.push(`${error.message}; observed directly instead`);
    return null;
  }
  if (!result.healthy) {
    notices.push(`the observer is not healthy (${result.reasons.map((reason) => reason.message).join('; ')}); observed directly instead`);
    return null;
  }
  const checks = definitions.map((definition, position) => {
    const answer = result.checks[position];
    if (!answer || answer.name !== definition.name) throw new Error('the observer answered for other checks');
    const inputs: Observation = {
      manifest: { digest: answer.manifestDigest, entries: answer.entries ?? [], count: answer.entries?.length ?? answer.inputCount },
      problems: answer.problems,
      healthy: true,
      source: 'observer',
      sourceIdentities: new Map(),
      ...(answer.changedEvidence ? { changedEvidence: answer.changedEvidence } : {}),
    };
    const observed = planCheck({ root: project.root, definition, scripts: scriptsFor(project, definition), splitScript: project.splitScript, env, envKey: result.envKey }).observed;
    return {
      definition,
      observed,
      inputs,
      receipt: answer.receipt,
      earlier: answer.earlier ?? null,
      earlierTraced: answer.earlierTraced ?? [],
      ...(answer.written ? { written: answer.written } : {}),
    };
  });
  return { checks, observedAt: result.observedAt, durationMs: Date.now() - started, envKey: result.envKey };
}
