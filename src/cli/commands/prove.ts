import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { locateWorkspace, openProver, proveReportJson, type ProveReportJson } from '../../api/prove.js';
import { proveViaServer, serveProver } from '../../api/proveServer.js';
import { proveText } from '../../api/proveText.js';
import { parseClaimText } from '../../core/claimInput.js';
import { VouchError } from '../../core/errors.js';
import { writeJson, type CliIo } from '../io.js';
import { parseCommand } from '../options.js';

export const help = `Usage: vouch prove CLAIM.json [--json] [--deadline MS] [--no-server]
       vouch prove --serve [--deadline MS]

Proves a claim: an edit plus a test (the case), and the same edit broken on
purpose (the control) with the stage where it must break. Both run through
the workspace's own TypeScript, linter (oxlint or ESLint) and Vitest, from
memory: no draft is written into the working tree. A receipt token is minted
only when the case is clean at every stage and the control breaks exactly at
its declared stage (docs/claims.md).

  CLAIM.json     the claim; "-" reads it from stdin

Options:
  --serve        keep the three stages warm and serve proves on a socket in
                 the state dir until Ctrl-C; "vouch prove CLAIM.json" uses it
                 when it is there, so only the first prove pays for warming
  --no-server    prove in this process even when a served prover is running
  --deadline MS  how long one stage may take over one inspection (default 30000)
  --json         machine-readable (docs/json.md)
  --config FILE  find the workspace from this vouch config
  --state-dir DIR where the served prover's socket is
  --root DIR      the project root, instead of the config's "root"

Examples:
  vouch prove claims/discount-cap.json
  vouch prove --serve &   vouch prove claim.json --json

Exit codes: 0 a receipt was minted; 1 no receipt (the text says why);
2 the claim was refused or could not be judged ([origin] code: message);
75 a tool did not start or answer in time, through no fault of the claim: try
again (VOUCH_PROVE_INITIALIZE_MS raises the linter's start limit).
`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand('prove', argv, {
    serve: { type: 'boolean', default: false },
    'no-server': { type: 'boolean', default: false },
    deadline: { type: 'string' },
  });
  const deadlines = values.deadline === undefined ? undefined : { inspectMs: parseDeadline(values.deadline) };
  const workspace = locateWorkspace({ cwd: io.cwd, config: values.config, stateDir: values['state-dir'], root: values.root });
  const progress = (await io.isTty()) ? (message: string) => io.stderr.write(`vouch: ${message}…\n`) : undefined;

  if (values.serve) {
    if (positionals.length > 0) throw new VouchError('usage', '--serve takes no claim; run "vouch prove CLAIM.json" in another terminal');
    io.stderr.write(`vouch: warming the type, lint and runtime stages for ${workspace.root}…\n`);
    await serveProver(workspace, {
      env: io.env,
      deadlines,
      onProgress: progress,
      onReady: (socket, warmMs) => io.stderr.write(`vouch: serving proves on ${socket} (warmed in ${warmMs} ms); Ctrl-C stops\n`),
    });
    return 0;
  }

  if (positionals.length !== 1) throw new VouchError('usage', 'prove takes one claim file (or "-" for stdin); see "vouch prove --help"');
  const source = positionals[0]!;
  const claim = parseClaimText(readClaim(source, io), source);

  let report: ProveReportJson | null = null;
  const notices: string[] = [];
  const notice = (text: string) => {
    notices.push(text);
    io.stderr.write(`vouch: ${text}\n`);
  };
  // A served prover has its own deadlines; asking for others means proving here.
  if (!values['no-server'] && deadlines === undefined) report = await proveViaServer(workspace, claim, io.env, notice);
  if (report === null) {
    // One prove and out: a second runtime lane would cost more to warm than it saves.
    // This command writes its own output to the descriptors, so both streams can be the log's: a config's console.log would otherwise land in --json.
    const prover = await openProver(workspace.root, { deadlines, onProgress: progress, runtimeLanes: 1, log: { stateDir: workspace.stateDir, streams: ['stdout', 'stderr'] } });
    try {
      report = proveReportJson(await prover.prove(claim));
    } finally {
      await prover.close();
    }
  }
  report.notices.push(...notices);
  if (values.json) writeJson(io, report);
  else io.stdout.write(proveText(report));
  return report.receipt === null ? 1 : 0;
}

function readClaim(source: string, io: CliIo): string {
  try {
    return readFileSync(source === '-' ? 0 : resolve(io.cwd, source), 'utf8');
  } catch (error) {
    throw new VouchError('claim-unreadable', `cannot read the claim ${source} (${(error as NodeJS.ErrnoException).code ?? String(error)}); name a JSON file, or "-" for stdin`);
  }
}

/** Node's timers take at most 2^31-1 ms; a longer delay silently becomes 1 ms (nodejs.org/api/timers.html#settimeoutcallback-delay-args). */
const MAX_DEADLINE_MS = 2 ** 31 - 1;

function parseDeadline(text: string): number {
  const ms = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!(ms >= 100 && ms <= MAX_DEADLINE_MS)) {
    throw new VouchError('usage', `--deadline needs a whole number of milliseconds, from 100 to ${MAX_DEADLINE_MS}, not "${text}"`);
  }
  return ms;
}
