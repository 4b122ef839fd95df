import type { CheckContext } from './context.js';
import type { CheckDefinition } from './definition.js';
import type { Reason } from './reason.js';

export type CheckResult = 'PASS' | 'FAIL';

/** An immutable record of one run. The manifest itself is stored apart and loaded only when needed. */
export interface Receipt {
  runId: string;
  check: string;
  definition: CheckDefinition;
  definitionDigest: string;
  context: CheckContext;
  contextDigest: string;
  manifestDigest: string;
  inputCount: number;
  result: CheckResult;
  exitCode: number | null;
  signal: string | null;
  startedAt: number;
  finishedAt: number;
  durationMs: number;
  logPath: string;
  reuseEligible: boolean;
  /** Why the receipt itself may not be reused, even while it is CURRENT. */
  reasons: Reason[];
}
