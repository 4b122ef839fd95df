import { CONFIG_LIMITS } from './configLimits.js';

/**
 * Globs are matched against root-relative, "/"-separated, normalised paths
 * (docs/config.md, "Inputs"). A glob that is absolute, climbs out with "..",
 * or is written in another system's syntax matches none of them, and a
 * receipt over zero inputs would stay CURRENT through every edit. These rules
 * refuse such globs when the config is loaded. `reserved` are the root-relative
 * directories vouch never lists as inputs (".git", the state dir).
 *
 * Returns why the glob can never match, with the fix, or null.
 */
export function globProblem(glob: string, reserved: readonly string[]): string | null {
  const shown = JSON.stringify(glob);
  const negated = glob.startsWith('!');
  const body = negated ? glob.slice(1) : glob;
  if (glob.length > CONFIG_LIMITS.globLength) return `at most ${CONFIG_LIMITS.globLength} characters in a glob, not ${glob.length}; no path is that long`;
  if (body.includes('\0')) return `${shown} holds a NUL character, which no path can; remove it`;
  if (negated && body === '') return `"!" alone excludes nothing: write the glob to exclude after it, e.g. "!docs/**"`;
  if (body.includes('\\')) {
    return `${shown} holds a backslash, which in a glob escapes the next character and never separates directories; write "/" between directories, and "[*]" to match a special character as itself`;
  }
  if (/^[A-Za-z]:/.test(body)) return `${shown} names a drive; globs are relative to the root: write the path from the root, e.g. "src/**"`;
  if (body.startsWith('/')) {
    const relative = body.replace(/^\/+/, '');
    return `${shown} is absolute, but globs are relative to the root, so it matches nothing; write ${JSON.stringify((negated ? '!' : '') + (relative || '**'))}, or move "root" (or pass --root) so the files are inside it`;
  }
  if (body.startsWith('~')) return `${shown} starts with "~", which is not expanded: globs are relative to the root; write the path from the root`;
  const path = body.replace(/^(\.\/)+/, '');
  if (path === '') return `${shown} names the root itself, which is not a file; write "**" for every file`;
  const segments = path.split('/');
  if (segments.includes('..')) {
    return `${shown} has a ".." segment, but paths are matched relative to the root and never hold one, so it matches nothing; files outside the root cannot be inputs: write the glob from the root without "..", or move "root" (or pass --root) so the files are inside it`;
  }
  if (segments.at(-1) === '') return `${shown} ends in "/", but inputs are files, never directories; write ${JSON.stringify(glob.replace(/\/+$/, '/**'))}`;
  if (segments.some((segment) => segment === '' || segment === '.')) {
    return `${shown} has an empty or "." segment, which no normalised path holds; write ${JSON.stringify((negated ? '!' : '') + segments.filter((s) => s !== '' && s !== '.').join('/'))}`;
  }
  if (!negated) {
    for (const dir of reserved) {
      const parts = dir.split('/');
      if (parts.every((part, index) => segments[index] === part) && segments.length >= parts.length) {
        return `${shown} names ${dir === '.git' ? "git's own directory" : "vouch's state dir"} (${dir}/), which vouch never lists as an input, so the check would seem covered by files it never sees; remove the glob`;
      }
    }
  }
  return null;
}
