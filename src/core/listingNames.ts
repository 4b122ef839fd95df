import { parseJsonc } from './jsonc.js';

/**
 * Which of a listed directory's names a listing is bound to. Pure.
 *
 * A listing is bound to all its names, unless every process that made it was TypeScript's
 * compiler (exec/trace/straceLog.ts says which were, fs/listingFilter.ts checks it). tsc lists a
 * directory only to expand its configs' `include` globs (`matchFiles`) and to find
 * `node_modules/@types` packages, and it cannot act on a name that neither can select:
 *
 * - a file whose extension no TypeScript program can hold: `matchFiles` is given the supported
 *   extensions, and a file without one is skipped before any pattern is tried;
 * - a name starting with a dot, when no `include` pattern of any config the compiler read has a
 *   component that can match one: a wildcard component never matches a leading dot
 *   (`getSubPatternFromSpec` in src/compiler/utilities.ts of microsoft/TypeScript, "[^./]"), and
 *   type roots skip dot names (`getAutomaticTypeDirectiveNames`).
 *
 * So `vouch agent setup`'s `.claude/` and `.mcp.json`, a new README.md or a tool's `.cache/` at the
 * root leave a tsc receipt CURRENT, while a new `.ts` file anywhere tsc listed makes it STALE.
 */
export type ListingNames = 'typescript' | `typescript+${string}`;

/**
 * The names of listings bound to what tsc can act on, and to these dot names as well (lower case,
 * each matched whatever its case): those an `include` component spells out (`.storybook`, or the
 * `.ts` that `*.ts` matches when its leading `*` matches nothing). Names hold no '/', so it
 * separates them.
 */
export function typescriptNames(dotNames: Iterable<string>): ListingNames {
  const names = [...new Set([...dotNames].map((name) => name.toLowerCase()))].sort();
  return names.length === 0 ? 'typescript' : `typescript+${names.join('/')}`;
}

/** Every extension `matchFiles` is ever given by tsc (supported TS and JS extensions, and .json with resolveJsonModule); `.d.ts` and friends end in one. */
const TYPESCRIPT_EXTENSIONS = ['.ts', '.tsx', '.cts', '.mts', '.js', '.jsx', '.cjs', '.mjs', '.json'];

export type ListedKind = 'file' | 'directory' | 'link' | 'other';

/** Whether a listing bound to `names` is bound to an entry: all are, without a filter. */
export function keepsName(names: ListingNames | undefined, name: string, kind: ListedKind): boolean {
  if (names === undefined) return true;
  if (name.startsWith('.') && !(names.startsWith('typescript+') && names.slice('typescript+'.length).split('/').includes(name.toLowerCase()))) return false;
  if (kind !== 'file') return true;
  // Case folded: a looser match keeps more names, never fewer than tsc's own.
  const lower = name.toLowerCase();
  return TYPESCRIPT_EXTENSIONS.some((extension) => lower.endsWith(extension));
}

/**
 * The names starting with a dot that a config's `include` patterns can match: each component that
 * starts with a dot (`.storybook`), or with `*` followed by a dot (`*.ts`, whose leading `*`
 * TypeScript makes optional, so it matches `.ts` itself). Null when any name may be matched: such
 * a component holds a wildcard after its first character (`*.*`, `**.ts`, `.gen*`), or the config
 * cannot be read well enough to tell.
 */
export function includeDotNames(text: string): string[] | null {
  // `"include"` may be spelt with \u escapes; any other text without the word has no include.
  if (!text.includes('include') && !text.includes('\\u')) return [];
  const config = parseJsonc(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  if (config === null) return null;
  if (typeof config !== 'object' || Array.isArray(config)) return [];
  const include = (config as Record<string, unknown>).include;
  if (include === undefined) return [];
  if (!Array.isArray(include)) return null;
  const names: string[] = [];
  for (const spec of include) {
    if (typeof spec !== 'string') return null;
    for (const component of spec.split(/[\\/]/)) {
      const name = componentDotName(component);
      if (name === null) return null;
      if (name !== '') names.push(name);
    }
  }
  return names;
}

/**
 * Whether a config's text extends or references a config named with a program extension (or
 * cannot be read well enough to tell): tsc reads `extends: "./base.ts"`, and a reference's
 * `path: "./app.ts"`, as JSON configs, which fs/listingFilter.ts would otherwise take for sources
 * and never look at (`getExtendsConfigPath` and `resolveProjectReferencePath` in
 * src/compiler/commandLineParser.ts and program.ts of microsoft/TypeScript).
 */
export function namesConfigLikeProgram(text: string): boolean {
  if (!text.includes('extends') && !text.includes('references') && !text.includes('\\u')) return false;
  const config = parseJsonc(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  if (config === null) return true;
  if (typeof config !== 'object' || Array.isArray(config)) return false;
  const { extends: extended, references } = config as Record<string, unknown>;
  const named: unknown[] = [];
  if (extended !== undefined) named.push(...(Array.isArray(extended) ? extended : [extended]));
  if (references !== undefined) {
    if (!Array.isArray(references)) return true;
    for (const reference of references) named.push(typeof reference === 'object' && reference !== null ? (reference as Record<string, unknown>).path : reference);
  }
  return named.some((name) => typeof name !== 'string' || PROGRAM_NAME.test(name));
}

/**
 * Whether NODE_OPTIONS loads code into every Node process before its main script: a
 * `--require`, `--import` or loader (https://nodejs.org/api/cli.html#node_optionsoptions), which
 * may act on any name of any listing. Any spelling of the flag counts (Node takes `_` for `-`),
 * whatever it loads.
 */
export function nodeOptionsRunCode(nodeOptions: string | undefined): boolean {
  return nodeOptions !== undefined && /(^|[\s"'])(-r|--require|--import|--loader|--experimental[-_]loader)/.test(nodeOptions);
}

/** A name tsc would take for a program file by its extension, whatever the case. */
const PROGRAM_NAME = /\.[cm]?[jt]sx?$/i;

/** The one dot name a component can match, '' for none, null for many (see includeDotNames). */
function componentDotName(component: string): string | null {
  if (component === '.' || component === '..' || component === '**') return '';
  const rest = component.startsWith('.') ? component : component.startsWith('*') && /^[.*?]/.test(component.slice(1)) ? component.slice(1) : '';
  if (rest === '') return '';
  return /[*?]/.test(rest) ? null : rest;
}
