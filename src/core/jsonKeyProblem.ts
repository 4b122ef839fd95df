/**
 * JSON.parse keeps the last of two equal keys in an object and says nothing
 * (RFC 8259 §4: names SHOULD be unique, and where they are not, behaviour is
 * unpredictable; https://www.rfc-editor.org/rfc/rfc8259#section-4),
 * so a config could show a reviewer one "inputs" and run with another. This
 * walks text that JSON.parse has already accepted and finds the first key
 * that repeats within one object, compared after unescaping, as JSON.parse
 * compares them ("a" and "\u0061" are the same key).
 */

export type KeyProblem = { kind: 'duplicate'; path: string; key: string } | { kind: 'too-deep'; path: string };

/**
 * The first repeated key, with its JSON path (e.g. `$.checks[0].inputs`), or the first value nested
 * deeper than `maxDepth` (the walk recurses, and V8's JSON.parse does not, so depth is bounded
 * here before it could exhaust the stack); null when neither occurs.
 */
export function jsonKeyProblem(text: string, maxDepth: number): KeyProblem | null {
  let at = 0;
  const fail = (): never => {
    // Only valid JSON reaches here; anything else is a bug in this walk, not in the config.
    throw new Error(`unexpected JSON at offset ${at}`);
  };
  const skipSpace = () => {
    while (at < text.length) {
      const c = text.charCodeAt(at);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) at++;
      else break;
    }
  };
  const readString = (): string => {
    if (text[at] !== '"') fail();
    const start = at;
    at++;
    let escaped = false;
    for (; at < text.length; at++) {
      const c = text[at];
      if (c === '\\') {
        escaped = true;
        at++;
      } else if (c === '"') break;
    }
    if (at >= text.length) fail();
    at++;
    const raw = text.slice(start, at);
    // JSON.parse decodes the escapes exactly as the config's own parse did.
    return escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  };
  const visit = (path: string, depth: number): KeyProblem | null => {
    skipSpace();
    const c = text[at];
    if ((c === '{' || c === '[') && depth >= maxDepth) return { kind: 'too-deep', path };
    if (c === '{') {
      at++;
      const keys = new Set<string>();
      skipSpace();
      if (text[at] === '}') {
        at++;
        return null;
      }
      for (;;) {
        skipSpace();
        const key = readString();
        const member = `${path}${/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`;
        if (keys.has(key)) return { kind: 'duplicate', path: member, key };
        keys.add(key);
        skipSpace();
        if (text[at] !== ':') fail();
        at++;
        const found = visit(member, depth + 1);
        if (found) return found;
        skipSpace();
        if (text[at] === ',') at++;
        else if (text[at] === '}') {
          at++;
          return null;
        } else fail();
      }
    }
    if (c === '[') {
      at++;
      skipSpace();
      if (text[at] === ']') {
        at++;
        return null;
      }
      for (let index = 0; ; index++) {
        const found = visit(`${path}[${index}]`, depth + 1);
        if (found) return found;
        skipSpace();
        if (text[at] === ',') at++;
        else if (text[at] === ']') {
          at++;
          return null;
        } else fail();
      }
    }
    if (c === '"') {
      readString();
      return null;
    }
    // A number, true, false or null: up to the next delimiter.
    while (at < text.length && !',]} \n\r\t'.includes(text[at]!)) at++;
    return null;
  };
  return visit('$', 0);
}
