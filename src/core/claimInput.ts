import { z } from 'zod';
import { STAGES, type Claim } from './claim.js';
import { ClaimError } from './claimError.js';

/** A draft as sent: a workspace-relative path and the whole text the claimant wants there. */
const draftSchema = z.strictObject({
  path: z.string().describe('Workspace-relative, "/"-separated.'),
  text: z.string().describe('The whole file as the claimant wants it.'),
});

/**
 * A claim as JSON: what `vouch prove CLAIM.json` reads and the MCP `prove`
 * tool takes. Paths are checked for containment later (fs/draftPaths.ts),
 * where each refusal names its member too.
 */
export const claimShape = {
  project: z.string().optional().describe('The tsconfig both phases are judged under, workspace-relative. Default "tsconfig.json".'),
  case: z
    .strictObject({
      drafts: z.array(draftSchema).describe('The edit: each file as it should be.'),
      test: draftSchema.describe('The test meant to prove the edit; a new file, never written to the tree.'),
    })
    .describe('The proposed edit and its test.'),
  control: z
    .strictObject({
      drafts: z.array(draftSchema).describe('The same edit deliberately broken: the whole broken edit, not a patch. Empty means the tree as it is, without the edit.'),
      stage: z.enum(STAGES).describe('Where the control must break: type, lint or runtime.'),
      reason: z.string().describe('Why it must break there, in your words.'),
    })
    .describe('The edit broken on purpose, judged with the case\'s test.'),
};

export const claimSchema = z.strictObject({ $schema: z.string().optional(), ...claimShape });

export const DEFAULT_PROJECT = 'tsconfig.json';

/** The member a zod issue is about, spelled as docs and errors spell it: `case.drafts[2].path`. */
export function memberOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `${out === '' ? '' : '.'}${String(key)}`;
  return out === '' ? 'the claim' : out;
}

/** The value at a member of the raw input; zod does not keep it on the issue. */
function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw;
  for (const key of path) value = value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

function describe(issue: z.core.$ZodIssue, raw: unknown): string {
  switch (issue.code) {
    case 'unrecognized_keys':
      return `has unknown member${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
    case 'invalid_type':
      return valueAt(raw, issue.path) === undefined ? `is missing (expected ${issue.expected})` : `must be ${issue.expected}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    default:
      return issue.message;
  }
}

/** A claim from parsed JSON, or a claimant/malformed error naming every member it refused. */
export function parseClaim(raw: unknown): Claim {
  const parsed = claimSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${memberOf(issue.path)} ${describe(issue, raw)}`);
    throw new ClaimError('claimant', 'malformed', `${lines.join('; ')}. See docs/claims.md for the claim format.`);
  }
  const { case: proposed, control, project } = parsed.data;
  return { case: proposed, control, project: project ?? DEFAULT_PROJECT };
}

/** A claim from JSON text; `source` names where it came from in the error. */
export function parseClaimText(text: string, source: string): Claim {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ClaimError('claimant', 'malformed', `${source} is not valid JSON: ${(error as Error).message}`);
  }
  return parseClaim(raw);
}

export function claimJsonSchema(): object {
  return z.toJSONSchema(claimSchema, { target: 'draft-2020-12' });
}
