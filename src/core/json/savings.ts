import { z } from 'zod';
import { count, durationMs, notices, schemaVersion, time } from './common.js';
import { checkName, checkResult } from './status.js';

/* `vouch savings --json` (docs/json.md, "vouch savings --json"). */

const host = z.enum(['claude', 'codex']).nullable();
const runId = z.string().min(1);

const avoided = z.strictObject({
  decisions: count.describe('Decisions that relied on at least one receipt.'),
  ms: durationMs.describe("The check time avoided: each decision's receipts' durations minus the decision's own time, never below zero, summed."),
  by_check: z
    .array(z.strictObject({ check: checkName, count, ms: durationMs }))
    .describe('Per check: how many of its runs were avoided, and the time; a decision over several checks shares its own time among them by duration. Most time first.'),
  by_session: z
    .array(
      z.strictObject({
        session: z.string().nullable().describe("The agent host's session id; null for vouch run --if-due and the MCP run tool, which have none."),
        host,
        count,
        ms: durationMs,
      }),
    )
    .describe('Per session, most time first.'),
});

export const savingsDocument = z.strictObject({
  schema: schemaVersion,
  since: time.describe('The start of the period (--since before now).'),
  until: time.describe('When the report was made.'),
  commands: z.strictObject({
    seen: count.describe('Bash commands the hook saw in this project, in either mode.'),
    matched: count.describe('Of those, commands that matched at least one check.'),
    checks_matched: count.describe('Checks matched, summed over the commands (a fan-out matches many).'),
    shadow: count.describe('Of the commands seen, those seen in shadow mode.'),
  }),
  decisions: z
    .strictObject({
      deny: count.describe('Commands denied: every check they run had a CURRENT PASS receipt.'),
      rewrite: count.describe('Commands rewritten to vouch run CHECK --if-due.'),
      pass: count.describe('Commands the hook let run as typed.'),
      skip: count.describe('Checks vouch run --if-due or the MCP run tool skipped (a rewritten command skips through these).'),
    })
    .describe('In enforce mode.'),
  avoided: avoided.describe('In enforce mode: the check time denies and skips avoided.'),
  shadow: z.strictObject({
    decisions: z.strictObject({ deny: count, rewrite: count, pass: count }).describe('What the hooks decided in shadow mode; every command ran as typed.'),
    would_avoid: avoided.describe("What shadow mode's denies, and the skips its rewrites' --if-due would have made, would have avoided."),
  }),
  forced: z.strictObject({
    count: count.describe('Commands the hook saw run with VOUCH_FORCE=1 that matched a check.'),
    by_check: z.array(z.strictObject({ check: checkName, count })),
    latest: z
      .array(
        z.strictObject({
          at: time,
          host,
          session: z.string().nullable(),
          command: z.string().nullable().describe('Cut to 512 characters.'),
          checks: z.array(checkName),
        }),
      )
      .max(50)
      .describe('The latest 50, oldest first.'),
  }),
  reruns: z
    .array(
      z.strictObject({
        check: checkName,
        run_id: runId,
        started_at: time,
        result: checkResult,
        exit_code: z.number().int().min(0).nullable(),
        previous_run_id: runId.describe('The latest earlier sound receipt of the check with the same definition, context and inputs: it was CURRENT when this run started.'),
        previous_result: checkResult,
        previous_exit_code: z.number().int().min(0).nullable(),
        differs: z.boolean().describe('The result or exit code differs from the previous receipt: a flaky check or an input vouch does not see. A bug to report.'),
        after_force: z.boolean().describe('The hook saw a VOUCH_FORCE=1 command naming this check in the 10 minutes before this run started.'),
      }),
    )
    .describe('Runs in the period on exactly the definition, context and inputs of an earlier sound receipt (reusable, or failed with no other reason not to be), forced or not: the evidence that a skip is safe.'),
  differing: count.describe('Reruns whose result differs from the receipt that was CURRENT. Anything but 0 is a bug.'),
  notices,
});

export type SavingsDocument = z.output<typeof savingsDocument>;
