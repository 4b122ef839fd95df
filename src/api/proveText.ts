import { toolchainRunner } from '../core/claim.js';
import type { IssueJson, ProveReportJson } from './prove.js';

function where(issue: IssueJson): string {
  if (issue.path === null) return '';
  if (issue.line === null) return `${issue.path}: `;
  return issue.column === null ? `${issue.path}:${issue.line}: ` : `${issue.path}:${issue.line}:${issue.column}: `;
}

/** Who must act first: the claimant's own issues, then what stopped an inspection, then the workspace's baseline. */
const ORIGIN_ORDER: readonly IssueJson['origin'][] = ['claimant', 'instrument', 'workspace'];

/**
 * The issues a check shows, in the order a reader must act on them. Every
 * claimant issue is shown, however many baseline issues the workspace
 * already had: they are what the claim's edit did. The others are capped.
 */
export function shownIssues(issues: readonly IssueJson[], max: number): { shown: IssueJson[]; hidden: number } {
  const ordered = ORIGIN_ORDER.flatMap((origin) => issues.filter((issue) => issue.origin === origin));
  const claimant = ordered.filter((issue) => issue.origin === 'claimant');
  const others = ordered.slice(claimant.length);
  return { shown: [...claimant, ...others.slice(0, max)], hidden: Math.max(0, others.length - max) };
}

function issueLine(issue: IssueJson): string {
  const code = issue.code === null ? '' : ` (${issue.code})`;
  return `    [${issue.origin}] ${where(issue)}${issue.message.split('\n')[0]}${code}`;
}

/**
 * A prove report as text, the one form the CLI and the MCP tool both show:
 * a line per stage per phase, the issues under it, the reasons a receipt was
 * refused, and, last, `receipt <token>` or `no receipt`, so a reader (or a
 * model) finds the outcome in one place. Under each check the claimant's own
 * issues come first and are never cut; the rest are capped at `maxIssues`.
 */
export function proveText(report: ProveReportJson, options: { maxIssues?: number } = {}): string {
  const max = options.maxIssues ?? 5;
  const { verdict } = report;
  const lines = [
    `claim ${report.digest.slice(0, 12)}: control must break at ${verdict.control_stage}; project ${verdict.project.tsconfig}`,
    `judged by typescript@${verdict.toolchain.typescript}, ${verdict.toolchain.linter.name}@${verdict.toolchain.linter.version}, ${toolchainRunner(verdict.toolchain).name}@${toolchainRunner(verdict.toolchain).version}${report.cold ? ' (cold)' : ''} in ${report.ms} ms`,
  ];
  for (const check of verdict.checks) {
    const claimant = check.issues.filter((issue) => issue.origin === 'claimant').length;
    const other = check.issues.length - claimant;
    const took = report.timings.find((timing) => timing.stage === check.stage && timing.phase === check.phase)?.ms;
    const state = !check.completed
      ? 'did not complete'
      : claimant > 0
        ? `breaks: ${claimant} claimant issue${claimant === 1 ? '' : 's'}`
        : 'clean';
    const notes = other > 0 ? `, ${other} other issue${other === 1 ? '' : 's'}` : '';
    lines.push(`  ${check.phase.padEnd(8)}${check.stage.padEnd(9)}${state}${notes}${took === undefined ? '' : ` (${took} ms)`}`);
    const { shown, hidden } = shownIssues(check.issues, max);
    for (const issue of shown) lines.push(issueLine(issue));
    if (hidden > 0) lines.push(`    … and ${hidden} more (--json has all)`);
  }
  for (const why of report.why) lines.push(`why: ${why}`);
  lines.push(report.receipt === null ? 'no receipt' : `receipt ${report.receipt}`);
  return lines.join('\n') + '\n';
}
