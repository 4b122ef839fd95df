import { z } from 'zod';
import { schemaVersion } from './common.js';

/*
 * `vouch prove CLAIM --json`, which the MCP prove tool returns as its
 * structuredContent too (docs/json.md, docs/claims.md).
 */

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const stage = z.enum(['type', 'lint', 'runtime']).meta({ id: 'stage' });
const phase = z.enum(['case', 'control']);

const issue = z
  .strictObject({
    origin: z
      .enum(['claimant', 'workspace', 'instrument'])
      .describe(
        'Who must act: claimant (a diagnostic about a draft or the test), workspace (already there, or config the claim did not draft), instrument (the inspection did not complete).',
      ),
    stage,
    path: z.string().nullable().describe('Workspace-relative, the declared path; null when the issue is about no file.'),
    line: z.number().int().min(1).nullable().describe('1-based.'),
    column: z.number().int().min(1).nullable().describe('1-based; null without a line, or when the tool gave none.'),
    code: z.string().nullable().describe("The tool's own code: TS2322, eslint(no-debugger), no-undef."),
    message: z.string(),
  })
  .meta({ id: 'issue' });

export const proveDocument = z.strictObject({
  schema: schemaVersion,
  digest: sha256.describe('The claim digest: sha256 of the canonical case and control, the reason included.'),
  receipt: z
    .string()
    .regex(/^vouch-claim:[0-9a-f]{64}:(type|lint|runtime):/)
    .nullable()
    .describe('The claim receipt token (vouch-claim:...), or null when a receipt condition failed. A statement that can be recomputed, not an authenticator.'),
  why: z.array(z.string()).describe('Every receipt condition that failed, as sentences; empty when a receipt was minted.'),
  verdict: z.strictObject({
    digest: sha256,
    control_stage: stage,
    toolchain: z
      .strictObject({
        typescript: z.string(),
        linter: z.strictObject({ name: z.string(), version: z.string() }),
        vitest: z.string().nullable().describe('The Vitest version when Vitest is the runner that judged, else null.'),
        jest: z.string().nullable().describe('The Jest version when Jest is the runner that judged, else null.'),
      })
      .describe("The workspace's own tools that judged the claim: exactly one of vitest and jest is not null."),
    config: z
      .strictObject({
        digest: z
          .string()
          .regex(/^[0-9a-f]{8,64}$/)
          .describe('Digest of the judge config files as they were: the linters\', the test runner\'s, the tsconfigs and package.json\'s judge members.'),
        files: z.array(z.string()).describe('The judge config files that exist, workspace-relative.'),
      })
      .describe("What the judges were configured with; the token's config@ field."),
    project: z.strictObject({
      tsconfig: z.string().describe('Workspace-relative.'),
      options_digest: z
        .string()
        .regex(/^[0-9a-f]{8,64}$/)
        .describe('Digest of the effective compiler options, paths made workspace-relative.'),
    }),
    checks: z
      .array(
        z.strictObject({
          stage,
          phase,
          completed: z.boolean().describe('false when the inspection did not complete; its answer cannot be trusted.'),
          issues: z.array(issue),
        }),
      )
      .describe("One per stage per phase: the case's type, lint and runtime, then the control's."),
  }),
  timings: z
    .array(z.strictObject({ stage, phase, ms: z.number().int().min(0) }))
    .describe('Milliseconds each stage took over each phase.'),
  ms: z.number().int().min(0).describe('Wall time of the whole prove, warming included.'),
  cold: z.boolean().describe('true when a stage had to warm (load its tool) for this prove, or it waited for a warming already under way.'),
  notices: z
    .array(z.string())
    .describe("What the prove noticed that is not about the claim, such as a dead served prover's socket it removed; also printed on stderr."),
});

export type ProveDocument = z.output<typeof proveDocument>;
