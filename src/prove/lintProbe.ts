import { extname } from 'node:path';

/**
 * A text that parses under any config able to parse this kind of file. When
 * a draft's parse fails, this decides whose failure it is: if the probe fails
 * too, the workspace's config has no parser for the file type (a `.ts` draft
 * with no TypeScript parser configured), which is the workspace's to fix; if
 * the probe parses, the draft itself does not parse, which is the claimant's.
 */
export function parseProbe(path: string): string {
  return /^\.[mc]?tsx?$/.test(extname(path).toLowerCase()) ? 'let vouchProbe: number = 1;\nvoid vouchProbe;\n' : 'void 0;\n';
}

/**
 * A text a linter reports on under any config (a syntax error), unless it
 * skips the path. A linter whose ignore rules are not all readable from here
 * (oxlint's server: .gitignore without git, .eslintignore, ignorePatterns,
 * oxlint.config.ts) answers `[]` for an ignored path, so its empty answer for
 * a draft is only trusted after this probe draws a finding at the same path.
 */
export function ignoreProbe(path: string): string {
  const ext = extname(path).toLowerCase();
  if (ext === '.vue' || ext === '.svelte') return '<script>\n)\n</script>\n';
  if (ext === '.astro') return '---\n)\n---\n';
  return ')\n';
}
