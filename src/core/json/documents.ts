import { z } from 'zod';
import { agentDoctorDocument } from './agentDoctor.js';
import { agentRemoveDocument } from './agentRemove.js';
import { agentSetupDocument } from './agentSetup.js';
import { errorDocument } from './error.js';
import { explainDocument } from './explain.js';
import { explainInputsDocument } from './explainInputs.js';
import { initDocument } from './init.js';
import { logDocument } from './log.js';
import { observerDocument } from './observer.js';
import { proveDocument } from './prove.js';
import { runDocument } from './run.js';
import { savingsDocument } from './savings.js';
import { startDocument } from './start.js';
import { statusDocument } from './status.js';
import { stopDocument } from './stop.js';

/**
 * Every document of the --json contract, with the title and description its
 * schemas/NAME.schema.json carries. scripts/generate-config-schema.mjs writes
 * those files from here; nothing on a command's own path loads this module.
 */
export const JSON_DOCUMENTS = [
  {
    name: 'status',
    schema: statusDocument,
    title: 'vouch status --json',
    description: "Whether each check's latest receipt still applies. Fields: docs/json.md.",
  },
  {
    name: 'run',
    schema: runDocument,
    title: 'vouch run --json',
    description:
      "What each check did: ran (with its new receipt) or was skipped (with the status that allowed it). The checks' own output goes to stderr. Fields: docs/json.md.",
  },
  {
    name: 'explain',
    schema: explainDocument,
    title: 'vouch explain CHECK --json',
    description: "What changed since CHECK's latest receipt. All three lists are empty when there is no receipt. Fields: docs/json.md.",
  },
  {
    name: 'explain-inputs',
    schema: explainInputsDocument,
    title: 'vouch explain CHECK --inputs --json',
    description:
      "What CHECK's latest receipt depends on, as it recorded it: its inputs grouped and counted, with every path, its context and its declared globs. receipt is null, and nothing is known, when there is no receipt. Fields: docs/json.md.",
  },
  { name: 'log', schema: logDocument, title: 'vouch log --json', description: 'Receipts, newest first, failures included. Fields: docs/json.md.' },
  {
    name: 'init',
    schema: initDocument,
    title: 'vouch init --json',
    description: 'The proposed config, why each check is in it, and whether it was written. Fields: docs/json.md.',
  },
  {
    name: 'start',
    schema: startDocument,
    title: 'vouch start --json',
    description: 'The observer that now serves this checkout, once its first index is ready. Fields: docs/json.md.',
  },
  {
    name: 'stop',
    schema: stopDocument,
    title: 'vouch stop --json',
    description: 'Whether an observer was stopped. Stopping none is not an error. Fields: docs/json.md.',
  },
  {
    name: 'observer',
    schema: observerDocument,
    title: 'vouch observer --json',
    description:
      "The checkout's observer, in its own words: running false alone when none runs, or every field when one does. Fields: docs/json.md.",
  },
  {
    name: 'prove',
    schema: proveDocument,
    title: 'vouch prove --json',
    description:
      'The verdict on a claim and its receipt token, if one was minted. The MCP prove tool returns the same document as structuredContent. Fields: docs/json.md and docs/claims.md.',
  },
  {
    name: 'error',
    schema: errorDocument,
    title: 'vouch COMMAND --json, on an error',
    description:
      'What any command prints on stdout, instead of its answer, when it stops on an error you can act on (exit code 2). Fields: docs/json.md.',
  },
  {
    name: 'agent-setup',
    schema: agentSetupDocument,
    title: 'vouch agent setup HOST --json',
    description:
      "What setup did (--apply) or would do (--dry-run) for one agent: each managed item's state and action (the MCP server registration included), each file's diff, conflicts and notes. Fields: docs/json.md, \"vouch agent\".",
  },
  {
    name: 'agent-remove',
    schema: agentRemoveDocument,
    title: 'vouch agent remove HOST --json',
    description:
      'What removal did (--apply) or would do (--dry-run): only intact content vouch owns goes; edited content is reported as refused. Fields: docs/json.md, "vouch agent".',
  },
  {
    name: 'savings',
    schema: savingsDocument,
    title: 'vouch savings --json',
    description:
      'What the ledger holds over a period: commands seen and checks matched, denies, rewrites and skips, the check time avoided (and, in shadow mode, what would have been), forced reruns, and reruns whose result differed from a CURRENT receipt. Fields: docs/json.md, "vouch savings --json".',
  },
  {
    name: 'agent-doctor',
    schema: agentDoctorDocument,
    title: 'vouch agent doctor [HOST] --json',
    description:
      "A read-only account of vouch's agent integration: the command lookup, the config, the observer, each host's managed items, installed hooks, MCP server and conflicts. Fields: docs/json.md, \"vouch agent\".",
  },
] as const;

export type JsonDocument = (typeof JSON_DOCUMENTS)[number];

/**
 * A document's JSON Schema (draft 2020-12), exactly as schemas/NAME.schema.json
 * holds it: $schema, then its title and description, then the rest as zod
 * writes it (https://zod.dev/json-schema).
 */
export function documentSchemaFile(document: JsonDocument): Record<string, unknown> {
  const { $schema, title: _title, description: _description, ...rest } = z.toJSONSchema(document.schema, {
    target: 'draft-2020-12',
    io: 'output',
    // init's config is a z.custom that refers to config.schema.json through its metadata.
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return { $schema, title: document.title, description: document.description, ...rest };
}
