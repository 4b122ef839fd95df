import { createLintStage } from './lintStage.js';
import type { StageFactories } from './prover.js';
import { createRuntimeStage } from './runtimeStage.js';
import { createTypeStage } from './typeStage.js';

/** The real stages, on the workspace's own TypeScript, linter and Vitest. */
export const STAGE_FACTORIES: StageFactories = {
  type: createTypeStage,
  lint: createLintStage,
  runtime: createRuntimeStage,
};
