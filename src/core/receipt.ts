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
  evidence: ReceiptEvidence;
}

/**
 * What the receipt's inputs are. 'traced': `manifestDigest` is the digest of its evidence
 * entries (core/evidence.ts), what the run touched; 'declared': of its input manifest, what
 * the globs matched. A traced check whose run could not be traced has declared evidence and a
 * note saying why. Notes never make a receipt less reusable: they say how it was made.
 */
export interface ReceiptEvidence {
  mode: 'declared' | 'traced';
  /** trace-unavailable, trace-incomplete, read-outside-inputs. */
  notes: Reason[];
}

export const DECLARED_EVIDENCE: ReceiptEvidence = Object.freeze({ mode: 'declared', notes: [] }) as ReceiptEvidence;
