import { createLintStage } from './lintStage.js';
import type { StageFactories } from './prover.js';
import { createRunnerStage } from './runnerStage.js';
import { createTypeStage } from './typeStage.js';

/** The real stages, on the workspace's own TypeScript, linter and test runner (Vitest or Jest). */
export const STAGE_FACTORIES: StageFactories = {
  type: createTypeStage,
  lint: createLintStage,
  runtime: createRunnerStage,
};
