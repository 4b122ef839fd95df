import type { CheckDefinition } from '../../core/definition.js';
import type { AgentHost } from './host.js';
import { SECTION_BEGIN, SECTION_END } from './managedSection.js';
import { shellQuote } from '../shellQuote.js';

/** What the generated instructions need to know about the project. */
export interface InstructionFacts {
  host: AgentHost;
  /** How the agent's shell calls vouch: `vouch`, or this install by path. */
  program: string;
  /** Extra options every command needs (`--config FILE`), already quoted, or ''. */
  options: string;
  checks: readonly CheckDefinition[];
}

function vouch(facts: InstructionFacts, args: string): string {
  return `${facts.program} ${args}${facts.options}`;
}

function runsWhat(check: CheckDefinition): string {
  if (check.script !== null) return `${check.packageManager ?? 'npm'} run ${check.script}`;
  return (check.command ?? []).map(shellQuote).join(' ');
}

/**
 * The managed section of CLAUDE.md or AGENTS.md. Kept to a few lines: Codex
 * reads AGENTS.md files into one 32 KiB budget, and the skill holds the details.
 */
export function sectionText(facts: InstructionFacts): string {
  const names = facts.checks.map((check) => check.name).join(', ');
  return [
    SECTION_BEGIN,
    '## Checks: ask vouch before rerunning them',
    '',
    `vouch keeps receipts of this project's checks (${names}). Before rerunning one, ask \`${vouch(facts, 'status')}\`;`,
    `run checks with \`${vouch(facts, 'run CHECK --if-due')}\`, which skips a check whose passing receipt still applies.`,
    'A hook answers for typed check commands: when it says a check is CURRENT, use that answer;',
    '`VOUCH_FORCE=1 <command>` runs it anyway. The `vouch` skill lists every check and command.',
    SECTION_END,
  ].join('\n');
}

/** The skill: the exact commands for this config, one per check. */
export function skillText(facts: InstructionFacts): string {
  const lines = [
    '---',
    'name: vouch',
    'description: Check whether typecheck, lint, test or build results still hold before rerunning them, and run checks so a receipt is recorded. Use before running any of this project\'s checks, and before saying that checks pass.',
    '---',
    '',
    '<!-- Managed by `vouch agent setup`: edits are refused on upgrade, and `vouch agent remove` leaves an edited file alone. -->',
    '',
    '# vouch: receipts for this project\'s checks',
    '',
    'vouch records a receipt each time a check runs, bound to the files, tools and settings it read.',
    'It answers in milliseconds whether that receipt still applies:',
    '',
    '- `CURRENT`: nothing the check depends on changed since its receipt.',
    '- `STALE`: something changed; `explain` says what.',
    '- `UNVERIFIED`: no answer (never run, or an input could not be observed).',
    '',
    '`result` (`PASS`/`FAIL`) is the receipt\'s outcome, kept apart from freshness. Only a check that is',
    '`CURRENT`, `PASS` and `reuse_eligible` may be reported as passing without a rerun.',
    '',
    '## Commands',
    '',
    `- All checks, machine-readable: \`${vouch(facts, 'status --json')}\``,
    `- Run what is due, skip what still passes: \`${vouch(facts, 'run --if-due')}\``,
    `- Why a check is stale: \`${vouch(facts, 'explain CHECK')}\``,
    `- Recent receipts: \`${vouch(facts, 'log')}\``,
    '',
    '## Checks in this project',
    '',
    '| check | kind | runs | status | run |',
    '|---|---|---|---|---|',
    ...facts.checks.map((check) => {
      const name = shellQuote(check.name);
      return `| ${check.name} | ${check.kind} | \`${runsWhat(check)}\` | \`${vouch(facts, `status ${name}`)}\` | \`${vouch(facts, `run ${name} --if-due`)}\` |`;
    }),
    '',
    '## Rules',
    '',
    '- Before rerunning a check, ask `status`. If it is CURRENT and PASS, do not rerun it.',
    '- Run checks through `run CHECK --if-due`: it records a receipt, and skips a check whose passing receipt applies.',
    '- A hook may deny a check command because its receipt is CURRENT: the reason gives that run\'s result and the part of its stored output your command would have shown. Use it instead of rerunning. To rerun anyway (a test you suspect is flaky), prefix the command with `VOUCH_FORCE=1`.',
    '- A `FAIL` that is CURRENT is still a failure: fix the code, then run the check again.',
    '',
  ];
  return lines.join('\n');
}
