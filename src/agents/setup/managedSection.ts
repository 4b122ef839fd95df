/**
 * The part of a shared Markdown file (CLAUDE.md, AGENTS.md) that vouch owns:
 * everything from the begin marker's line to the end marker's line. Text
 * outside it is the user's and is never changed.
 */
export const SECTION_BEGIN = '<!-- vouch:begin -->';
export const SECTION_END = '<!-- vouch:end -->';

/** The lines that open and close a managed section, in the comment syntax of its file. */
export interface SectionMarkers {
  begin: string;
  end: string;
}

export const MARKDOWN_MARKERS: SectionMarkers = { begin: SECTION_BEGIN, end: SECTION_END };

export type SectionSearch =
  | { kind: 'none' }
  | { kind: 'one'; start: number; end: number; text: string }
  /** Two begin markers, or a begin without an end: vouch cannot tell which text is its own. */
  | { kind: 'broken'; why: string };

export function findSection(text: string, markers: SectionMarkers = MARKDOWN_MARKERS): SectionSearch {
  const begin = markerLines(text, markers.begin);
  const end = markerLines(text, markers.end);
  if (begin.length === 0 && end.length === 0) return { kind: 'none' };
  if (begin.length !== 1 || end.length !== 1) return { kind: 'broken', why: `${begin.length} "${markers.begin}" and ${end.length} "${markers.end}" lines, where one of each is expected` };
  const start = begin[0] as number;
  const endLine = end[0] as number;
  if (endLine < start) return { kind: 'broken', why: `"${markers.end}" comes before "${markers.begin}"` };
  const stop = endLine + markers.end.length;
  return { kind: 'one', start, end: stop, text: text.slice(start, stop) };
}

/** Offsets of lines that are exactly the marker (trailing spaces or a CR allowed). */
function markerLines(text: string, marker: string): number[] {
  const found: number[] = [];
  let from = 0;
  for (;;) {
    const at = text.indexOf(marker, from);
    if (at < 0) return found;
    const lineStart = at === 0 || text[at - 1] === '\n';
    const rest = text.slice(at + marker.length, text.indexOf('\n', at) < 0 ? undefined : text.indexOf('\n', at));
    if (lineStart && /^[ \t\r]*$/.test(rest)) found.push(at);
    from = at + marker.length;
  }
}

/** Replaces the section in place. */
export function replaceSection(text: string, at: { start: number; end: number }, section: string): string {
  return text.slice(0, at.start) + section + text.slice(at.end);
}

/**
 * The file's line ending, as its first line ends: CRLF or LF. A file written
 * on Windows (or with git's `core.autocrlf`) keeps CRLF when vouch writes its
 * section into it, so that the rest of the file and its diff stay as they were.
 */
export function lineEndingOf(text: string): '\n' | '\r\n' {
  const at = text.indexOf('\n');
  return at > 0 && text[at - 1] === '\r' ? '\r\n' : '\n';
}

/** A section (written with LF) in the given line ending. */
export function withLineEnding(section: string, eol: '\n' | '\r\n'): string {
  return eol === '\n' ? section : section.replace(/\r?\n/g, eol);
}

/** A section as found in a file, in LF: what is compared with what setup writes, whatever the file's line ending. */
export function sectionContent(text: string): string {
  return text.replace(/\r\n/g, '\n');
}

/**
 * Appends the section after a blank line, in the file's line ending `eol`.
 * Returns the separator it put before it, which is recorded so that removal
 * restores the file's bytes.
 */
export function appendSection(text: string, section: string, eol: '\n' | '\r\n' = '\n'): { text: string; separator: string } {
  const separator = text.length === 0 ? '' : text.endsWith(eol + eol) ? '' : text.endsWith(eol) ? eol : eol + eol;
  return { text: `${text}${separator}${section}${eol}`, separator };
}

/**
 * Takes the section out with its own line end. When it is the file's tail and
 * the recorded separator precedes it, the separator goes too.
 */
export function removeSection(text: string, at: { start: number; end: number }, separator: string): string {
  let end = at.end;
  if (text.startsWith('\r\n', end)) end += 2;
  else if (text[end] === '\n') end += 1;
  let start = at.start;
  if (end === text.length && separator.length > 0 && text.slice(0, start).endsWith(separator)) start -= separator.length;
  return text.slice(0, start) + text.slice(end);
}
