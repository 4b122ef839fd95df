import { z } from 'zod';
import { absolutePath } from './common.js';
import { planFields } from './agentSetup.js';

/* `vouch agent remove HOST --json`: setup's fields without command and conflicts (docs/json.md, "vouch agent"). */

export const agentRemoveDocument = z.strictObject({
  ...planFields,
  operation: z.literal('remove'),
  record_path: absolutePath.describe('Deleted once vouch owns nothing more; kept, listing only the refused items, otherwise.'),
});

export type AgentRemoveDocument = z.output<typeof agentRemoveDocument>;
