import { z } from 'zod';
import { count, durationMs, schemaVersion } from './common.js';
import { pid, socket } from './observer.js';

/* `vouch start --json` (docs/json.md, "vouch start --json"). */

export const startDocument = z.strictObject({
  schema: schemaVersion,
  action: z
    .enum(['started', 'already-running', 'replaced'])
    .describe(
      'started: a new observer. already-running: one of this very build was already serving and was left alone. replaced: one of another build, or one that did not answer, was stopped and a new one started.',
    ),
  pid,
  ready_ms: durationMs.describe("How long the observer's first index took (for already-running, when it started)."),
  index_files: count.describe('Distinct input files in its index.'),
  socket,
});

export type StartDocument = z.output<typeof startDocument>;
