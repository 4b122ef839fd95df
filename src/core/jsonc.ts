/*
 * JSON with comments and trailing commas, as turbo.json and nx.json allow
 * (https://turborepo.com/docs/reference/configuration). Pure.
 */

/** The value, or null when the text is not JSON once comments and trailing commas are taken out. */
export function parseJsonc(text: string): unknown {
  let out = '';
  let index = 0;
  const length = text.length;
  while (index < length) {
    const char = text[index]!;
    if (char === '"') {
      // A string, escapes included, copied as it is.
      let end = index + 1;
      while (end < length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (end >= length) return null;
      out += text.slice(index, end + 1);
      index = end + 1;
    } else if (char === '/' && text[index + 1] === '/') {
      while (index < length && text[index] !== '\n') index++;
    } else if (char === '/' && text[index + 1] === '*') {
      const end = text.indexOf('*/', index + 2);
      if (end === -1) return null;
      out += ' ';
      index = end + 2;
    } else if (char === ',') {
      // A comma followed only by blanks (and comments, already gone from `out` later) before } or ] is dropped.
      let next = index + 1;
      for (;;) {
        while (next < length && /\s/.test(text[next]!)) next++;
        if (text[next] === '/' && text[next + 1] === '/') {
          while (next < length && text[next] !== '\n') next++;
        } else if (text[next] === '/' && text[next + 1] === '*') {
          const end = text.indexOf('*/', next + 2);
          if (end === -1) return null;
          next = end + 2;
        } else {
          break;
        }
      }
      if (text[next] !== '}' && text[next] !== ']') out += ',';
      index++;
    } else {
      out += char;
      index++;
    }
  }
  try {
    return JSON.parse(out);
  } catch {
    return null;
  }
}
