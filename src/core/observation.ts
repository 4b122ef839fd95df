import type { CheckContext } from './context.js';
import type { Manifest } from './manifest.js';
import type { Reason } from './reason.js';

/** A fresh look at a check's inputs. Problems are inputs that could not be observed. */
export interface Observation {
  manifest: Manifest;
  problems: Reason[];
  healthy: boolean;
  source: 'scan' | 'observer';
  /**
   * Stat identities of the source files, outside the digest: content decides
   * freshness, but a file rewritten and restored while a check ran is only
   * visible here.
   */
  sourceIdentities: ReadonlyMap<string, string>;
  /** For a traced receipt's evidence looked at again: what differs, said for people, to name it in the reason. */
  changedEvidence?: string[];
}

/** The context as observed now, with anything that could not be established. */
export interface ObservedContext {
  context: CheckContext;
  problems: Reason[];
}
