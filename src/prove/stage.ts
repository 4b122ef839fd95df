import type { Draft, Issue, Phase, Stage } from '../core/claim.js';
import type { Overlay } from './overlay.js';

/** What one stage is asked to judge: one phase of a claim. */
export interface Inspection {
  phase: Phase;
  /** The phase's drafts (workspace-relative); the test is not among them. */
  drafts: readonly Draft[];
  /** The case's test, at its declared workspace-relative path. */
  test: Draft;
  /** Drafts and test by absolute path, with a fresh revision. */
  overlay: Overlay;
  /** The tsconfig both phases are judged under, absolute. */
  project: string;
}

/** A tool as it judged: package name and version, as the receipt token spells them. */
export interface Tool {
  name: string;
  version: string;
}

/**
 * A resident stage: warmed once, then asked many times. Each inspection must
 * re-read what changed on disk first (a warm stage never answers from a stale
 * tree) and rebuild itself when its tool's config changed.
 *
 * `inspect` resolves with the issues it found. It resolves with an
 * `instrument` issue, never a silent empty list, when it could not look.
 * It throws a ClaimError only for a failure that is not about this claim
 * (the tool is missing, the config is malformed).
 */
export interface StageInstance {
  readonly stage: Stage;
  /** Loads the tool and takes the baseline; resolves with the tool that will judge. */
  warm(): Promise<Tool>;
  inspect(inspection: Inspection): Promise<Issue[]>;
  /**
   * Advances when the tool starts work on claimant input (a file checked, a
   * test begun). A deadline that expires after progress blames the claimant;
   * one that expires before blames the instrument.
   */
  progress(): number;
  /**
   * Whether the tool this stage warmed is no longer the workspace's (another
   * version installed, another linter chosen). A resident prover replaces a
   * stale stage before the next prove, so the verdict names the tool that judged.
   */
  stale(): boolean;
  /** Stops the tool at once, even mid-inspection; the stage is not used again. */
  destroy(): Promise<void>;
}

/** How a stage is made; a destroyed stage is replaced by calling this again. */
export type StageFactory = (workspace: string) => StageInstance;
