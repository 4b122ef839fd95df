import type { CheckContext, ExecutableIdentity } from '../../src/core/context.js';
import { contextDigest } from '../../src/core/context.js';
import { definitionDigest, type CheckDefinition } from '../../src/core/definition.js';
import { manifestOf, type InputEntry } from '../../src/core/manifest.js';
import type { Observation, ObservedContext } from '../../src/core/observation.js';
import { reason, REASON_CODES, type Reason, type ReasonCode } from '../../src/core/reason.js';
import type { Receipt } from '../../src/core/receipt.js';

/**
 * The core's model built by hand, as plain objects, for unit tests of the pure
 * modules: no project, no scan, no store. Each builder takes overrides.
 */

/** Every reason code, so a table test can prove it met each one. */
export const ALL_REASON_CODES = REASON_CODES;

export const why = (code: ReasonCode, message = `${code} happened`): Reason => reason(code, message);

export function definition(overrides: Partial<CheckDefinition> = {}): CheckDefinition {
  return {
    name: 't',
    kind: 'test',
    script: null,
    command: ['node', 'check.mjs'],
    inputs: ['**/*'],
    installed: ['node_modules/**'],
    env: [],
    packageManager: null,
    ...overrides,
  };
}

export const exe = (path: string, identity = '1:2:3:755:1:4:5'): ExecutableIdentity => ({ path, identity });

export function context(overrides: Partial<CheckContext> = {}): CheckContext {
  return {
    argv: ['node', 'check.mjs'],
    executable: exe('/usr/bin/node'),
    node: { version: 'v20.19.0', executable: exe('/usr/bin/node') },
    platform: 'linux',
    arch: 'x64',
    packageManager: null,
    env: { CI: null, NODE_ENV: null },
    ...overrides,
  };
}

export const source = (path: string, digest = `digest-of-${path}`, executable = false): InputEntry => ({ path, origin: 'source', type: 'file', digest, executable });
export const installed = (path: string, identity = '1:2:3:644:1:4:5', digest?: string): InputEntry =>
  digest === undefined ? { path, origin: 'installed', type: 'file', identity } : { path, origin: 'installed', type: 'file', identity, digest };
export const link = (path: string, target: string, origin: 'source' | 'installed' = 'source'): InputEntry => ({ path, origin, type: 'symlink', target });

export function observation(entries: InputEntry[] = [source('a.ts')], overrides: Partial<Observation> = {}): Observation {
  return { manifest: manifestOf(entries), problems: [], healthy: true, source: 'scan', sourceIdentities: new Map(), ...overrides };
}

export function observed(ctx: CheckContext = context(), problems: Reason[] = []): ObservedContext {
  return { context: ctx, problems };
}

/** A receipt bound to exactly this definition, context and observation: CURRENT against them unless overridden. */
export function receipt(def: CheckDefinition, ctx: CheckContext, obs: Observation, overrides: Partial<Receipt> = {}): Receipt {
  return {
    runId: 'run-1',
    check: def.name,
    definition: def,
    definitionDigest: definitionDigest(def),
    context: ctx,
    contextDigest: contextDigest(ctx),
    manifestDigest: obs.manifest.digest,
    inputCount: obs.manifest.entries.length,
    result: 'PASS',
    exitCode: 0,
    signal: null,
    startedAt: 1_000,
    finishedAt: 2_000,
    durationMs: 1_000,
    logPath: 'logs/run-1.log',
    reuseEligible: true,
    reasons: [],
    evidence: { mode: 'declared', notes: [] },
    ...overrides,
  };
}
