/**
 * How a JSON file is laid out, so a file vouch edits is written back in its
 * own indentation and line endings: a user's settings that round-trip keep
 * every byte outside what vouch adds.
 */
export interface JsonStyle {
  indent: string;
  eol: '\n' | '\r\n';
  finalNewline: boolean;
}

export const DEFAULT_JSON_STYLE: JsonStyle = { indent: '  ', eol: '\n', finalNewline: true };

export function jsonStyleOf(text: string): JsonStyle {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const indented = /\n([ \t]+)\S/.exec(text);
  return { indent: indented?.[1] ?? DEFAULT_JSON_STYLE.indent, eol, finalNewline: text.length === 0 || text.endsWith('\n') };
}

export function formatJson(value: unknown, style: JsonStyle): string {
  const body = JSON.stringify(value, null, style.indent).replace(/\n/g, style.eol);
  return style.finalNewline ? body + style.eol : body;
}

/** A plain object, or a reason it is not one: settings files must hold an object. */
export function parseJsonObject(text: string): { value: Record<string, unknown> } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: (error as Error).message };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { error: 'the top level is not a JSON object' };
  return { value: value as Record<string, unknown> };
}
