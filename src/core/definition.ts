import { canonicalJson } from './canonicalJson.js';
import { DEFAULT_INPUTS, DEFAULT_INSTALLED, type CheckConfig, type PackageManagerName } from './config.js';
import { sha256 } from './digest.js';
import { scriptArgv } from './packageManagerGrammar.js';
import { packageInputs, packageInstalled, type Workspace } from './workspace.js';

/** A check's configuration with every default filled in: what a receipt is bound to. */
export interface CheckDefinition {
  name: string;
  kind: CheckConfig['kind'];
  script: string | null;
  command: string[] | null;
  inputs: string[];
  installed: string[];
  env: string[];
  packageManager: PackageManagerName | null;
  /**
   * Present only when traced: a declared check's definition, and so its digest, is what it was
   * before traced runs existed, and its receipts stay CURRENT across the upgrade.
   */
  mode?: 'traced';
  /** Present only for a workspace package's check: its root-relative directory, where it runs. */
  package?: string;
}

/**
 * A package check's default inputs come from the workspace graph, so they are
 * part of its definition: a dependency added between packages changes the
 * definition, and its receipts go STALE rather than miss the new package.
 */
export function definitionOf(check: CheckConfig, packageManager: PackageManagerName | null, workspace: Workspace | null = null): CheckDefinition {
  const member = check.package !== undefined && workspace !== null ? check.package : null;
  return {
    name: check.name,
    kind: check.kind,
    script: check.script ?? null,
    command: check.command ?? null,
    inputs: check.inputs ?? (member !== null ? packageInputs(workspace!, member) : null) ?? DEFAULT_INPUTS,
    installed: check.installed ?? (member !== null ? packageInstalled(workspace!, member) : null) ?? DEFAULT_INSTALLED,
    env: [...(check.env ?? [])].sort(),
    // Only a script check runs through the package manager.
    packageManager: check.script === undefined ? null : packageManager,
    ...(check.mode === 'traced' ? { mode: 'traced' as const } : {}),
    ...(check.package !== undefined ? { package: check.package } : {}),
  };
}

export function definitionDigest(definition: CheckDefinition): string {
  return sha256(canonicalJson(definition));
}

/** The argv a check spawns: its package manager running its script, or its command. */
export function checkArgv(definition: CheckDefinition): string[] {
  return definition.script !== null ? scriptArgv(definition.packageManager ?? 'npm', definition.script) : (definition.command ?? []);
}
