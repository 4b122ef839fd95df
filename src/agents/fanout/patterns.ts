/*
 * Name and directory patterns that workspace tools select packages by, read
 * only as far as their meaning is certain: `*` in a name, `*` and `**` as
 * whole directory segments. Anything else is left unread (null), and the
 * command that holds it is run as typed.
 */

export const GLOB_CHARACTERS = /[*?[\]{}()!+@,\\]/;

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
  const crossing = starRegExp(pattern, '.*').test(name);
  const segment = starRegExp(pattern, '[^/]*').test(name);
  if (star === 'crosses') return crossing;
  if (star === 'segment') return segment;
  return crossing === segment ? crossing : null;
}

export function starRegExp(pattern: string, star: string): RegExp {
  const escaped = pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'));
  return new RegExp(`^${escaped.join(star)}$`);
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
  if (segments.length === 0) return null;
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

export function globSegments(pattern: readonly string[], dir: string, leastForStars: number): boolean {
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
