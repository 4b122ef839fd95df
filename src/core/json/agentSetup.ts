import { z } from 'zod';
import { absolutePath, count, schemaVersion } from './common.js';

/*
 * `vouch agent setup HOST --json`, and the parts that agent remove and agent
 * doctor share (docs/json.md, "vouch agent").
 */

export const host = z.enum(['claude', 'codex']).meta({ id: 'host', description: 'The agent: claude (Claude Code) or codex (Codex).' });

export const relativePath = z.string().regex(/^[^/]/).meta({ id: 'relative_path', description: 'Relative to the root, with /.' });

export const mode = z.enum(['apply', 'dry-run']).meta({ id: 'mode', description: '--apply or --dry-run. (An interactive run prints no JSON.)' });

export const itemId = z.enum(['hooks', 'instructions', 'skill', 'mcp']).meta({ id: 'item_id' });

export const itemKind = z.enum(['hooks', 'section', 'file', 'server']).meta({
  id: 'item_kind',
  description:
    'hooks: vouch\'s handlers in a settings file; section: the marked section of a Markdown file; file: a whole file; server: vouch\'s MCP server entry (mcpServers.vouch in .mcp.json, the marked [mcp_servers.vouch] table in .codex/config.toml).',
});

export const itemState = z.enum(['missing', 'intact', 'outdated', 'edited', 'invalid']).meta({ id: 'item_state' });

export const item = z
  .strictObject({
    id: itemId,
    kind: itemKind,
    path: relativePath,
    state: itemState.describe('As found, before this call.'),
    action: z
      .enum(['create', 'update', 'unchanged', 'refused', 'skipped', 'remove', 'none'])
      .describe('skipped: setup with --no-mcp leaves the mcp item out.'),
    message: z.string().min(1).describe('For people: what happens; for refused, why and what to do.'),
  })
  .meta({ id: 'item' });

export const fileChange = z
  .strictObject({
    path: relativePath,
    change: z.enum(['create', 'modify', 'delete']),
    diff: z.string().describe('A unified diff of the file (a/ and b/ prefixes; /dev/null for a created or deleted file).'),
  })
  .meta({ id: 'file_change' });

const lookup = z
  .strictObject({
    shell: z.string().min(1).describe('The shell asked: $SHELL, else /bin/sh.'),
    found: z.string().nullable().describe('What it printed; null when it found no vouch.'),
    resolved: z.string().nullable().describe('found with symlinks resolved; null when not found or not a path.'),
    error: z.string().nullable().describe('Why the shell could not be asked; null when it could.'),
  })
  .meta({ id: 'lookup', description: 'What a login shell answered to `command -v vouch`.' });

const commandFields = {
  program: z
    .string()
    .min(1)
    .describe('How hooks and instructions call vouch: "vouch", or Node and this install\'s entry script by absolute path, shell-quoted.'),
  this_install: absolutePath.describe('The entry script of the vouch that answered, symlinks resolved.'),
  node: absolutePath.describe('The Node that runs it.'),
  same_install: z.boolean().describe('The login shell\'s vouch is this install, so program is "vouch".'),
  hook_client: absolutePath
    .nullable()
    .describe('The native hook client the hook handlers run (build/Release/vouch_hook), which asks a resident hook server before it starts Node; null when this install has none and the hooks run program.'),
  lookup,
};

export const command = z.strictObject(commandFields).meta({ id: 'command' });

const mcpServerEntry = z
  .strictObject({
    command: z.string().min(1).describe('"vouch", or this install\'s Node by absolute path.'),
    args: z
      .array(z.string())
      .describe('For the Node form, the entry script first; then mcp, then --config/--state-dir when they are not the defaults.'),
  })
  .meta({
    id: 'mcp_server_entry',
    description: 'A stdio MCP server as the hosts spawn it, with no shell: vouch mcp, run by the same install as the hooks.',
  });

/** How the hooks act on a decision (docs/hooks.md, "Shadow mode"). */
export const hookMode = z.enum(['enforce', 'shadow']);

const commandSetup = z
  .strictObject({
    ...commandFields,
    hook_command: z
      .string()
      .regex(/ hook (claude|codex)( --shadow)?$/)
      .describe('The command each hook handler runs: program, then hook HOST, then --shadow in shadow mode.'),
    hook_mode: hookMode.describe('enforce: the hooks deny and rewrite. shadow: they decide and record, and every command runs as typed.'),
    mcp_server: mcpServerEntry.nullable().describe('The MCP server entry setup registers as "vouch"; null with --no-mcp.'),
  })
  .meta({ id: 'command_setup' });

export const conflict = z
  .strictObject({
    code: z
      .enum(['agents-override', 'rewrite-hook', 'mcp-server'])
      .describe('mcp-server: the host\'s project MCP config registers a server named vouch that vouch did not write.'),
    path: absolutePath.describe('The file that holds it.'),
    tool: z.string().nullable().describe('rewrite-hook: the other tool (rtk, snip, tokf); otherwise null.'),
    message: z.string().min(1),
  })
  .meta({ id: 'conflict' });

/** The fields setup and remove share, in the order both print them. */
export const planFields = {
  schema: schemaVersion,
  host,
  root: absolutePath.describe('The project root.'),
  config_path: absolutePath.describe('The config whose checks the skill lists.'),
  record_path: absolutePath.describe('The record of what setup wrote: <state dir>/agent-HOST.json.'),
  mode,
  applied: z.boolean().describe('Files and the record were written: true with --apply, false with --dry-run.'),
  items: z.array(item).min(4).max(4).describe('hooks, instructions, skill, mcp, in that order.'),
  files: z.array(fileChange).describe('One entry per file that changes; an item that is unchanged or refused has none.'),
  refused: count.describe('Items whose action is refused. The exit code is 1 exactly when it is above 0.'),
  notes: z.array(z.string().min(1)).describe('Things to know, for people (Codex trust in /hooks, the program by path).'),
};

export const agentSetupDocument = z.strictObject({
  ...planFields,
  operation: z.literal('setup'),
  command: commandSetup,
  conflicts: z.array(conflict),
});

export type AgentSetupDocument = z.output<typeof agentSetupDocument>;
export type CommandJson = z.output<typeof command>;
export type ConflictJson = z.output<typeof conflict>;
