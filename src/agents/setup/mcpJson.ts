import { canonicalJson } from '../../core/canonicalJson.js';
import { DEFAULT_JSON_STYLE, formatJson, jsonStyleOf, parseJsonObject } from './jsonText.js';
import { appendMember, findProperty, jsonAt, lineIndent, parseJsonTree, removeMember } from './jsonTree.js';
import type { McpServerEntry, ServerContent } from './mcpServer.js';

/**
 * vouch's entry in Claude Code's project `.mcp.json`: `mcpServers.vouch`.
 * Edited at exactly that member, so every other server and key keeps its bytes.
 */

/** The `vouch` entry as canonical JSON, null when there is none. */
export function jsonServerContent(text: string): ServerContent {
  const parsed = parseJsonObject(text);
  if ('error' in parsed) return { problem: `it is not valid JSON (${parsed.error})` };
  const servers = parsed.value.mcpServers;
  if (servers === undefined) return { content: null };
  if (servers === null || typeof servers !== 'object' || Array.isArray(servers)) return { problem: '"mcpServers" is not an object' };
  const entry = (servers as Record<string, unknown>).vouch;
  return { content: entry === undefined ? null : canonicalJson(entry) };
}

/** The entry as a host reads it, for doctor; null fields when it is not a command and a list of words. */
export function jsonServerEntry(text: string): { command: string | null; args: string[] | null } | null {
  const parsed = parseJsonObject(text);
  if ('error' in parsed) return null;
  const entry = (parsed.value.mcpServers as Record<string, unknown> | undefined)?.vouch as { command?: unknown; args?: unknown } | undefined;
  if (entry === undefined || entry === null || typeof entry !== 'object') return null;
  const args = Array.isArray(entry.args) && entry.args.every((word) => typeof word === 'string') ? (entry.args as string[]) : null;
  return { command: typeof entry.command === 'string' ? entry.command : null, args };
}

/** Puts the entry in: replaced where it stands when there is one, else appended to `mcpServers` (created when absent). */
export function addJsonServer(text: string, entry: McpServerEntry): string {
  if (text.trim() === '') return formatJson({ mcpServers: { vouch: entry } }, DEFAULT_JSON_STYLE);
  const { indent: unit, eol } = jsonStyleOf(text);
  const root = parseJsonTree(text);
  const serversAt = findProperty(root, 'mcpServers');
  const vouchAt = findProperty(serversAt?.property.value, 'vouch');
  if (vouchAt) {
    const value = vouchAt.property.value;
    return text.slice(0, value.start) + jsonAt(entry, lineIndent(text, vouchAt.property.start), unit, eol) + text.slice(value.end);
  }
  if (serversAt) return appendMember(text, serversAt.property.value, (indent) => `"vouch": ${jsonAt(entry, indent, unit, eol)}`, unit, eol);
  return appendMember(text, root, (indent) => `"mcpServers": ${jsonAt({ vouch: entry }, indent, unit, eol)}`, unit, eol);
}

/** Takes the entry out, and `mcpServers` with it when nothing else is in it. */
export function removeJsonServer(text: string): string {
  const root = parseJsonTree(text);
  const serversAt = findProperty(root, 'mcpServers');
  const servers = serversAt?.property.value;
  const vouchAt = findProperty(servers, 'vouch');
  if (!serversAt || !servers || servers.type !== 'object' || !vouchAt) return text;
  if (servers.properties.length > 1) return removeMember(text, servers, vouchAt.index);
  return removeMember(text, root, serversAt.index);
}

/** Nothing left but an empty object: a file setup created may then go. */
export function isEmptyJsonConfig(text: string): boolean {
  const parsed = parseJsonObject(text);
  return 'value' in parsed && Object.keys(parsed.value).length === 0;
}
