import { canonicalJson } from '../../core/canonicalJson.js';
import type { HookMode } from '../../core/ledgerEntry.js';
import type { AgentHost, HookSpec } from './host.js';
import { appendMember, findProperty as property, jsonAt, lineIndent, parseJsonTree, removeMember, type JsonNode } from './jsonTree.js';
import { DEFAULT_JSON_STYLE, formatJson, jsonStyleOf } from './jsonText.js';

/** One handler vouch owns, where it sits: in `hooks[event]`, in the group with `matcher`. */
export interface HookEntry {
  event: string;
  matcher: string;
  handler: Record<string, unknown>;
}

type Group = { matcher?: unknown; hooks?: unknown } & Record<string, unknown>;

/** The command a hook handler runs: `PROGRAM hook HOST`, and `--shadow` in shadow mode (docs/hooks.md, "Shadow mode"). */
export function hookCommand(program: string, host: AgentHost, mode: HookMode): string {
  return `${program} hook ${host}${mode === 'shadow' ? ' --shadow' : ''}`;
}

/** The handlers setup writes: the schema's command form (type, command, timeout), which both hosts read. */
export function desiredHookEntries(host: AgentHost, specs: readonly HookSpec[], program: string, mode: HookMode = 'enforce'): HookEntry[] {
  return specs.map((spec) => ({
    event: spec.event,
    matcher: spec.matcher,
    handler: { type: 'command', command: hookCommand(program, host, mode), timeout: spec.timeout },
  }));
}

/** A handler that runs `vouch hook HOST [--shadow]`, by name or by path: how vouch's own entries are told from the user's. */
export function isVouchHandler(handler: unknown, host: AgentHost): boolean {
  if (handler === null || typeof handler !== 'object') return false;
  const command = (handler as { command?: unknown }).command;
  if (typeof command !== 'string') return false;
  return new RegExp(`(^|[\\s/'"])(vouch|main\\.js)'?\\s+hook\\s+${host}(\\s+--shadow)?\\s*$`).test(command.trim());
}

/** The mode vouch's PreToolUse handlers run in; null when there is none. Shadow wins when any is shadow: then some command is not enforced. */
export function hookModeOf(entries: readonly HookEntry[]): HookMode | null {
  const decisions = entries.filter((entry) => entry.event === 'PreToolUse');
  if (decisions.length === 0) return null;
  return decisions.some((entry) => /\s--shadow\s*$/.test(String(entry.handler.command))) ? 'shadow' : 'enforce';
}

/** vouch's handlers as they stand in a settings object, in the order of `events`. */
export function findVouchEntries(settings: Record<string, unknown>, host: AgentHost, events: readonly string[]): HookEntry[] {
  const found: HookEntry[] = [];
  const hooks = settings.hooks;
  if (hooks === null || typeof hooks !== 'object' || Array.isArray(hooks)) return found;
  for (const event of events) {
    const groups = (hooks as Record<string, unknown>)[event];
    if (!Array.isArray(groups)) continue;
    for (const group of groups as Group[]) {
      if (group === null || typeof group !== 'object' || !Array.isArray(group.hooks)) continue;
      for (const handler of group.hooks) {
        if (isVouchHandler(handler, host)) found.push({ event, matcher: typeof group.matcher === 'string' ? group.matcher : '', handler: handler as Record<string, unknown> });
      }
    }
  }
  return found;
}

/** Where one vouch handler sits in the text, with every container around it. */
interface Site {
  root: JsonNode;
  hooksIndex: number;
  hooks: JsonNode;
  eventIndex: number;
  groups: JsonNode;
  groupIndex: number;
  handlers: JsonNode;
  handlerIndex: number;
  handler: JsonNode;
  matcher: unknown;
}

function sites(text: string, host: AgentHost, event: string): Site[] {
  const root = parseJsonTree(text);
  const hooksAt = property(root, 'hooks');
  const eventAt = property(hooksAt?.property.value, event);
  const groups = eventAt?.property.value;
  if (!hooksAt || !eventAt || !groups || groups.type !== 'array') return [];
  const found: Site[] = [];
  groups.elements.forEach((group, groupIndex) => {
    const handlers = property(group, 'hooks')?.property.value;
    if (!handlers || handlers.type !== 'array') return;
    const matcherNode = property(group, 'matcher')?.property.value;
    const matcher = matcherNode ? JSON.parse(text.slice(matcherNode.start, matcherNode.end)) : undefined;
    handlers.elements.forEach((handler, handlerIndex) => {
      if (!isVouchHandler(JSON.parse(text.slice(handler.start, handler.end)), host)) return;
      found.push({ root, hooksIndex: hooksAt.index, hooks: hooksAt.property.value, eventIndex: eventAt.index, groups, groupIndex, handlers, handlerIndex, handler, matcher });
    });
  });
  return found;
}

/** Removes one handler, and each container that only held it, up to the "hooks" key itself. */
function removeSite(text: string, site: Site): string {
  if (site.handlers.type === 'array' && site.handlers.elements.length > 1) return removeMember(text, site.handlers, site.handlerIndex);
  if (site.groups.type === 'array' && site.groups.elements.length > 1) return removeMember(text, site.groups, site.groupIndex);
  if (site.hooks.type === 'object' && site.hooks.properties.length > 1) return removeMember(text, site.hooks, site.eventIndex);
  return removeMember(text, site.root, site.hooksIndex);
}

/** Takes every vouch handler of these events out of a settings file's text; all other bytes stay. */
export function removeVouchHooks(text: string, host: AgentHost, events: readonly string[]): string {
  let next = text;
  for (const event of events) {
    for (let site = sites(next, host, event)[0]; site; site = sites(next, host, event)[0]) next = removeSite(next, site);
  }
  return next;
}

/**
 * Puts the desired handlers in. A vouch handler already under the same event
 * and matcher is replaced where it stands (an upgrade keeps its place);
 * otherwise vouch appends a group of its own, never mixing into the user's.
 * Other vouch handlers of the event go, so each runs exactly once.
 */
export function addVouchHooks(text: string, host: AgentHost, desired: readonly HookEntry[]): string {
  if (text.trim() === '') {
    const hooks: Record<string, unknown[]> = {};
    for (const entry of desired) (hooks[entry.event] ??= []).push({ matcher: entry.matcher, hooks: [entry.handler] });
    return formatJson({ hooks }, DEFAULT_JSON_STYLE);
  }
  const { indent: unit, eol } = jsonStyleOf(text);
  let next = text;
  for (const entry of desired) {
    const keep = sites(next, host, entry.event).find((site) => site.matcher === entry.matcher);
    if (keep) {
      const current = JSON.parse(next.slice(keep.handler.start, keep.handler.end));
      if (canonicalJson(current) !== canonicalJson(entry.handler)) {
        next = next.slice(0, keep.handler.start) + jsonAt(entry.handler, lineIndent(next, keep.handler.start), unit, eol) + next.slice(keep.handler.end);
      }
      // Extras: every vouch handler of this event but the first under the right matcher.
      for (;;) {
        const all = sites(next, host, entry.event);
        const first = all.findIndex((site) => site.matcher === entry.matcher);
        const extra = all.find((_, index) => index !== first);
        if (!extra) break;
        next = removeSite(next, extra);
      }
      continue;
    }
    next = removeVouchHooks(next, host, [entry.event]);
    const group = { matcher: entry.matcher, hooks: [entry.handler] };
    const root = parseJsonTree(next);
    const hooksAt = property(root, 'hooks');
    const eventAt = property(hooksAt?.property.value, entry.event);
    if (!hooksAt) next = appendMember(next, root, (indent) => `"hooks": ${jsonAt({ [entry.event]: [group] }, indent, unit, eol)}`, unit, eol);
    else if (!eventAt) next = appendMember(next, hooksAt.property.value, (indent) => `${JSON.stringify(entry.event)}: ${jsonAt([group], indent, unit, eol)}`, unit, eol);
    else next = appendMember(next, eventAt.property.value, (indent) => jsonAt(group, indent, unit, eol), unit, eol);
  }
  return next;
}
