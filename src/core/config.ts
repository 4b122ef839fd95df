/**
 * Config types and defaults, free of the validator: zod costs about 100 ms to
 * load, so hot paths that read an already-validated config never import it.
 * configSchema.ts holds the validator and is loaded only when the config text changed.
 */
export const CHECK_KINDS = ['typecheck', 'lint', 'test', 'build', 'custom'] as const;
export const PACKAGE_MANAGERS = ['npm', 'pnpm', 'yarn', 'bun'] as const;

/** How a receipt's evidence is gathered: by tracing what the run touched, or from the declared globs. */
export const EVIDENCE_MODES = ['declared', 'traced'] as const;

export type CheckKind = (typeof CHECK_KINDS)[number];
export type EvidenceMode = (typeof EVIDENCE_MODES)[number];
export type PackageManagerName = (typeof PACKAGE_MANAGERS)[number];

export interface CheckConfig {
  name: string;
  kind: CheckKind;
  script?: string;
  command?: string[];
  inputs?: string[];
  installed?: string[];
  env?: string[];
  /** Default 'declared'. */
  mode?: EvidenceMode;
  /** A workspace package's root-relative directory: the check runs there (docs/workspaces.md). */
  package?: string;
}

export interface Config {
  $schema?: string;
  schema: 1;
  root?: string;
  packageManager?: PackageManagerName;
  /** False: the hook lets a CURRENT FAIL run again instead of replaying its stored failure (docs/hooks.md, "Replay"). Default true. */
  replayFailures?: boolean;
  checks: CheckConfig[];
  /** How long the ledger of hook and run decisions is kept (docs/hooks.md, "The ledger"). */
  ledger?: LedgerRetention;
}

export interface LedgerRetention {
  /** Rows older than this many days are dropped. Default 90. */
  days?: number;
  /** At most this many rows are kept, the newest. Default 100000. */
  rows?: number;
}

export const LEDGER_DEFAULTS = { days: 90, rows: 100_000 } as const;

export const DEFAULT_INPUTS = ['**'];
/** A root check's name, or a package check's `PACKAGE#SCRIPT` (an npm package name, then "#", then a name). */
export const CHECK_NAME = /^(?:(?:@[A-Za-z0-9][A-Za-z0-9._~-]*\/)?[A-Za-z0-9][A-Za-z0-9._~-]*#)?[A-Za-z0-9][A-Za-z0-9._:-]*$/;
export const CHECK_NAME_MAX = 214 + 1 + 64;
export const DEFAULT_INSTALLED = ['node_modules/**'];
export const CONFIG_FILE = 'vouch.config.json';
/** Root-relative directories vouch never lists as inputs: git's own, and the default state dir. A glob into them is refused. */
export const RESERVED_DIRS: readonly string[] = ['.git', '.vouch'];
