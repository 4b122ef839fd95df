import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { AgentHost } from './host.js';
import { parseJsonObject } from './jsonText.js';
import { linkOnPath } from './linkOnPath.js';

export interface Conflict {
  code: 'agents-override' | 'rewrite-hook' | 'mcp-server';
  /** Absolute path of the file that holds it. */
  path: string;
  /** The other tool (`rtk`, `snip`, `tokf`), or null. */
  tool: string | null;
  message: string;
}

/**
 * Tools known to rewrite Bash commands from a PreToolUse hook: https://github.com/rtk-ai/rtk,
 * https://github.com/edouard-claude/snip, https://github.com/mpecan/tokf.
 */
const REWRITERS = ['rtk', 'snip', 'tokf'] as const;

/** Settings files the host merges hooks from, project and user level. Codex also reads `[hooks]` tables in its config.toml. */
export function hookSources(host: AgentHost, root: string, home: string | undefined): string[] {
  // The project's own files only where no link leads to them: a cloned repository's link is not read through.
  const project = (host === 'claude' ? ['.claude/settings.json', '.claude/settings.local.json'] : ['.codex/hooks.json', '.codex/config.toml'])
    .filter((rel) => linkOnPath(root, rel) === null)
    .map((rel) => join(root, ...rel.split('/')));
  if (!home) return project;
  const user = host === 'claude' ? [join(home, '.claude', 'settings.json')] : [join(home, '.codex', 'hooks.json'), join(home, '.codex', 'config.toml')];
  return [...project, ...user];
}

/** A hooks file as an object: JSON, or TOML for Codex's config.toml (same shape once parsed). Null when it does not parse. */
export function readSettings(path: string, text: string): Record<string, unknown> | null {
  if (path.endsWith('.toml')) {
    try {
      return parseToml(text) as Record<string, unknown>;
    } catch {
      // A config.toml Codex cannot read either holds no hooks that run.
      return null;
    }
  }
  const parsed = parseJsonObject(text);
  return 'error' in parsed ? null : parsed.value;
}

/** A matcher that selects the Bash tool, read as the hosts read it: empty or `*` is all, plain words are a list, anything else a regex. */
export function matchesBash(matcher: unknown): boolean {
  if (matcher === undefined || matcher === null || matcher === '' || matcher === '*') return true;
  if (typeof matcher !== 'string') return false;
  if (/^[A-Za-z0-9_ ,|-]+$/.test(matcher)) return matcher.split(/[|,]/).some((name) => name.trim() === 'Bash');
  try {
    return new RegExp(matcher).test('Bash');
  } catch {
    return false;
  }
}

export function findConflicts(host: AgentHost, root: string, home: string | undefined): Conflict[] {
  const conflicts: Conflict[] = [];
  if (host === 'codex') {
    const override = join(root, 'AGENTS.override.md');
    if (existsSync(override)) {
      conflicts.push({
        code: 'agents-override',
        path: override,
        tool: null,
        message: `${override} exists, and Codex reads it instead of AGENTS.md in the same directory, so it will not see vouch's section; copy the section into AGENTS.override.md, or remove that file`,
      });
    }
  }
  for (const path of hookSources(host, root, home)) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    const settings = readSettings(path, text);
    if (settings === null) continue;
    const hooks = settings.hooks as Record<string, unknown> | undefined;
    const groups = hooks && typeof hooks === 'object' ? hooks.PreToolUse : undefined;
    if (!Array.isArray(groups)) continue;
    for (const group of groups as Array<{ matcher?: unknown; hooks?: unknown }>) {
      if (!group || typeof group !== 'object' || !matchesBash(group.matcher) || !Array.isArray(group.hooks)) continue;
      for (const handler of group.hooks as Array<{ command?: unknown }>) {
        const command = typeof handler?.command === 'string' ? handler.command : '';
        const tool = REWRITERS.find((name) => new RegExp(`(^|[\\s/])${name}([\\s.-]|$)`).test(command));
        if (!tool) continue;
        conflicts.push({ code: 'rewrite-hook', path, tool, message: rewriteHookMessage(host, tool, path, command) });
      }
    }
  }
  return conflicts;
}

/** What the other rewriter costs differs by host: Claude Code takes vouch's rewrites, Codex only its denials. */
function rewriteHookMessage(host: AgentHost, tool: string, path: string, command: string): string {
  const found = `${tool} also rewrites Bash commands from a PreToolUse hook in ${path} ("${command}")`;
  if (host === 'claude') {
    return `${found}; when two hooks rewrite one command Claude Code may keep only one rewrite, so a stale check may run as typed, without a receipt. vouch's deny of a current check still wins. To keep vouch's rewrites, exclude the check commands from ${tool}`;
  }
  return `${found}; vouch's deny of a current check still wins, but a check command ${tool} rewrites runs through ${tool}, not "vouch run", and records no receipt. To record receipts, exclude the check commands from ${tool}`;
}
