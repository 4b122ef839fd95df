/*
 * Name and directory patterns that workspace tools select packages by, read
 * only as far as their meaning is certain: `*` in a name, `*` and `**` as
 * whole directory segments. Anything else is left unread (null), and the
 * command that holds it is run as typed.
 */

const GLOB_CHARACTERS = /[*?[\]{}()!+@,\\]/;

/** How a tool's `*` treats "/" in a package name ("@scope/a"). */
export type StarSemantics = 'crosses' | 'segment' | 'unknown';

/**
 * Whether `name` matches `pattern` whose only wildcard is `*`; null when the
 * pattern holds another glob character, or when the answer depends on
 * whether `*` crosses "/" and the tool's rule is not known.
 */
export function nameMatches(pattern: string, name: string, star: StarSemantics): boolean | null {
  // A leading "@" is a scope, not an extglob, unless "(" follows it.
  const rest = pattern.replace(/^@(?!\()/, '');
  if (/[?[\]{}()!+@,\\]/.test(rest)) return null;
  if (!pattern.includes('*')) return pattern === name;
  if (pattern.length > MAX_PATTERN) return null;
  if (star === 'crosses') return starMatch(pattern, name, true);
  if (star === 'segment') return starMatch(pattern, name, false);
  const crossing = starMatch(pattern, name, true);
  return crossing === starMatch(pattern, name, false) ? crossing : null;
}

/** A typed pattern longer than this is not read: matching stays cheap whatever the command holds. */
const MAX_PATTERN = 128;

/**
 * Whether `text` matches `pattern`, where `*` stands for any run of
 * characters (without "/" unless `crossSlash`) and every other character for
 * itself. Dynamic programming over both strings, so no pattern can make it
 * slow, as a backtracking regular expression could be made.
 */
function starMatch(pattern: string, text: string, crossSlash: boolean): boolean {
  // reachable[j]: the pattern read so far can match text[0, j).
  let reachable = new Uint8Array(text.length + 1);
  let next = new Uint8Array(text.length + 1);
  reachable[0] = 1;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    next.fill(0);
    let any = false;
    if (char === '*') {
      for (let j = 0; j <= text.length; j++) {
        if (reachable[j] === 1 || (j > 0 && next[j - 1] === 1 && (crossSlash || text[j - 1] !== '/'))) {
          next[j] = 1;
          any = true;
        }
      }
    } else {
      for (let j = 1; j <= text.length; j++) {
        if (reachable[j - 1] === 1 && text[j - 1] === char) {
          next[j] = 1;
          any = true;
        }
      }
    }
    if (!any) return false;
    [reachable, next] = [next, reachable];
  }
  return reachable[text.length] === 1;
}

/**
 * A root-relative directory pattern from a selector such as `./packages/*`:
 * "./" and a trailing "/" taken off, "/"-separated. Null for a pattern that
 * leaves the root (`..`, an absolute path), is empty or names the root
 * itself, or holds a glob character other than `*` or `**` as a whole segment.
 */
export function dirPattern(raw: string): string[] | null {
  if (raw.startsWith('/') || raw.includes('\\')) return null;
  const segments = raw.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.length === 0 || segments.length > 32 || segments.filter((segment) => segment === '**').length > 4) return null;
  for (const segment of segments) {
    if (segment === '..') return null;
    if (segment === '*' || segment === '**') continue;
    if (GLOB_CHARACTERS.test(segment)) return null;
  }
  return segments;
}

/**
 * Whether a root-relative directory matches a pattern from dirPattern: `*`
 * one segment, `**` any number. Null when the answer depends on whether `**`
 * may match no segment at all (`packages/**` against `packages`), which
 * glob libraries answer differently.
 */
export function dirMatches(pattern: readonly string[], dir: string): boolean | null {
  const some = globSegments(pattern, dir, 0);
  const none = globSegments(pattern, dir, 1);
  return some === none ? some : null;
}

function globSegments(pattern: readonly string[], dir: string, leastForStars: number): boolean {
  const parts = dir.split('/');
  const match = (p: number, d: number): boolean => {
    if (p === pattern.length) return d === parts.length;
    const segment = pattern[p]!;
    if (segment === '**') {
      for (let next = d + leastForStars; next <= parts.length; next++) if (match(p + 1, next)) return true;
      return false;
    }
    if (d === parts.length) return false;
    if (segment !== '*' && segment !== parts[d]) return false;
    return match(p + 1, d + 1);
  };
  return match(0, 0);
}

/** A plain word: no glob character, so tools that glob-match it match it literally. */
export function isPlain(value: string): boolean {
  return value !== '' && !GLOB_CHARACTERS.test(value.replace(/^@(?!\()/, ''));
}
