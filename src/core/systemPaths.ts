/*
 * The system's own files, left out of a traced receipt's evidence: the context rules cover them
 * (the Node version, the platform, a package manager's version), and a check can neither change
 * them nor depend on them apart from those.
 */

/** /usr, the libraries and the binaries, and the kernel's pseudo file systems. */
const SYSTEM_PREFIXES = ['/usr', '/lib', '/lib32', '/lib64', '/libx32', '/bin', '/sbin', '/proc', '/dev', '/sys'];

/**
 * Under /usr but the user's own: what `make install`, npm's global packages (a Node installed
 * there keeps them in /usr/local/lib/node_modules) and hand-installed tools put there.
 */
const USER_PREFIXES = ['/usr/local'];

/**
 * Whether a path (absolute, normalized) is left out of the evidence: a system file, or under
 * one of `skipped` (the Node binary, vouch's own state dir).
 */
export function isSkippedPath(path: string, skipped: readonly string[]): boolean {
  for (const prefix of skipped) if (isUnder(path, prefix)) return true;
  for (const prefix of USER_PREFIXES) if (isUnder(path, prefix)) return false;
  for (const prefix of SYSTEM_PREFIXES) if (isUnder(path, prefix)) return true;
  return false;
}

/** '/' is under nothing here: a prefix of '/' would leave every path out, and an empty evidence answers CURRENT forever. */
function isUnder(path: string, prefix: string): boolean {
  if (prefix === '/' || prefix === '') return false;
  return path === prefix || (path.startsWith(prefix) && path.charCodeAt(prefix.length) === 47);
}
