import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Claim } from '../core/claim.js';
import { ClaimError } from '../core/claimError.js';
import { CONFIG_FILE } from '../core/config.js';
import { VouchError } from '../core/errors.js';
import type { ProveDocument } from '../core/json/prove.js';
import type { Deadlines } from '../prove/deadline.js';
import type { Prover, ProveResult } from '../prove/prover.js';
import { checkStateDir } from '../store/stateDir.js';
import { locateProject } from './project.js';
import { divertOutput, type DivertedStream } from './proverLog.js';

/** Where claims are judged: the workspace whose own tools judge them, and where vouch keeps its files. */
export interface ProveWorkspace {
  root: string;
  stateDir: string;
}

/**
 * The workspace a claim is judged in, found in one walk up from `cwd`: a
 * vouch project's root when its config comes first, else the nearest folder
 * with a package.json (proving needs no config: the tools are the workspace's own).
 */
export function locateWorkspace(options: { cwd: string; config?: string | undefined; stateDir?: string | undefined; root?: string | undefined }): ProveWorkspace {
  const fromConfig = (config: string | undefined): ProveWorkspace => {
    const place = locateProject({ ...options, config });
    return { root: place.root, stateDir: place.stateDir };
  };
  if (options.config !== undefined) return fromConfig(options.config);
  for (let dir = resolve(options.cwd); ; dir = dirname(dir)) {
    if (existsSync(join(dir, CONFIG_FILE))) return fromConfig(join(dir, CONFIG_FILE));
    if (existsSync(join(dir, 'package.json'))) {
      const root = options.root !== undefined ? resolve(options.cwd, options.root) : dir;
      const stateDir = options.stateDir !== undefined ? resolve(options.cwd, options.stateDir) : join(root, '.vouch');
      // The prover's socket is there: a linked state dir could lead to another workspace's prover.
      checkStateDir(stateDir);
      return { root, stateDir };
    }
    if (dirname(dir) === dir) break;
  }
  throw new VouchError('no-package-json', `no package.json in ${options.cwd} or any directory above it; run vouch prove inside the workspace whose TypeScript, linter and Vitest should judge the claim`);
}

export interface OpenProverOptions {
  deadlines?: Partial<Deadlines>;
  onProgress?: (message: string) => void;
  runtimeLanes?: 1 | 2;
  /**
   * While the prover is open, what the workspace's tools write to these
   * streams of this process goes to `<stateDir>/logs/prove.log`
   * (proverLog.ts), not to the user's terminal. Left out, nothing is diverted.
   */
  log?: { stateDir: string; streams: readonly DivertedStream[] };
}

/** A resident prover on the workspace's own tools. The stages load only here: no other command pays for them. */
export async function openProver(root: string, options: OpenProverOptions = {}): Promise<Prover> {
  const [{ Prover }, { STAGE_FACTORIES }, { processAlive }] = await Promise.all([
    import('../prove/prover.js'),
    import('../prove/stages.js'),
    import('../fs/processStart.js'),
  ]);
  const { log, ...rest } = options;
  // Diverted before the first stage loads: a tool warns while it warms.
  const restore = log === undefined ? undefined : divertOutput(log.stateDir, log.streams);
  try {
    return new Prover(root, { factories: STAGE_FACTORIES, processAlive: (pid) => processAlive(pid, null), ...rest, ...(restore === undefined ? {} : { onClose: restore }) });
  } catch (error) {
    restore?.();
    throw error;
  }
}

/** The --json document, which the MCP prove tool returns too; defined once in core/json (types only: no zod at run time). */
export type ProveReportJson = ProveDocument;
export type IssueJson = ProveDocument['verdict']['checks'][number]['issues'][number];

export function proveReportJson(result: ProveResult): ProveReportJson {
  const { verdict, receipt } = result;
  return {
    schema: 1,
    digest: verdict.digest,
    receipt: receipt.receipt,
    why: receipt.receipt === null ? receipt.why : [],
    verdict: {
      digest: verdict.digest,
      control_stage: verdict.controlStage,
      // Both runners' fields, one of them null: a closed document lists every field.
      toolchain: { typescript: verdict.toolchain.typescript, linter: verdict.toolchain.linter, vitest: verdict.toolchain.vitest ?? null, jest: verdict.toolchain.jest ?? null },
      config: verdict.config,
      project: { tsconfig: verdict.project.tsconfig, options_digest: verdict.project.optionsDigest },
      checks: verdict.checks.map((check) => ({
        stage: check.stage,
        phase: check.phase,
        completed: check.completed,
        issues: check.issues.map((issue) => ({
          origin: issue.origin,
          stage: issue.stage,
          path: issue.path ?? null,
          line: issue.line ?? null,
          column: issue.line === undefined ? null : (issue.column ?? null),
          code: issue.code ?? null,
          message: issue.message,
        })),
      })),
    },
    timings: result.timings,
    ms: result.ms,
    cold: result.cold,
    notices: [],
  };
}

/** A claim error as data, so it crosses a socket and is rebuilt the same on the other side. */
export interface ClaimErrorJson {
  origin: ClaimError['origin'];
  code: ClaimError['code'];
  detail: string;
}

export function claimErrorJson(error: ClaimError): ClaimErrorJson {
  return { origin: error.origin, code: error.code, detail: error.detail };
}

export function claimErrorFrom(json: ClaimErrorJson): ClaimError {
  return new ClaimError(json.origin, json.code, json.detail);
}

export type { Claim, Prover };
