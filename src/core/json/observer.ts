// oxlint-disable unicorn/no-thenable -- `then` here is JSON Schema's keyword (https://json-schema.org/understanding-json-schema/reference/conditionals), not a promise's.
import { z } from 'zod';
import { count, durationMs, message, schemaVersion, time } from './common.js';

/*
 * `vouch observer --json`, and the pid and socket that start and stop share
 * (docs/json.md, "vouch observer --json").
 */

export const pid = z.number().int().min(1).meta({ id: 'pid', description: "The observer's process id." });

export const socket = z
  .string()
  .regex(/^\/.*\.sock$/)
  .meta({ id: 'socket', description: "The observer's Unix socket: in the state dir, or in a private runtime dir when that path is too long for a socket." });

// GapCode in src/observer/protocol.ts is this enum's type.
export const gapCode = z
  .enum([
    'observer-overflow',
    'observer-watcher-error',
    'observer-watch-limit',
    'observer-root-moved',
    'observer-barrier-timeout',
    'observer-busy',
    'observer-store-recovered',
  ])
  .meta({ id: 'gap_code', description: "Why the observer's index cannot be trusted right now; docs/json.md says what each means." });

const gapReason = z.strictObject({ code: gapCode, message }).meta({ id: 'gap_reason' });

const notRunning = z.strictObject({ schema: schemaVersion, running: z.literal(false) }).describe('No observer runs for this config and state dir.');

const running = z
  .strictObject({
    schema: schemaVersion,
    running: z.literal(true),
    pid,
    version: z.string().min(1).describe('The vouch version the observer runs.'),
    uptime_ms: durationMs.describe('How long it has run.'),
    healthy: z.boolean().describe('Its index can be trusted right now; when false, reasons says why and questions are answered by a direct scan instead.'),
    reasons: z.array(gapReason).describe('Why the index cannot be trusted. Empty exactly when healthy.'),
    watched_paths: count.describe('The inotify watches it holds: one per watched directory; 0 where the count cannot be read.'),
    index_files: count.describe('Distinct input files in the index.'),
    memory_rss_bytes: z.number().int().min(1).describe("The observer's resident memory."),
    events: count.describe('File-system events delivered since it started.'),
    overflows: count.describe('Times events came too fast to trust (the kernel queue could have overflowed); each forces a rescan.'),
    rescans: count.describe('Full scans since it started, the first index included.'),
    rescans_by_reason: z
      .array(
        z.strictObject({
          reason: z.string().min(1).describe('What started them, as last_rescan.reason says it.'),
          count: count.describe('How many full scans it started.'),
        }),
      )
      .describe('The full scans by what started them, each reason once, adding up to rescans.'),
    last_rescan: z
      .strictObject({
        at: time.describe('When it began.'),
        duration_ms: durationMs.describe('How long it took.'),
        reason: z
          .union([z.enum(['first-index', 'file-events', 'hard-linked-input', 'rewatch', 'git-rules', 'safety', 'lost-events']), gapCode])
          .describe(
            'What started it: first-index, file-events (events the index could not be patched from), hard-linked-input (a hard-linked input\'s identity changed), rewatch (the watcher was subscribed afresh), git-rules (a git rule file outside the root changed), safety (the periodic full scan after patches), lost-events (the kernel\'s event queue may have dropped events: it was found near full, or could not be sampled for a moment), or the gap code it recovered from.',
          ),
      })
      .nullable()
      .describe('The latest full scan; null before the first (a running observer has always made its first index, so null is not seen in practice).'),
    patches: count.describe('Times the index was brought up to date from events alone: content changes of files already in it, or changes to paths that are no input.'),
    last_patch: z
      .strictObject({
        at: time.describe('When it began.'),
        duration_ms: durationMs.describe('How long it took.'),
        paths: count.describe('The changed paths it took in.'),
      })
      .nullable()
      .describe('The latest patch; null when there was none.'),
    evidence_looks: z
      .strictObject({
        full: count.describe('Answers that looked at a traced receipt\'s whole evidence again.'),
        partial: count.describe('Answers that looked again only at the entries events said may have changed, and at those no event can speak for.'),
        entries: count.describe('Evidence entries looked at, in all.'),
      })
      .describe('How the observer looked at traced receipts\' evidence since it started.'),
    ready_ms: durationMs.describe('How long its first index took.'),
    socket,
  })
  .meta({
    description: 'An observer runs and answered.',
    allOf: [
      {
        description: 'reasons is empty exactly when the index is healthy.',
        if: { properties: { healthy: { const: true } } },
        then: { properties: { reasons: { type: 'array', maxItems: 0 } } },
        else: { properties: { reasons: { type: 'array', minItems: 1 } } },
      },
      {
        description: 'A last rescan exactly when there was one.',
        if: { properties: { rescans: { const: 0 } } },
        then: { properties: { last_rescan: { type: 'null' } } },
        else: { properties: { last_rescan: { type: 'object' } } },
      },
    ],
  });

export const observerDocument = z.xor([notRunning, running]);

export type ObserverDocument = z.output<typeof observerDocument>;
