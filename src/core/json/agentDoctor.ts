import { z } from 'zod';
import { absolutePath, schemaVersion } from './common.js';
import { command, conflict, hookMode, host, itemId, itemKind, itemState, relativePath } from './agentSetup.js';

/* `vouch agent doctor [HOST] --json` (docs/json.md, "vouch agent"). */

const hostReport = z.strictObject({
  host,
  record_path: absolutePath,
  recorded: z.boolean().describe('A readable setup record exists.'),
  items: z
    .array(
      z.strictObject({
        id: itemId,
        kind: itemKind,
        path: relativePath,
        state: itemState,
        problem: z.string().nullable().describe('Why edited or invalid; null otherwise.'),
      }),
    )
    .min(4)
    .max(4),
  hooks: z
    .array(
      z.strictObject({
        path: absolutePath,
        event: z.string().min(1),
        matcher: z.string(),
        command: z.string().min(1),
        runs: z.string().nullable().describe('The entry script the hook will run, symlinks resolved; null when it cannot be found.'),
        same_install: z.boolean().describe('runs is this install.'),
      }),
    )
    .describe("vouch handlers found in the host's project and user settings files."),
  mcp_server: z
    .strictObject({
      path: absolutePath.describe('The config file.'),
      registered: z.boolean().describe('A server named vouch is in it. false also when the file cannot be read (the item is invalid).'),
      command: z
        .string()
        .nullable()
        .describe("What it runs, when vouch can read it (any entry in .mcp.json; only vouch's own table in config.toml); null otherwise."),
      args: z.array(z.string()).nullable(),
    })
    .describe("The MCP server named vouch in the host's project config (.mcp.json, .codex/config.toml), whoever wrote it."),
  conflicts: z.array(conflict),
  mode: hookMode.nullable().describe("The PreToolUse hooks' mode: shadow when any of them passes --shadow; null when none is installed."),
});

export const agentDoctorDocument = z.strictObject({
  schema: schemaVersion,
  root: absolutePath,
  config_path: absolutePath,
  state_dir: absolutePath,
  config: z.strictObject({
    valid: z.boolean().describe('The config loads.'),
    checks: z.array(z.string().min(1)).describe('Its check names, in config order; empty when not valid.'),
    error: z
      .strictObject({ code: z.string().min(1), message: z.string().min(1) })
      .nullable()
      .describe('Why it does not load, as an error document\'s code and message; null when valid.'),
  }),
  command,
  observer: z.strictObject({
    running: z.boolean().describe('An observer is recorded for this config and its process is alive.'),
    reachable: z.boolean().nullable().describe('Its socket answered within VOUCH_OBSERVER_TIMEOUT_MS; null when none runs.'),
    healthy: z.boolean().nullable().describe('Its index can be trusted; null when none runs or it did not answer.'),
    pid: z.number().int().min(1).nullable(),
    socket: z.string().nullable(),
    error: z.string().nullable().describe('Why it is unreachable or unhealthy; null otherwise.'),
  }),
  hosts: z.array(hostReport).min(1).max(2),
  behavior_verified: z.literal(false).describe('Always false: intact files do not prove the agent follows them.'),
});

export type AgentDoctorDocument = z.output<typeof agentDoctorDocument>;
