import { z } from 'zod';
import { CLAIM_ERROR_CODES } from '../claimError.js';
import { VOUCH_ERROR_CODES } from '../errors.js';
import { schemaVersion } from './common.js';

/*
 * What any command prints with --json instead of its answer when it stops on
 * an error (docs/json.md, "Errors"). The codes are the closed list in
 * src/core/errors.ts; a claim error also names who must act.
 */

const CLAIM_CODES: readonly string[] = CLAIM_ERROR_CODES;
const plainCodes = VOUCH_ERROR_CODES.filter((code) => !CLAIM_CODES.includes(code));
const [firstPlain, ...otherPlain] = plainCodes;
const [firstClaim, ...otherClaim] = CLAIM_ERROR_CODES;

const plainError = z.strictObject({
  code: z
    .enum([firstPlain!, ...otherPlain])
    .describe('Stable, lowercase and hyphenated, e.g. unknown-check or config-invalid; docs/json.md lists them.'),
  message: z.string().min(1).describe('For people: names the problem and the fix. Not stable; match on code.'),
});

const ORIGINS = ['claimant', 'workspace', 'instrument'] as const;

const claimError = z.strictObject({
  code: z.enum([firstClaim, ...otherClaim]),
  origin: z
    .enum(ORIGINS)
    .describe('Who must act. claimant: the claim; workspace: the workspace\'s files or config; instrument: vouch or a tool did not complete.'),
  message: z
    .string()
    .regex(new RegExp(`^\\[(${ORIGINS.join('|')})\\] (${CLAIM_ERROR_CODES.join('|')}): `))
    .describe('[origin] code: what went wrong and the fix.'),
});

export const errorDocument = z.strictObject({
  schema: schemaVersion,
  error: z
    .xor([plainError, claimError])
    .describe('Every error has a code and a message. A claim error (vouch prove) also says who must act, in origin.'),
});

export type ErrorDocument = z.output<typeof errorDocument>;
