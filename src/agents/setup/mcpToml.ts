import { appendSection, findSection, lineEndingOf, removeSection, replaceSection, sectionContent, withLineEnding, type SectionMarkers } from './managedSection.js';
import type { McpServerEntry, ServerContent } from './mcpServer.js';

/**
 * vouch's `[mcp_servers.vouch]` table in Codex's project `.codex/config.toml`.
 * vouch never rewrites the user's TOML (a parse and re-serialise would lose
 * their comments and layout): it appends one table between comment markers
 * and later replaces or removes exactly those lines. The file is read line by
 * line, because what matters here is layout a parser discards: whether
 * `mcp_servers` is an inline table, and which lines are vouch's. What it cannot rule out by reading lines (another
 * definition of the server, an `mcp_servers` that a table cannot extend) it
 * reports instead of writing, because a second definition makes the whole
 * file unreadable to Codex.
 */
export const TOML_MARKERS: SectionMarkers = { begin: '# vouch:begin', end: '# vouch:end' };

/** The table as setup writes it. JSON strings and arrays of strings are valid TOML basic strings and arrays. */
export function tomlBlock(entry: McpServerEntry): string {
  return [
    TOML_MARKERS.begin,
    '# Managed by "vouch agent setup codex"; "vouch agent remove codex" takes it out. Keep your own settings outside these lines.',
    '[mcp_servers.vouch]',
    `command = ${JSON.stringify(entry.command)}`,
    `args = [${entry.args.map((word) => JSON.stringify(word)).join(', ')}]`,
    TOML_MARKERS.end,
  ].join('\n');
}

/** vouch's block as it stands, or the other definition of `vouch` (which then differs from any block), or why vouch cannot tell. */
export function tomlServerContent(text: string): ServerContent {
  const section = findSection(text, TOML_MARKERS);
  if (section.kind === 'broken') return { problem: section.why };
  const block = section.kind === 'one' ? section : null;
  const scan = scanToml(text, block);
  if (scan.problem !== null) return { problem: scan.problem };
  if (block !== null) {
    if (scan.foreign !== null) return { problem: `mcp_servers.vouch is defined twice: in vouch's lines and at ${scan.foreign}` };
    const after = firstStatementAfter(text, block.end);
    // Keys after the block would be read as part of vouch's table.
    if (after !== null && !after.text.startsWith('[')) return { problem: `line ${after.line} ("${after.text}") follows "${TOML_MARKERS.end}", so TOML reads it as part of [mcp_servers.vouch]; move it above vouch's lines, or under a table header of its own` };
    return { content: sectionContent(block.text) };
  }
  return { content: scan.foreign === null ? null : `defined by you at ${scan.foreign}` };
}

/** command and args read back from vouch's own block (lines it wrote as JSON); null when there is no block. */
export function tomlServerEntry(text: string): { command: string | null; args: string[] | null } | null {
  const section = findSection(text, TOML_MARKERS);
  if (section.kind !== 'one') return null;
  const value = (key: string): unknown => {
    const line = new RegExp(`^${key} = (.*)$`, 'm').exec(section.text);
    try {
      return line ? JSON.parse(line[1] as string) : null;
    } catch {
      return null;
    }
  };
  const command = value('command');
  const args = value('args');
  return { command: typeof command === 'string' ? command : null, args: Array.isArray(args) && args.every((word) => typeof word === 'string') ? args : null };
}

/** In the file's line ending, as CLAUDE.md's section is (managedSection.ts). */
export function addTomlServer(text: string, entry: McpServerEntry): { text: string; separator: string | null } {
  const section = findSection(text, TOML_MARKERS);
  const eol = lineEndingOf(text);
  const block = withLineEnding(tomlBlock(entry), eol);
  if (section.kind === 'one') return { text: replaceSection(text, section, block), separator: null };
  return appendSection(text, block, eol);
}

export function removeTomlServer(text: string, separator: string): string {
  const section = findSection(text, TOML_MARKERS);
  return section.kind === 'one' ? removeSection(text, section, separator) : text;
}

interface Scan {
  /** Where another definition of mcp_servers.vouch is ("line N: ..."), or null. */
  foreign: string | null;
  /** Why a [mcp_servers.vouch] table cannot be added, or null. */
  problem: string | null;
}

/**
 * Reads table headers and keys line by line, outside vouch's block. A line
 * inside a multi-line string may look like a header; that errs towards
 * reporting a definition that is not there, never towards missing one.
 */
function scanToml(text: string, skip: { start: number; end: number } | null): Scan {
  let table: string[] = [];
  let offset = 0;
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const raw = lines[index] as string;
    const at = offset;
    offset += raw.length + 1;
    if (skip !== null && at >= skip.start && at <= skip.end) continue;
    const line = raw.trim();
    const where = `line ${index + 1}: ${line}`;
    if (line.startsWith('[')) {
      const array = line.startsWith('[[');
      const key = keyPath(line.slice(array ? 2 : 1));
      if (key === null || !key.rest.startsWith(array ? ']]' : ']')) continue;
      table = key.path;
      if (table[0] === 'mcp_servers' && table[1] === 'vouch') return { foreign: where, problem: null };
      if (array && table.length === 1 && table[0] === 'mcp_servers') return { foreign: null, problem: `${where} makes mcp_servers a list of tables, which a [mcp_servers.vouch] table cannot join` };
      continue;
    }
    const key = keyPath(line);
    if (key === null || !key.rest.startsWith('=')) continue;
    const full = [...table, ...key.path];
    if (full[0] !== 'mcp_servers') continue;
    if (full[1] === 'vouch') return { foreign: where, problem: null };
    if (full.length === 1) {
      if (/\bvouch\b/.test(key.rest)) return { foreign: where, problem: null };
      return { foreign: null, problem: `${where} sets mcp_servers as an inline table, which TOML does not let a [mcp_servers.vouch] table extend; add vouch to it by hand, or write it as [mcp_servers.NAME] tables` };
    }
  }
  return { foreign: null, problem: null };
}

/** A dotted TOML key (bare, "basic" or 'literal' parts) at the start of `text`, and what follows it. */
function keyPath(text: string): { path: string[]; rest: string } | null {
  const path: string[] = [];
  let at = 0;
  const skipSpace = () => {
    while (text[at] === ' ' || text[at] === '\t') at += 1;
  };
  for (;;) {
    skipSpace();
    const char = text[at];
    if (char === '"') {
      const end = /^"((?:[^"\\]|\\.)*)"/.exec(text.slice(at));
      if (!end) return null;
      let part: string;
      try {
        part = JSON.parse(end[0]) as string;
      } catch {
        part = end[1] as string;
      }
      path.push(part);
      at += end[0].length;
    } else if (char === "'") {
      const end = text.indexOf("'", at + 1);
      if (end < 0) return null;
      path.push(text.slice(at + 1, end));
      at = end + 1;
    } else {
      const bare = /^[A-Za-z0-9_-]+/.exec(text.slice(at));
      if (!bare) return null;
      path.push(bare[0]);
      at += bare[0].length;
    }
    skipSpace();
    if (text[at] !== '.') return { path, rest: text.slice(at) };
    at += 1;
  }
}

/** The first line after `offset` that is neither blank nor a comment. */
function firstStatementAfter(text: string, offset: number): { line: number; text: string } | null {
  const lineOf = (at: number) => text.slice(0, at).split('\n').length;
  const rest = text.slice(offset).split('\n');
  let at = offset;
  for (const [index, raw] of rest.entries()) {
    const line = raw.trim();
    // The first piece is the end marker's own line.
    if (index > 0 && line !== '' && !line.startsWith('#')) return { line: lineOf(at), text: line };
    at += raw.length + 1;
  }
  return null;
}
