/**
 * JSON with source offsets, so vouch can change a settings file at exactly
 * the places it owns and leave every other byte as the user wrote it. Only
 * called on text JSON.parse has accepted, so it does not re-validate.
 */
export type JsonNode =
  | { type: 'object'; start: number; end: number; properties: JsonProperty[] }
  | { type: 'array'; start: number; end: number; elements: JsonNode[] }
  | { type: 'value'; start: number; end: number };

export interface JsonProperty {
  key: string;
  /** From the key's opening quote to the value's end. */
  start: number;
  end: number;
  value: JsonNode;
}

export function parseJsonTree(text: string): JsonNode {
  let at = 0;
  const skip = () => {
    while (at < text.length && /\s/.test(text[at] as string)) at += 1;
  };
  const string = (): number => {
    const start = at;
    at += 1;
    while (text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    at += 1;
    return start;
  };
  const value = (): JsonNode => {
    skip();
    const start = at;
    const char = text[at];
    if (char === '{') {
      at += 1;
      const properties: JsonProperty[] = [];
      skip();
      while (text[at] !== '}') {
        const keyStart = string();
        const key = JSON.parse(text.slice(keyStart, at)) as string;
        skip();
        at += 1; // the colon
        const node = value();
        properties.push({ key, start: keyStart, end: node.end, value: node });
        skip();
        if (text[at] === ',') at += 1;
        skip();
      }
      at += 1;
      return { type: 'object', start, end: at, properties };
    }
    if (char === '[') {
      at += 1;
      const elements: JsonNode[] = [];
      skip();
      while (text[at] !== ']') {
        elements.push(value());
        skip();
        if (text[at] === ',') at += 1;
        skip();
      }
      at += 1;
      return { type: 'array', start, end: at, elements };
    }
    if (char === '"') {
      string();
      return { type: 'value', start, end: at };
    }
    while (at < text.length && /[^\s,\]}]/.test(text[at] as string)) at += 1;
    return { type: 'value', start, end: at };
  };
  return value();
}

/** An object's member by key, with its index. */
export function findProperty(node: JsonNode | undefined, key: string): { index: number; property: JsonProperty } | null {
  if (!node || node.type !== 'object') return null;
  // JSON.parse keeps the last of duplicate keys, and so does this.
  for (let index = node.properties.length - 1; index >= 0; index -= 1) {
    const found = node.properties[index] as JsonProperty;
    if (found.key === key) return { index, property: found };
  }
  return null;
}

/** A container's members as spans: an object's properties or an array's elements. */
function members(node: JsonNode): Array<{ start: number; end: number }> {
  return node.type === 'object' ? node.properties : node.type === 'array' ? node.elements : [];
}

/** The whitespace that starts the line `offset` is on. */
export function lineIndent(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))?.[0] ?? '';
}

/**
 * Deletes one member. With a member before it, from that member's end (so
 * the comma and line break that appending added go too); else up to the
 * next member; else the container's whole inside. Appending then removing
 * gives back the original bytes.
 */
export function removeMember(text: string, container: JsonNode, index: number): string {
  const list = members(container);
  const member = list[index];
  if (!member) return text;
  const before = list[index - 1];
  const after = list[index + 1];
  if (before) return text.slice(0, before.end) + text.slice(member.end);
  if (after) return text.slice(0, member.start) + text.slice(after.start);
  return text.slice(0, container.start + 1) + text.slice(container.end - 1);
}

/** Appends a member (`"key": value` or an element), laid out like its siblings, or one level deeper than the container's line. */
export function appendMember(text: string, container: JsonNode, member: (indent: string) => string, unit: string, eol: string): string {
  const list = members(container);
  const last = list.at(-1);
  if (last) {
    const indent = lineIndent(text, last.start);
    return text.slice(0, last.end) + `,${eol}${indent}${member(indent)}` + text.slice(last.end);
  }
  const outer = lineIndent(text, container.start);
  const indent = outer + unit;
  return text.slice(0, container.start + 1) + `${eol}${indent}${member(indent)}${eol}${outer}` + text.slice(container.end - 1);
}

/** A value as JSON text whose continuation lines start at `indent`. */
export function jsonAt(value: unknown, indent: string, unit: string, eol: string): string {
  return JSON.stringify(value, null, unit).replace(/\n/g, eol + indent);
}
