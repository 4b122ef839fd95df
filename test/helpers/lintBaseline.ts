import type { Issue } from '../../src/core/claim.js';

/*
 * A file already on disk with a lint error (a debugger statement, which
 * oxlint, ESLint and Biome all flag), and drafts of it that keep, move,
 * repeat, or fix that error: what each linter's baseline must make of them.
 */

export const LEGACY_PATH = 'src/legacy.js';
export const LEGACY_DISK = 'export function legacy(a) {\n  debugger;\n  return a;\n}\n';

export interface BaselineCase {
  name: string;
  text: string;
  /** [origin, line] of each issue on the draft, claimant's first. */
  expected: Array<[Issue['origin'], number]>;
}

export const BASELINE_CASES: readonly BaselineCase[] = [
  { name: 'an unrelated fine edit keeps the old error the workspace\'s', text: 'export function legacy(a) {\n  debugger;\n  return a + 1;\n}\n', expected: [['workspace', 2]] },
  { name: 'an edit above it shifts its line, and it is still the workspace\'s', text: `// Kept as it was.\nexport const unit = 1;\n\n${LEGACY_DISK}`, expected: [['workspace', 5]] },
  {
    name: 'a second identical violation is exactly one claimant issue',
    text: `${LEGACY_DISK}export function fresh(b) {\n  debugger;\n  return b;\n}\n`,
    expected: [
      ['claimant', 6],
      ['workspace', 2],
    ],
  },
  { name: 'fixing the old error and adding another is the claimant\'s', text: 'export function legacy(a) {\n  return a;\n}\nexport const later = () => { debugger; };\n', expected: [['claimant', 4]] },
];

/** The issues on the legacy draft as [origin, line]. */
export function onLegacy(issues: readonly Issue[]): Array<[Issue['origin'], number | undefined]> {
  return issues.filter((issue) => issue.path === LEGACY_PATH).map((issue) => [issue.origin, issue.line]);
}
