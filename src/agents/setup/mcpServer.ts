import { canonicalJson } from '../../core/canonicalJson.js';
import type { AgentHost } from './host.js';
import type { AgentProject } from './project.js';
import type { Conflict } from './conflicts.js';
import { addJsonServer, isEmptyJsonConfig, jsonServerContent, jsonServerEntry, removeJsonServer } from './mcpJson.js';
import { addTomlServer, removeTomlServer, tomlBlock, tomlServerContent, tomlServerEntry } from './mcpToml.js';
import type { VouchCommand } from './vouchCommand.js';

/**
 * The MCP server entry setup registers, named `vouch`: Claude Code's
 * `.mcp.json` and Codex's `.codex/config.toml` both spawn `command` with
 * `args`, with no shell.
 */
export interface McpServerEntry {
  command: string;
  args: string[];
}

/** vouch's entry as it stands in a config file (null: none), or why vouch cannot tell. */
export type ServerContent = { content: string | null } | { problem: string };

/** `vouch mcp` run by the same install the hooks run, with the options that find this config and state dir. */
export function desiredMcpServer(command: VouchCommand, project: AgentProject): McpServerEntry {
  const [program, ...rest] = command.argv;
  return { command: program ?? 'vouch', args: [...rest, 'mcp', ...project.commandArgs] };
}

/** The content compared with the record: the entry's canonical JSON in `.mcp.json`, the marked table's text in config.toml. */
export function serverContent(host: AgentHost, entry: McpServerEntry | null): string {
  if (entry === null) return '';
  return host === 'claude' ? canonicalJson(entry) : tomlBlock(entry);
}

export function currentServerContent(host: AgentHost, text: string): ServerContent {
  return host === 'claude' ? jsonServerContent(text) : tomlServerContent(text);
}

/** The new text, and for config.toml the separator put before an appended table (null: the table was replaced in place). */
export function addServer(host: AgentHost, text: string, entry: McpServerEntry): { text: string; separator: string | null } {
  if (host === 'claude') return { text: addJsonServer(text, entry), separator: null };
  return addTomlServer(text, entry);
}

export function removeServer(host: AgentHost, text: string, separator: string): string {
  return host === 'claude' ? removeJsonServer(text) : removeTomlServer(text, separator);
}

/** A file setup created may be deleted once removal leaves this. */
export function isEmptyServerConfig(host: AgentHost, text: string): boolean {
  return host === 'claude' ? isEmptyJsonConfig(text) : text.trim() === '';
}

/** What a registered `vouch` server runs, for doctor; null when none is registered or vouch cannot read it. */
export function registeredServer(host: AgentHost, text: string): { command: string | null; args: string[] | null } | null {
  return host === 'claude' ? jsonServerEntry(text) : tomlServerEntry(text);
}

/**
 * A server named `vouch` with no record of vouch writing it is the user's
 * (registered by hand, perhaps from the docs): reported, never replaced.
 */
export function mcpServerConflict(item: { kind: string; state: string; recorded: unknown; absolutePath: string; path: string }): Conflict | null {
  if (item.kind !== 'server' || item.state !== 'edited' || item.recorded !== null) return null;
  return {
    code: 'mcp-server',
    path: item.absolutePath,
    tool: null,
    message: `${item.path} already registers an MCP server named "vouch" that vouch did not write (or has no record of writing), so setup leaves it as it is; to let setup register this install, delete or rename that entry, then run setup again`,
  };
}
