import type { CheckStatus } from '../core/decide.js';
import type { Receipt } from '../core/receipt.js';
import type { RunError } from '../exec/runCheck.js';
import type { LockHolder } from '../exec/runLock.js';
import { askObserver, type ObserverUse } from './askObserver.js';
import { scriptsFor, selectChecks, type Project } from './project.js';
import type { Session } from './session.js';
import type { Output } from '../core/output.js';
import type { CheckDefinition } from '../core/definition.js';
import { availableParallelism } from 'node:os';
import { runPlan, type PlannedCheck } from './runPlan.js';
import { storedRunOf, type StoredRun } from './storedRun.js';
import type { CheckSpawner } from '../exec/spawnCheck.js';

export interface RunOptions {
  names: readonly string[];
  ifDue: boolean;
  observer: ObserverUse;
  env: NodeJS.ProcessEnv;
  stdout: Output;
  stderr: Output;
  onWait(holder: LockHolder): void;
  onStart(check: string, runId: string, argv: string[]): void;
  /** elapsedMs: the skip's own time, from its turn's start (the first check's from `startedAt`) to the decision. */
  onSkip(status: CheckStatus, elapsedMs: number, stored: StoredRun | null): void;
  /** error: what vouch could not do after the check ran (the receipt not saved); the exit code stays the check's. */
  onFinish(receipt: Receipt, error: RunError | null): void;
  /** How many package checks may run at once; default the core count. Root checks always run alone. */
  concurrency?: number;
  /** Who asked, as the ledger records a skip (docs/hooks.md, "The ledger"); default 'run'. */
  ledgerSource?: 'run' | 'mcp';
  /** When the caller started (epoch ms, e.g. the process start): the first skip's own time counts from here. Default: when run() is called. */
  startedAt?: number;
  /** A skip also carries its receipt's stored output (bounded, core/replay.ts), not only its summary. */
  replay?: boolean;
  /** Starts each check's process; default in this process (exec/spawnCheck.ts). */
  spawn?: CheckSpawner;
}

export type RunEntry =
  | { name: string; action: 'skipped'; status: CheckStatus; exitCode: 0; elapsedMs: number; stored: StoredRun | null }
  | { name: string; action: 'ran'; receipt: Receipt; exitCode: number; error: RunError | null };

export interface RunReport {
  runs: RunEntry[];
  /** The first failing check's own exit code, or 0. */
  exitCode: number;
  notices: string[];
}

/**
 * Runs checks in the order asked (config order by default); an interrupt
 * stops the rest. Package checks run side by side, up to `concurrency`, each
 * after the selected checks of the packages it depends on; a root check runs
 * alone, after everything before it. The first failure's exit code is the
 * report's, in the order asked.
 */
export async function run(project: Project, options: RunOptions): Promise<RunReport> {
  const calledAt = Date.now();
  let firstTurn = true;
  const definitions = await selectChecks(project, options.names);
  const { runCheck } = await import('../exec/runCheck.js');
  const notices: string[] = [];
  // Opened on first need: a check the observer finds current is skipped without the store.
  let opened: { session: Session; close(): void } | null = null;
  const session = async () => {
    if (!opened) {
      const { openSession } = await import('./session.js');
      opened = openSession(project, options.env, { lazyStatCache: true });
    }
    return opened.session;
  };
  const runOne = async (definition: CheckDefinition, stdout: Output, stderr: Output): Promise<{ entry: RunEntry; interrupted: boolean }> => {
    const turnStarted = firstTurn ? Math.min(calledAt, options.startedAt ?? calledAt) : Date.now();
    firstTurn = false;
    const outcome = await runCheck({
      root: project.root,
      stateDir: project.stateDir,
      excluded: project.excluded,
      definition,
      scripts: scriptsFor(project, definition),
      splitScript: project.splitScript,
      env: options.env,
      session,
      ifDue: options.ifDue,
      stdout,
      stderr,
      onWait: options.onWait,
      onStart: (runId, argv) => options.onStart(definition.name, runId, argv),
      ...(options.spawn ? { spawn: options.spawn } : {}),
      ...(options.observer === 'auto'
        ? {
            askObserver: async (since?: number) => {
              const answer = await askObserver(project, [definition], options.env, 'sync', notices, since === undefined ? { beforeRun: true } : { since });
              const [check] = answer?.checks ?? [];
              return check ?? null;
            },
          }
        : {}),
    });
    if (outcome.action === 'skipped') {
      const elapsedMs = Math.max(0, Date.now() - turnStarted);
      await recordSkip(project, outcome.status, options.ledgerSource ?? 'run', elapsedMs, options.env);
      const receipt = outcome.status.receipt;
      const stored = receipt ? storedRunOf(project.stateDir, receipt, options.replay === true) : null;
      options.onSkip(outcome.status, elapsedMs, stored);
      return { entry: { name: definition.name, action: 'skipped', status: outcome.status, exitCode: 0, elapsedMs, stored }, interrupted: false };
    }
    options.onFinish(outcome.receipt, outcome.error);
    return { entry: { name: definition.name, action: 'ran', receipt: outcome.receipt, exitCode: outcome.exitCode, error: outcome.error }, interrupted: outcome.interrupted };
  };
  try {
    const concurrency = Math.max(1, Math.floor(options.concurrency ?? availableParallelism()));
    const entries = await schedule(runPlan(definitions, project.workspace), concurrency, options, runOne);
    const runs = entries.filter((entry): entry is RunEntry => entry !== null);
    const exitCode = runs.find((entry) => entry.exitCode !== 0)?.exitCode ?? 0;
    // The session's notices last: a damaged store can be found, and kept aside, mid-run.
    return { runs, exitCode, notices: [...notices, ...((opened as { session: Session } | null)?.session.notices ?? [])] };
  } finally {
    (opened as { close(): void } | null)?.close();
  }
}

type RunOne = (definition: CheckDefinition, stdout: Output, stderr: Output) => Promise<{ entry: RunEntry; interrupted: boolean }>;

/**
 * Starts each planned check once its predecessors have finished and a slot is
 * free. A check that may run beside another writes its output to a buffer,
 * given whole to stdout and stderr when it ends, so that outputs never
 * interleave; its log (logs/RUN_ID.log) is its own either way.
 */
async function schedule(plan: PlannedCheck[], concurrency: number, options: RunOptions, runOne: RunOne): Promise<Array<RunEntry | null>> {
  const entries: Array<RunEntry | null> = plan.map(() => null);
  const done = new Set<number>();
  const running = new Map<number, Promise<void>>();
  let interrupted = false;
  const parallel = concurrency > 1 && plan.filter((step) => !step.alone).length > 1;
  const ready = (index: number) => {
    const step = plan[index]!;
    if (step.alone) return running.size === 0 && plan.slice(0, index).every((_, earlier) => done.has(earlier));
    if ([...running.keys()].some((other) => plan[other]!.alone)) return false;
    return step.after.every((earlier) => done.has(earlier));
  };
  const pending = plan.map((_, index) => index);
  while ((pending.length > 0 && !interrupted) || running.size > 0) {
    if (!interrupted) {
      for (const index of pending.slice()) {
        if (running.size >= (plan[index]!.alone ? 1 : concurrency) || !ready(index)) {
          if (plan[index]!.alone) break; // nothing after a root check starts before it
          continue;
        }
        pending.splice(pending.indexOf(index), 1);
        const { definition, alone } = plan[index]!;
        const buffered = parallel && !alone ? bufferedOutputs(options.stdout, options.stderr) : null;
        running.set(
          index,
          runOne(definition, buffered?.stdout ?? options.stdout, buffered?.stderr ?? options.stderr)
            .then(({ entry, interrupted: stopped }) => {
              entries[index] = entry;
              if (stopped) interrupted = true;
            })
            .finally(() => {
              buffered?.flush();
              done.add(index);
              running.delete(index);
            }),
        );
      }
    }
    if (running.size === 0) break;
    await Promise.race(running.values());
  }
  return entries;
}

function bufferedOutputs(stdout: Output, stderr: Output): { stdout: Output; stderr: Output; flush(): void } {
  const chunks: Array<{ to: Output; chunk: string | Uint8Array }> = [];
  const into = (to: Output): Output => ({ write: (chunk) => chunks.push({ to, chunk: typeof chunk === 'string' ? chunk : Buffer.from(chunk) }) });
  return {
    stdout: into(stdout),
    stderr: into(stderr),
    flush: () => {
      for (const { to, chunk } of chunks.splice(0)) to.write(chunk);
    },
  };
}

/** A skip goes into the ledger: the receipt it relied on, and the skip's own time. Never fails the run. */
async function recordSkip(project: Project, status: CheckStatus, source: 'run' | 'mcp', tookMs: number, env: NodeJS.ProcessEnv): Promise<void> {
  const receipt = status.receipt;
  if (!receipt) return;
  const { recordLedger } = await import('../store/ledgerSpool.js');
  const session = agentSession(env);
  await recordLedger(
    project.stateDir,
    {
      at: Date.now(),
      source,
      host: session?.host ?? null,
      session: session?.id ?? null,
      mode: 'enforce',
      decision: 'skip',
      forced: false,
      command: null,
      checks: [status.name],
      receipts: [{ check: status.name, run_id: receipt.runId, duration_ms: Math.max(0, Math.round(receipt.durationMs)) }],
      latency_ms: Math.max(0, Math.round(tookMs)),
    },
    project.config.ledger,
  );
}

/**
 * The agent session a run belongs to, when its host says: Claude Code puts the
 * session id its hooks receive into the Bash tool's environment as
 * CLAUDE_CODE_SESSION_ID (since 2.1.132; https://github.com/anthropics/claude-code/issues/56879),
 * so a rewritten `vouch run --if-due` is counted in the same session as the hook's decision.
 */
function agentSession(env: NodeJS.ProcessEnv): { host: 'claude'; id: string } | null {
  const id = env.CLAUDE_CODE_SESSION_ID;
  return typeof id === 'string' && id !== '' && id.length <= 200 ? { host: 'claude', id } : null;
}
