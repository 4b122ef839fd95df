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
    const matches = picomatch(glob, { dot: true });
    // "." and ".." may be normalised away by picomatch, so they prove nothing.
    const literals = glob.split('/').filter((segment) => segment !== '' && segment !== '.' && segment !== '..' && !GLOB_CHARACTERS.test(segment));
    if (literals.length === 0) return matches;
    return (path: string) => literals.every((literal) => path.includes(literal)) && matches(path);
  });
  return matchers.length === 1 ? (matchers[0] as (path: string) => boolean) : (path) => matchers.some((matches) => matches(path));
}
