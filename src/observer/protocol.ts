import type { z } from 'zod';
import type { gapCode } from '../core/json/observer.js';
import type { InputEntry } from '../core/manifest.js';
import type { Reason } from '../core/reason.js';
import type { Receipt } from '../core/receipt.js';
import type { EarlierTracedLook } from '../core/decide.js';

/**
 * Newline-delimited JSON-RPC 2.0 over the observer's Unix socket. The
 * observer answers these methods and nothing else; it never runs a command
 * that arrives over the wire.
 */
export const PROTOCOL = 1;
export const MAX_LINE_BYTES = 1 << 20;

export type ObserveMode = 'sync' | 'cached';

/** The part of a check definition the observer needs: what to observe, and the receipt's name. */
export interface ObservedInputs {
  name: string;
  inputs: string[];
  installed: string[];
  /** The check's definition digest now: earlier traced receipts made on another are not looked at. */
  definitionDigest?: string;
}



export interface ObserveParams {
  checks: ObservedInputs[];
  mode: ObserveMode;
  /** Send every manifest entry, for a diff (explain); otherwise only the digest. */
  entries?: boolean;
  /**
   * After a run (exec/runCheck.ts): when its client asked before the run (epoch ms). Each check's
   * answer then says which of its sources may have been written since (`written`), and the
   * observer stores its manifest in the receipts store if it is not there yet (`stored`).
   */
  since?: number;
  /**
   * Before a run: its client is about to spawn these checks. After answering, while the checks
   * run, the observer stores each manifest it answered with, if the store lacks it, so that the
   * question after the run (`since`) finds it stored and answers without that work.
   */
  beforeRun?: boolean;
}

export interface ObservedCheck {
  name: string;
  manifestDigest: string;
  inputCount: number;
  problems: Reason[];
  entries?: InputEntry[];
  /** For a traced receipt: which of its evidence entries differ now, to name them in the reason. */
  changedEvidence?: string[];
  receipt: Receipt | null;
  /** The newest receipt whose inputs digest is manifestDigest, when the latest's differs (core/decide.ts earlierInputsDigest). */
  earlier?: Receipt | null;
  /**
   * For a traced latest receipt found changed: earlier traced receipts on the same definition,
   * newest first (store/receipts.ts earlierTracedReceipts), each with its evidence looked at,
   * up to the first whose evidence is not changed.
   */
  earlierTraced?: EarlierTracedLook[];
  /** With `since`: the sources whose ctime is not before it, less a tick of the file system's clock, or that could not be looked at; sorted. */
  written?: string[];
  /** With `since`: whether the store now holds this manifest, so the receipt can name it without the client making it. */
  stored?: boolean;
}

/** Why the observer's index cannot be trusted right now: defined once, with the JSON document that reports it. */
export type GapCode = z.infer<typeof gapCode>;

export interface GapReason {
  code: GapCode;
  message: string;
}

/**
 * Why the index was last rescanned: its first build, file events it could
 * not patch in, a hard-linked input, the watcher renewed to cover a subtree
 * it could not have watched, a git rule file outside the root that changed,
 * the periodic scan after patches, events the kernel's queue may have
 * dropped (queueWatch.ts), or a gap.
 */
export type RescanReason = 'first-index' | 'file-events' | 'hard-linked-input' | 'rewatch' | 'git-rules' | 'safety' | 'lost-events' | GapCode;

export interface ObserveResult {
  healthy: boolean;
  reasons: GapReason[];
  envKey: string;
  /** When the index this answer rests on was taken (ms since the epoch). */
  observedAt: number;
  checks: ObservedCheck[];
}

export interface PingResult {
  protocol: number;
  version: string;
  build: string;
  pid: number;
  ready: boolean;
}

export interface ObserverInfo extends PingResult {
  uptimeMs: number;
  healthy: boolean;
  reasons: GapReason[];
  watchedPaths: number;
  indexFiles: number;
  memoryRssBytes: number;
  events: number;
  overflows: number;
  rescans: number;
  rescansBy: Partial<Record<RescanReason, number>>;
  lastRescan: { at: number; durationMs: number; reason: RescanReason } | null;
  patches: number;
  lastPatch: { at: number; durationMs: number; paths: number } | null;
  /** Looks at traced receipts' evidence: whole, or only where events said it may have changed (keptEvidence.ts); entries looked at in all. */
  evidenceLooks: { full: number; partial: number; entries: number };
  readyMs: number | null;
  socket: string;
  root: string;
}

export type FaultKind = 'overflow' | 'watcher-error' | 'watch-limit' | 'blind-creates';

/**
 * A whole `vouch status` for a caller (cli/servedStatus.ts asks, cli/statusServer.ts answers):
 * its arguments, working directory, environment, Node version and build. The observer answers
 * only for its own config and state dir, build and Node, and only from its index; anything else
 * is an error, and the caller's own process answers.
 */
export interface StatusCall {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  node: string;
  /** The caller's vouch version and build (api/buildId.ts): npm gives every installed file the same mtime. */
  version: string;
  build: string;
}

/** What the caller's own process would have printed, and its exit code. */
export interface ServedStatus {
  stdout: string;
  stderr: string;
  code: number;
}

export interface Methods {
  ping: { params: Record<string, never>; result: PingResult };
  observe: { params: ObserveParams; result: ObserveResult };
  info: { params: Record<string, never>; result: ObserverInfo };
  stop: { params: Record<string, never>; result: { stopping: true } };
  /** Added by the daemon's composer (cli/commands/observeDaemon.ts), not by the observer layer. */
  status: { params: StatusCall; result: ServedStatus };
  /** Only when the observer was started with VOUCH_OBSERVER_FAULTS=1: forces a failure that cannot be caused on demand. */
  fault: { params: { kind: FaultKind }; result: { injected: FaultKind } };
}

export type MethodName = keyof Methods;

export interface RpcError {
  code: number;
  message: string;
}

export const RPC_PARSE_ERROR = -32700;
export const RPC_INVALID_REQUEST = -32600;
export const RPC_METHOD_NOT_FOUND = -32601;
export const RPC_INVALID_PARAMS = -32602;
export const RPC_INTERNAL = -32603;
