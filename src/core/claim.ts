/**
 * The claim model: what an agent proposes (a case and a deliberately broken
 * control) and what vouch answers (a verdict of checks and issues). Pure types;
 * the stages that fill a verdict live in prove/.
 */

/** Where a control must break. Order matters: stages run, and are reported, in this order. */
export type Stage = 'type' | 'lint' | 'runtime';
export const STAGES: readonly Stage[] = ['type', 'lint', 'runtime'];

/** The case runs first; the control is the same edit broken on purpose. */
export type Phase = 'case' | 'control';
export const PHASES: readonly Phase[] = ['case', 'control'];

/** A file as the claimant wants it, never written into the working tree. Path is workspace-relative, '/'-separated. */
export interface Draft {
  path: string;
  text: string;
}

/** The proposed edit and the test that is meant to prove it. */
export interface Case {
  drafts: Draft[];
  test: Draft;
}

/**
 * The same edit deliberately broken. It is judged with the case's own test,
 * because the question is whether that test notices the break. `drafts` is
 * the whole broken edit, not a patch on the case.
 */
export interface Control {
  drafts: Draft[];
  stage: Stage;
  /** Why it must break there, in the claimant's words; digested, so it cannot be swapped afterwards. */
  reason: string;
}

export interface Claim {
  case: Case;
  control: Control;
  /** The tsconfig both phases are judged under, workspace-relative. */
  project: string;
}

/**
 * Who must act on an issue. `claimant`: a tool's diagnostic about a draft, and
 * nothing else. `workspace`: a diagnostic already there before the claim, or
 * about config the claim did not draft. `instrument`: an inspection that did
 * not complete.
 */
export type Origin = 'claimant' | 'workspace' | 'instrument';

export interface Issue {
  origin: Origin;
  stage: Stage;
  path?: string;
  /** 1-based. */
  line?: number;
  /** 1-based, with a line, when the tool gives one: a parse error is found by it. */
  column?: number;
  message: string;
  /** The tool's own code (TS2322, no-unused-vars, ...), when it has one. */
  code?: string;
  /**
   * The tool did not judge this draft at all (a path the linter ignores, a
   * test the runner would not run): its silence says nothing, so the check
   * did not complete. Not part of the JSON: `completed` carries it there.
   */
  unjudged?: true;
}

/** One stage inspected in one phase. `completed: false` means the answer cannot be trusted, whatever its issues say. */
export interface StageCheck {
  stage: Stage;
  phase: Phase;
  issues: Issue[];
  completed: boolean;
}

/** The tool versions that judged the claim; part of the receipt token, since another version may judge differently. */
export interface Toolchain {
  typescript: string;
  linter: { name: string; version: string };
  /** The test runner's version, under its name: exactly one of `vitest` and `jest`. */
  vitest?: string;
  jest?: string;
}

export type RunnerName = 'vitest' | 'jest';

/** The test runner that judged, by name and version. */
export function toolchainRunner(toolchain: Pick<Toolchain, 'vitest' | 'jest'> | { vitest: string | null; jest: string | null }): { name: RunnerName; version: string } {
  return typeof toolchain.jest === 'string' ? { name: 'jest', version: toolchain.jest } : { name: 'vitest', version: toolchain.vitest ?? '' };
}

/** The TypeScript project as resolved: its tsconfig path and a digest of the effective compiler options. */
export interface ClaimProject {
  tsconfig: string;
  optionsDigest: string;
}

/**
 * What the judges were configured with: a digest of the linters', the test
 * runner's and the TypeScript project's config files as they were, and the
 * workspace-relative files it covers. Part of the receipt token, since the
 * same tools under another rule judge differently.
 */
export interface JudgeConfig {
  digest: string;
  files: string[];
}

export interface Verdict {
  /** claimDigest() of the claim's case and control. */
  digest: string;
  /** The control's declared stage, copied here so a verdict can be judged on its own. */
  controlStage: Stage;
  toolchain: Toolchain;
  config: JudgeConfig;
  project: ClaimProject;
  /** One per stage per phase. */
  checks: StageCheck[];
}
