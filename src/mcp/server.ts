import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { loadProject, type Project } from '../api/project.js';
import { VouchError } from '../core/errors.js';
// The one JSON contract (docs/json.md): the tools return exactly what --json prints.
import { explanationJson, logJson, runReportJson, statusReportJson } from '../api/reportJson.js';
import { explainOutput, inputsOutput, logOutput, proveOutput, runOutput, statusOutput } from './outputSchemas.js';
import { locateWorkspace, openProver, proveReportJson, type Prover } from '../api/prove.js';
import { proveText } from '../api/proveText.js';
import { claimShape, DEFAULT_PROJECT, parseClaim } from '../core/claimInput.js';
import { OutputTail } from './outputTail.js';
import { progressReporter } from './progress.js';
import { answer, failure, requireConfigured } from './toolResult.js';

export interface McpServerOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  config?: string | undefined;
  stateDir?: string | undefined;
  root?: string | undefined;
  version: string;
  /**
   * Warm the prover in the background once the client has initialized (the default), so the
   * first prove finds its stages loaded; false leaves it until the first prove, and a session
   * that never proves never pays for it (its memory: a TypeScript program and a Vitest instance).
   */
  warm?: boolean;
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, openWorldHint: false } as const;

// Loaded on a tool's first call, not at start: they bring the receipt store and the scanners, and
// `initialize` should not wait for modules that a session may never use.
const summaries = () => import('./summaries.js');

/** Builds the server; `serveMcp` connects it to stdio. Kept apart so the tool set can be read in one place. */
export function createVouchServer(options: McpServerOptions): McpServer {
  // One resident prover per session, made after the handshake (or on the first prove, with warm: false): warmed once.
  let prover: Promise<Prover> | null = null;
  const resident = () => {
    prover ??= (async () => {
      const workspace = locateWorkspace({ cwd: options.cwd, config: options.config, stateDir: options.stateDir, root: options.root });
      // Not stdout: the protocol is written through it (console.log already goes to stderr, and so to the log).
      return openProver(workspace.root, { log: { stateDir: workspace.stateDir, streams: ['stderr'] } });
    })().catch((error: unknown) => {
      prover = null;
      throw error;
    });
    return prover;
  };
  // After the handshake, never before it: the client's initialize is answered at once, and warming (seconds of
  // loading the workspace's tools) goes on while the host lists the tools and the agent thinks. A prove that
  // arrives meanwhile waits for the same warming, not a second one.
  const warmInBackground = () => {
    void resident()
      .then((open) => {
        const project = join(open.workspace, DEFAULT_PROJECT);
        return open.warm(existsSync(project) ? project : undefined, 'first');
      })
      .catch(() => {
        // Nobody asked yet: the first prove warms again and answers with what is wrong (no package.json, no Vitest).
      });
  };
  // Loaded per call, not once: the config may change while a host keeps the server running.
  const project = () => loadProject({ cwd: options.cwd, config: options.config, stateDir: options.stateDir, root: options.root });
  const server = new McpServer({ name: 'vouch', version: options.version });
  if (options.warm !== false) server.server.oninitialized = warmInBackground;

  server.registerTool(
    'status',
    {
      title: 'Check freshness',
      description:
        "Whether each configured check's latest receipt still applies: freshness CURRENT, STALE or UNVERIFIED, " +
        'result PASS or FAIL, and reuse_eligible (true means rerunning it is not needed). Ask before rerunning typecheck, lint, test or build.',
      inputSchema: { checks: z.array(z.string()).optional().describe('check names from vouch.config.json; every check when omitted') },
      outputSchema: statusOutput,
      annotations: { title: 'Check freshness', ...READ_ONLY },
    },
    async ({ checks }) => {
      try {
        const loaded = await project();
        requireConfigured(loaded, 'checks', checks ?? []);
        const [{ status }, { statusSummary }] = await Promise.all([import('../api/status.js'), summaries()]);
        const report = await status(loaded, checks ?? [], options.env);
        return answer(statusReportJson(loaded, report), statusSummary(report));
      } catch (error) {
        return failure(error);
      }
    },
  );

  server.registerTool(
    'explain',
    {
      title: 'What changed',
      description:
        "What changed since a check's latest receipt: inputs added, removed or modified, context changes " +
        '(environment variables by name only), definition changes, and why an UNVERIFIED check has no answer.',
      inputSchema: { check: z.string().describe('a check name from vouch.config.json') },
      outputSchema: explainOutput,
      annotations: { title: 'What changed', ...READ_ONLY },
    },
    async ({ check }) => {
      try {
        const loaded = await project();
        requireConfigured(loaded, 'check', check);
        const [{ explain }, { explainSummary }] = await Promise.all([import('../api/explain.js'), summaries()]);
        const result = await explain(loaded, check, options.env);
        return answer(explanationJson(result), explainSummary(result));
      } catch (error) {
        return failure(error);
      }
    },
  );

  server.registerTool(
    'inputs',
    {
      title: 'What a receipt depends on',
      description:
        "What a check's latest receipt depends on, as it recorded it: source files by directory, installed files by package, " +
        'or, for a traced receipt, the files its run read, the directories it listed, the paths it looked up (found or absent), ' +
        'installed packages, paths outside the root and its own cache; ' +
        'the context (environment variables by name only), the scripts it runs, and the globs it declared. Nothing is observed; ' +
        'the explain tool says what changed since.',
      inputSchema: { check: z.string().describe('a check name from vouch.config.json') },
      outputSchema: inputsOutput,
      annotations: { title: 'What a receipt depends on', ...READ_ONLY },
    },
    async ({ check }) => {
      try {
        const loaded = await project();
        requireConfigured(loaded, 'check', check);
        const [{ explainInputs }, { explainInputsJson }, { inputsSummary }] = await Promise.all([
          import('../api/explainInputs.js'),
          import('../api/explainInputsJson.js'),
          summaries(),
        ]);
        const report = await explainInputs(loaded, check, options.env);
        return answer(explainInputsJson(report, loaded.stateDir), inputsSummary(report));
      } catch (error) {
        return failure(error);
      }
    },
  );

  server.registerTool(
    'log',
    {
      title: 'Receipt history',
      description: 'Receipts, newest first, failures included; each names the log file with the run output.',
      inputSchema: {
        check: z.string().optional().describe("only this check's receipts"),
        limit: z.number().int().min(1).max(1000).optional().describe('at most this many receipts (default 20)'),
      },
      outputSchema: logOutput,
      annotations: { title: 'Receipt history', ...READ_ONLY },
    },
    async ({ check, limit }) => {
      try {
        const loaded = await project();
        if (check !== undefined) requireConfigured(loaded, 'check', check);
        const [{ log }, { logSummary }] = await Promise.all([import('../api/log.js'), summaries()]);
        const { receipts, notices } = await log(loaded, check ?? null, limit ?? 20);
        return answer(logJson(receipts, loaded.stateDir, notices), logSummary(receipts));
      } catch (error) {
        return failure(error);
      }
    },
  );

  server.registerTool(
    'run',
    {
      title: 'Run checks',
      description:
        'Runs configured checks by name, in the order given, and records a receipt of each. Only checks defined in ' +
        'vouch.config.json can run; nothing else. With if_due, a check whose receipt is CURRENT, PASS and reusable is skipped. ' +
        'A failing check is an answer (its receipt says FAIL), not a tool error; the text shows the end of its output.',
      inputSchema: {
        checks: z.array(z.string()).describe('check names from vouch.config.json (the status tool lists them)'),
        if_due: z.boolean().optional().describe('skip a check whose receipt is CURRENT, PASS and reusable'),
      },
      outputSchema: runOutput,
      annotations: { title: 'Run checks', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async ({ checks, if_due }, extra) => {
      try {
        const loaded = await project();
        // An empty list would mean "every check" to the api; a tool runs only what it names.
        if (checks.length === 0) throw refuseEmpty(loaded);
        requireConfigured(loaded, 'checks', checks);
        const [{ run }, { runSummary }] = await Promise.all([import('../api/run.js'), summaries()]);
        const output = new OutputTail();
        const progress = progressReporter(extra, checks.length);
        const report = await run(loaded, {
          names: checks,
          ifDue: if_due === true,
          ledgerSource: 'mcp',
          replay: true,
          observer: 'auto',
          env: options.env,
          stdout: output,
          stderr: output,
          onWait: (holder) => progress(`waiting for ${holder.check}: run ${holder.runId} (pid ${holder.pid}) holds its lock`),
          onStart: (check, runId) => {
            output.begin(check);
            progress(`running ${check} (run ${runId})`);
          },
          onSkip: (checkStatus) => progress(`skipped ${checkStatus.name}: CURRENT PASS`, true),
          onFinish: (receipt) => progress(`${receipt.check} ${receipt.result}`, true),
        });
        await progress.flush();
        return answer(runReportJson(report, loaded.stateDir), runSummary(report, loaded.stateDir, (check) => output.tailOf(check)));
      } catch (error) {
        return failure(error);
      }
    },
  );

  server.registerTool(
    'prove',
    {
      title: 'Prove a claim',
      description:
        'Proves an edit with a negative control, without touching the working tree. case: the drafts (whole files) and a test; ' +
        'control: the same edit deliberately broken, the stage where it must break (type, lint or runtime) and why. ' +
        "Both run through the workspace's own TypeScript, linter and Vitest. A receipt token is minted only when the case is clean " +
        'at every stage and the control breaks exactly at its declared stage. The text ends with "receipt <token>" or "no receipt".',
      inputSchema: claimShape,
      outputSchema: proveOutput,
      // Not read-only: the claimant's test runs, and a test can do what any code can.
      annotations: { title: 'Prove a claim', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (input, extra) => {
      try {
        const claim = parseClaim(input);
        const progress = progressReporter(extra, 1);
        progress('judging the case, then the control');
        const result = await (await resident()).prove(claim);
        await progress.flush();
        const report = proveReportJson(result);
        return answer(report as unknown as Record<string, unknown>, proveText(report).trimEnd());
      } catch (error) {
        return failure(error);
      }
    },
  );

  const close = server.close.bind(server);
  server.close = async () => {
    const open = prover;
    prover = null;
    if (open) await open.then((p) => p.close(), () => {});
    await close();
  };

  return server;
}

function refuseEmpty(project: Project): VouchError {
  const known = project.definitions.map((definition) => definition.name).join(', ');
  return new VouchError('usage', `checks: name at least one check to run; checks: ${known}`);
}

/** Serves until the client closes stdin. Resolves then, so the process can exit. */
export async function serveMcp(options: McpServerOptions): Promise<void> {
  // Stdout is the protocol. Anything that logs through console goes to stderr instead of corrupting it.
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
  const server = createVouchServer(options);
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  await server.connect(new StdioServerTransport());
  // The transport does not notice its client going away; an ended stdin is that.
  process.stdin.once('end', () => void server.close());
  await closed;
}
