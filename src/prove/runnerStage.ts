import { createJestStage } from './jestStage.js';
import { createRuntimeStage } from './runtimeStage.js';
import type { StageInstance } from './stage.js';
import { pickRunner } from './testRunner.js';

/**
 * The runtime stage for a workspace: its Vitest, or its Jest when Jest is
 * the runner it uses (pickRunner). The choice is made once; a stage whose
 * runner is no longer the workspace's reports itself stale, so a resident
 * prover replaces it and the verdict names the runner that judged.
 */
export function createRunnerStage(workspace: string): StageInstance {
  const runner = pickRunner(workspace);
  const stage = runner === 'jest' ? createJestStage(workspace) : createRuntimeStage(workspace);
  const stale = stage.stale.bind(stage);
  return Object.assign(stage, { stale: () => stale() || pickRunner(workspace) !== runner });
}
