import { PHASES, STAGES, type StageCheck, type Issue, type Phase, type Stage, type Verdict } from './claim.js';
import { formatClaimToken } from './claimToken.js';

export type ClaimReceipt =
  | { receipt: string; digest: string; stage: Stage }
  | { receipt: null; why: string[] };

function describe(issues: readonly Issue[]): string {
  const first = issues[0];
  if (first === undefined) return '';
  const line = first.line === undefined ? '' : `:${first.line}${first.column === undefined ? '' : `:${first.column}`}`;
  const where = first.path === undefined ? '' : ` at ${first.path}${line}`;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return `${first.message}${where}${more}`;
}

/**
 * Mints a claim receipt from a verdict, or says every reason it will not.
 * Pure: the same verdict always gives the same answer, so a receipt can be
 * recomputed from a recorded verdict. Every condition is checked and reported,
 * not just the first, so the claimant can fix them all in one round.
 */
export function mintReceipt(verdict: Verdict): ClaimReceipt {
  const why: string[] = [];
  const checks = new Map<string, StageCheck>();
  for (const check of verdict.checks) {
    const key = `${check.phase}/${check.stage}`;
    // Two answers for one inspection cannot both be believed; neither is.
    if (checks.has(key)) why.push(`the verdict holds two ${check.phase} checks for the ${check.stage} stage; it must hold one per stage per phase`);
    checks.set(key, check);
  }
  const find = (phase: Phase, stage: Stage) => checks.get(`${phase}/${stage}`);
  const claimant = (check: StageCheck | undefined) => check?.issues.filter((issue) => issue.origin === 'claimant') ?? [];

  // An unfinished or missing inspection may have missed anything, so the other conditions cannot stand on it.
  for (const phase of PHASES) {
    for (const stage of STAGES) {
      const check = find(phase, stage);
      if (check === undefined) why.push(`the ${phase} was not inspected at the ${stage} stage`);
      else if (!check.completed) why.push(`the ${phase} inspection at the ${stage} stage did not complete`);
      const instrument = check?.issues.filter((issue) => issue.origin === 'instrument') ?? [];
      if (instrument.length > 0) why.push(`the ${phase} inspection at the ${stage} stage had an instrument issue: ${describe(instrument)}`);
    }
  }

  for (const stage of STAGES) {
    const issues = claimant(find('case', stage));
    if (issues.length > 0) why.push(`the case is not clean at the ${stage} stage: ${describe(issues)}`);
  }

  const declared = verdict.controlStage;
  if (find('control', declared) !== undefined && claimant(find('control', declared)).length === 0) {
    why.push(`the control did not break at its declared ${declared} stage: no claimant issue there`);
  }
  for (const stage of STAGES) {
    if (stage === declared) continue;
    const issues = claimant(find('control', stage));
    // Breaking earlier or elsewhere means the declared stage (and so the test, for runtime) was never what caught it.
    if (issues.length > 0) why.push(`the control also breaks at the ${stage} stage, not only at its declared ${declared} stage: ${describe(issues)}`);
  }

  if (why.length > 0) return { receipt: null, why };
  return {
    receipt: formatClaimToken({ digest: verdict.digest, stage: declared, toolchain: verdict.toolchain, config: verdict.config.digest, project: verdict.project }),
    digest: verdict.digest,
    stage: declared,
  };
}
