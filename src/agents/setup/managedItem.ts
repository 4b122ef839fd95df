import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson } from '../../core/canonicalJson.js';
import { sha256 } from '../../core/digest.js';
import type { AgentHost, HostLayout } from './host.js';
import type { ItemKind, RecordedItem } from './record.js';
import { findVouchEntries, type HookEntry } from './hookEntries.js';
import { parseJsonObject } from './jsonText.js';
import { findSection, sectionContent } from './managedSection.js';
import { currentServerContent, serverContent, type McpServerEntry } from './mcpServer.js';
import { linkOnPath } from './linkOnPath.js';

export type ItemId = 'hooks' | 'instructions' | 'skill' | 'mcp';

/**
 * missing: none of vouch's content is there. intact: it is exactly what vouch
 * wrote (by the record; without one, exactly what setup writes now).
 * outdated: intact, but setup would now write something else. edited: it
 * differs from what vouch wrote. invalid: vouch cannot tell what is its own
 * (unparsable JSON, unpaired markers).
 */
export type ItemState = 'missing' | 'intact' | 'outdated' | 'edited' | 'invalid';

/** One managed item as it stands on disk, next to what setup would write. */
export interface InspectedItem {
  id: ItemId;
  kind: ItemKind;
  /** Root-relative, with `/`. */
  path: string;
  absolutePath: string;
  state: ItemState;
  /** Why it is edited or invalid, for people; null otherwise. */
  problem: string | null;
  /** The whole file's text, or null when there is no file. */
  fileText: string | null;
  /** vouch's content as it stands, or null when missing or invalid. */
  content: string | null;
  desired: string;
  recorded: RecordedItem | null;
}

export interface Desired {
  hooks: HookEntry[];
  section: string;
  skill: string;
  /** null when there is nothing to compare with (removal without a record or a config). */
  server: McpServerEntry | null;
}

const ITEMS: ReadonlyArray<{ id: ItemId; kind: ItemKind; path: (layout: HostLayout) => string }> = [
  { id: 'hooks', kind: 'hooks', path: (layout) => layout.hooksFile },
  { id: 'instructions', kind: 'section', path: (layout) => layout.instructionsFile },
  { id: 'skill', kind: 'file', path: (layout) => layout.skillFile },
  { id: 'mcp', kind: 'server', path: (layout) => layout.mcpFile },
];

export function hooksContent(entries: readonly HookEntry[]): string {
  return canonicalJson(entries);
}

export function inspectItems(layout: HostLayout, root: string, recorded: readonly RecordedItem[], desired: Desired): InspectedItem[] {
  return ITEMS.map(({ id, kind, path }) => {
    const rel = path(layout);
    const absolutePath = join(root, ...rel.split('/'));
    const record = recorded.find((item) => item.kind === kind && item.path === rel) ?? null;
    const want = kind === 'hooks' ? hooksContent(desired.hooks) : kind === 'section' ? desired.section : kind === 'server' ? serverContent(layout.host, desired.server) : desired.skill;
    const link = linkOnPath(root, rel);
    if (link !== null) {
      // Never read or written through: the link may lead outside the project.
      const problem = `it is reached through the symbolic link ${link}, and setup reads and writes only real files in the project`;
      return { id, kind, path: rel, absolutePath, fileText: null, desired: want, recorded: record, state: 'invalid', problem, content: null };
    }
    const fileText = existsSync(absolutePath) ? readFileSync(absolutePath, 'utf8') : null;
    const found = currentContent(kind, fileText, layout.host, layout.hooks.map((spec) => spec.event));
    const base = { id, kind, path: rel, absolutePath, fileText, desired: want, recorded: record };
    if ('problem' in found) return { ...base, state: 'invalid', problem: found.problem, content: null };
    return { ...base, ...stateOf(found.content, want, record), content: found.content };
  });
}

function stateOf(content: string | null, desired: string, record: RecordedItem | null): { state: ItemState; problem: string | null } {
  if (content === null) return { state: 'missing', problem: null };
  if (record !== null) {
    if (sha256(content) !== record.digest) return { state: 'edited', problem: 'it was changed since vouch wrote it' };
    return { state: content === desired ? 'intact' : 'outdated', problem: null };
  }
  // No record (another clone, or a deleted state dir): only what setup would write now is known to be vouch's.
  if (content === desired) return { state: 'intact', problem: null };
  return { state: 'edited', problem: 'there is no record that vouch wrote it, and it differs from what setup writes' };
}

function currentContent(kind: ItemKind, text: string | null, host: AgentHost, events: readonly string[]): { content: string | null } | { problem: string } {
  if (text === null) return { content: null };
  if (kind === 'file') return { content: text };
  if (kind === 'server') return currentServerContent(host, text);
  if (kind === 'section') {
    const section = findSection(text);
    if (section.kind === 'broken') return { problem: section.why };
    return { content: section.kind === 'one' ? sectionContent(section.text) : null };
  }
  const parsed = parseJsonObject(text);
  if ('error' in parsed) return { problem: `it is not valid JSON (${parsed.error})` };
  const hooks = parsed.value.hooks;
  if (hooks !== undefined && (hooks === null || typeof hooks !== 'object' || Array.isArray(hooks))) return { problem: '"hooks" is not an object' };
  for (const event of events) {
    const groups = (hooks as Record<string, unknown> | undefined)?.[event];
    if (groups !== undefined && !Array.isArray(groups)) return { problem: `"hooks.${event}" is not a list` };
  }
  const entries = findVouchEntries(parsed.value, host, events);
  return { content: entries.length === 0 ? null : hooksContent(entries) };
}
