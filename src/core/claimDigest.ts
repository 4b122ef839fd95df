import { posix } from 'node:path';
import { STAGES, type Claim, type Draft } from './claim.js';
import { canonicalJson } from './canonicalJson.js';
import { ClaimError } from './claimError.js';
import { sha256 } from './digest.js';

/**
 * The one spelling of a workspace-relative path, so `./a.ts`, `a.ts` and
 * `b/../a.ts` digest alike. Containment proper (NUL bytes, backslashes,
 * drive letters) is fs/draftPaths.ts; this only refuses what would make the
 * digest depend on where the checkout lives.
 */
export function canonicalDraftPath(path: string, member: string): string {
  const normal = posix.normalize(path);
  if (posix.isAbsolute(normal) || normal === '..' || normal.startsWith('../') || normal === '.') {
    throw new ClaimError('claimant', 'refused', `${member} must be a file path relative to the workspace, not "${path}"`);
  }
  return normal.replace(/\/+$/, '');
}

function canonicalDrafts(drafts: readonly Draft[], member: string): Draft[] {
  const seen = new Map<string, number>();
  const canonical = drafts.map((draft, index) => {
    const path = canonicalDraftPath(draft.path, `${member}[${index}].path`);
    const earlier = seen.get(path);
    if (earlier !== undefined) {
      throw new ClaimError('claimant', 'refused', `${member}[${index}].path names "${path}" again (already ${member}[${earlier}].path); draft each file once`);
    }
    seen.set(path, index);
    return { path, text: draft.text };
  });
  // Drafts are a set of files: the order the claimant listed them in is not part of the claim.
  return canonical.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The claim's case and control in canonical form: what is digested, and what identity is judged on. */
export function canonicalClaim(claim: Claim) {
  const caseDrafts = canonicalDrafts(claim.case.drafts, 'case.drafts');
  const test = { path: canonicalDraftPath(claim.case.test.path, 'case.test.path'), text: claim.case.test.text };
  if (caseDrafts.some((draft) => draft.path === test.path)) {
    throw new ClaimError('claimant', 'refused', `case.test.path "${test.path}" is also a case draft; the test must be its own file`);
  }
  const controlDrafts = canonicalDrafts(claim.control.drafts, 'control.drafts');
  return {
    case: { drafts: caseDrafts, test },
    control: { drafts: controlDrafts, stage: claim.control.stage, reason: claim.control.reason },
  };
}

/**
 * A control that is byte-identical to its case cannot break anywhere the case
 * does not, so it proves nothing; it is refused before any stage spends time on it.
 */
export function refuseIdenticalControl(claim: Claim): void {
  const canonical = canonicalClaim(claim);
  if (canonicalJson(canonical.case.drafts) === canonicalJson(canonical.control.drafts)) {
    throw new ClaimError('claimant', 'refused', 'control.drafts are byte-identical to case.drafts; the control must break the edit');
  }
}

/**
 * The digest of the case and the control, the reason included. The project is
 * left out: it is bound separately in the receipt token. Version-tagged so a
 * change of this rule cannot collide with old digests.
 */
export function claimDigest(claim: Claim): string {
  return sha256(canonicalJson({ claim: 1, ...canonicalClaim(claim) }));
}

/** Everything about a claim that can be judged without a workspace: paths, duplicates, identity. */
export function validateClaim(claim: Claim): string {
  if (!STAGES.includes(claim.control.stage)) {
    throw new ClaimError('claimant', 'refused', `control.stage must be one of ${STAGES.join(', ')}, not "${String(claim.control.stage)}"`);
  }
  if (claim.control.reason.trim() === '') {
    throw new ClaimError('claimant', 'refused', 'control.reason is empty; say in your own words why the control must break at its stage');
  }
  refuseIdenticalControl(claim);
  return claimDigest(claim);
}
