import picomatch from 'picomatch';

const GLOB_CHARACTERS = /[*?[\]{}()!+@\\]/;

/**
 * picomatch over several globs, with a guard: a path can only match a glob if
 * it holds each of the glob's literal segments, and most paths hold none of
 * them ("node_modules" in the tool-cache exclusions), so most never reach the
 * glob at all. The guard only ever says no where picomatch would.
 */
export function globMatcher(globs: readonly string[]): (path: string) => boolean {
  if (globs.length === 0) return () => false;
  const matchers = globs.map((glob) => {
    const matches = compileGlob(glob);
    const literals = literalSegments(glob);
    if (literals.length === 0) return matches;
    return (path: string) => literals.every((literal) => path.includes(literal)) && matches(path);
  });
  return matchers.length === 1 ? (matchers[0] as (path: string) => boolean) : (path) => matchers.some((matches) => matches(path));
}

/**
 * picomatch throws on an empty glob ("!" with its "!" taken off) and on one
 * longer than 65,536 characters. The config refuses both, but globs also come
 * from package.json workspaces and over the observer's socket, and a throw
 * there would crash every command. Such a glob matches nothing: as an input it
 * adds no file, and as an exclusion it takes none away, so no answer rests on it.
 */
export function compileGlob(glob: string): (path: string) => boolean {
  try {
    return picomatch(glob, { dot: true });
  } catch {
    return () => false;
  }
}

/** The segments of a glob that a matching path must hold as they are. */
export function literalSegments(glob: string): string[] {
  // "." and ".." may be normalised away by picomatch, so they prove nothing.
  return glob.split('/').filter((segment) => segment !== '' && segment !== '.' && segment !== '..' && !GLOB_CHARACTERS.test(segment));
}

/**
 * True when no path in `text` (all the paths, joined, or more) can match any of the globs: each
 * glob has a literal segment that appears nowhere in it. One search of the text spares a test
 * per path, for the tool-cache exclusions in a listing that holds no node_modules.
 */
export function noneCanMatch(globs: readonly string[], text: string): boolean {
  return globs.every((glob) => literalSegments(glob).some((literal) => !text.includes(literal)));
}
