import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sha256 } from '../../core/digest.js';
import type { AgentHost } from './host.js';
import type { RecordedItem } from './record.js';
import { addVouchHooks, removeVouchHooks, type HookEntry } from './hookEntries.js';
import { parseJsonObject } from './jsonText.js';
import type { InspectedItem, ItemId, ItemState } from './managedItem.js';
import { appendSection, findSection, lineEndingOf, removeSection, replaceSection, withLineEnding } from './managedSection.js';
import { addServer, isEmptyServerConfig, removeServer, type McpServerEntry } from './mcpServer.js';

export type ItemAction = 'create' | 'update' | 'unchanged' | 'refused' | 'skipped' | 'remove' | 'none';

export interface ItemPlan {
  id: ItemId;
  kind: InspectedItem['kind'];
  path: string;
  state: ItemState;
  action: ItemAction;
  /** For people: what happens, and for a refusal why and what to do. */
  message: string;
}

/** One file's bytes before and after; null is no file. */
export interface FileChange {
  path: string;
  absolutePath: string;
  before: string | null;
  after: string | null;
  /** Directories setup creates for it (absolute), outermost first; removal deletes recorded ones when empty. */
  createDirs: string[];
  removeDirs: string[];
}

export interface ChangePlan {
  items: ItemPlan[];
  changes: FileChange[];
  /** The record once the plan is applied; empty means delete it. */
  record: RecordedItem[];
}

/** How messages name an item's content. */
function itemName(item: InspectedItem, owned: boolean): string {
  switch (item.kind) {
    case 'hooks':
      return owned ? `vouch's hook entries in ${item.path}` : `hooks in ${item.path}`;
    case 'section':
      return owned ? `vouch's section of ${item.path}` : `section in ${item.path}`;
    case 'server':
      return `MCP server "vouch" in ${item.path}`;
    default:
      return item.path;
  }
}

function refusal(item: InspectedItem, verb: 'update' | 'remove'): string {
  const what = itemName(item, true);
  if (item.state === 'invalid') return `${what}: left as is, because ${item.problem}; fix the file, then run this again`;
  const left = `${what}: not ${verb === 'update' ? 'updated' : 'removed'}, because ${item.problem}`;
  if (verb === 'remove') {
    const yourself =
      item.kind === 'section'
        ? 'delete the lines from vouch:begin to vouch:end yourself'
        : item.kind === 'hooks'
          ? 'delete the vouch hook entries yourself'
          : item.kind === 'server'
            ? 'delete the "vouch" server entry yourself'
            : 'delete the file yourself';
    return `${left}; to remove it, ${yourself}`;
  }
  const fix =
    item.kind === 'section'
      ? 'move your text outside the vouch:begin/vouch:end markers, or delete the section'
      : item.kind === 'hooks'
        ? 'delete the vouch hook entries'
        : item.kind === 'server'
          ? 'delete or rename that "vouch" server entry'
          : 'move your changes elsewhere, or delete the file';
  return `${left}; to let setup write it again, ${fix}, then run setup again`;
}

/** Directories from the root down to the file's folder that do not exist yet. */
function missingDirs(root: string, absolutePath: string): string[] {
  const dirs: string[] = [];
  for (let dir = dirname(absolutePath); dir.length > root.length && !existsSync(dir); dir = dirname(dir)) dirs.unshift(dir);
  return dirs;
}

export interface SetupContent {
  hooks: readonly HookEntry[];
  server: McpServerEntry;
}

/** `leaveOut`: items the user declined (`--no-mcp`); they are neither written nor forgotten. */
export function planSetup(host: AgentHost, root: string, items: readonly InspectedItem[], content: SetupContent, leaveOut: ReadonlySet<ItemId> = new Set()): ChangePlan {
  const plans: ItemPlan[] = [];
  const changes: FileChange[] = [];
  const record: RecordedItem[] = [];
  for (const item of items) {
    if (leaveOut.has(item.id)) {
      plans.push({ id: item.id, kind: item.kind, path: item.path, state: item.state, action: 'skipped', message: `${itemName(item, false)}: left out (--no-mcp); anything of vouch's already there stays` });
      // A previous setup's entry stays vouch's, so that remove still takes it out.
      if (item.recorded) record.push(item.recorded);
      continue;
    }
    if (item.state === 'edited' || item.state === 'invalid') {
      plans.push({ id: item.id, kind: item.kind, path: item.path, state: item.state, action: 'refused', message: refusal(item, 'update') });
      if (item.recorded) record.push(item.recorded);
      continue;
    }
    const unchanged = item.state === 'intact';
    const createDirs = item.fileText === null ? missingDirs(root, item.absolutePath) : [];
    let after = item.fileText;
    // Content that is missing is written afresh: what the old record said about how it was placed no longer holds.
    const previous = item.state === 'missing' ? null : item.recorded;
    let separator = previous?.separator ?? '';
    if (!unchanged) {
      if (item.kind === 'file') after = item.desired;
      else if (item.kind === 'hooks') {
        after = addVouchHooks(item.fileText ?? '', host, content.hooks);
      } else if (item.kind === 'server') {
        const added = addServer(host, item.fileText ?? '', content.server);
        after = added.text;
        if (added.separator !== null) separator = added.separator;
      } else {
        const text = item.fileText ?? '';
        const section = findSection(text);
        const eol = lineEndingOf(text);
        const desired = withLineEnding(item.desired, eol);
        if (section.kind === 'one') after = replaceSection(text, section, desired);
        else {
          const appended = appendSection(text, desired, eol);
          after = appended.text;
          separator = appended.separator;
        }
      }
      changes.push({ path: item.path, absolutePath: item.absolutePath, before: item.fileText, after, createDirs, removeDirs: [] });
    }
    const action: ItemAction = item.state === 'missing' ? 'create' : item.state === 'outdated' ? 'update' : 'unchanged';
    plans.push({ id: item.id, kind: item.kind, path: item.path, state: item.state, action, message: setupMessage(item, action) });
    record.push({
      kind: item.kind,
      path: item.path,
      digest: sha256(item.desired),
      createdFile: previous?.createdFile ?? item.fileText === null,
      createdDirs: previous?.createdDirs ?? createDirs.map((dir) => relativeTo(root, dir)),
      separator,
    });
  }
  return { items: plans, changes, record };
}

function setupMessage(item: InspectedItem, action: ItemAction): string {
  const what = itemName(item, false);
  switch (action) {
    case 'create':
      return `${what}: added`;
    case 'update':
      return `${what}: updated in place (it was intact, and this config or vouch changed)`;
    default:
      return `${what}: already up to date`;
  }
}

export function planRemove(host: AgentHost, root: string, items: readonly InspectedItem[]): ChangePlan {
  const plans: ItemPlan[] = [];
  const changes: FileChange[] = [];
  const record: RecordedItem[] = [];
  for (const item of items) {
    if (item.state === 'edited' || item.state === 'invalid') {
      plans.push({ id: item.id, kind: item.kind, path: item.path, state: item.state, action: 'refused', message: refusal(item, 'remove') });
      if (item.recorded) record.push(item.recorded);
      continue;
    }
    if (item.state === 'missing' || item.fileText === null) {
      plans.push({ id: item.id, kind: item.kind, path: item.path, state: item.state, action: 'none', message: `${item.path}: nothing of vouch's to remove` });
      continue;
    }
    const created = item.recorded?.createdFile ?? false;
    let after: string | null;
    if (item.kind === 'file') after = null;
    else if (item.kind === 'hooks') {
      const events = [...new Set((JSON.parse(item.content ?? '[]') as HookEntry[]).map((entry) => entry.event))];
      const rest = removeVouchHooks(item.fileText, host, events);
      const left = parseJsonObject(rest);
      after = created && 'value' in left && Object.keys(left.value).length === 0 ? null : rest;
    } else if (item.kind === 'server') {
      const rest = removeServer(host, item.fileText, item.recorded?.separator ?? '');
      after = created && isEmptyServerConfig(host, rest) ? null : rest;
    } else {
      const section = findSection(item.fileText);
      if (section.kind !== 'one') throw new Error('unreachable: a present section is found');
      after = removeSection(item.fileText, section, item.recorded?.separator ?? '');
      if (created && after.trim() === '') after = null;
    }
    const removeDirs = after === null ? (item.recorded?.createdDirs ?? []).map((dir) => join(root, ...dir.split('/'))).reverse() : [];
    changes.push({ path: item.path, absolutePath: item.absolutePath, before: item.fileText, after, createDirs: [], removeDirs });
    plans.push({ id: item.id, kind: item.kind, path: item.path, state: item.state, action: 'remove', message: `${item.path}: ${after === null ? 'deleted (vouch created it)' : "vouch's content removed, the rest kept"}` });
  }
  return { items: plans, changes, record };
}

function relativeTo(root: string, dir: string): string {
  return dir.slice(root.length + 1).split(/[\\/]/).join('/');
}
