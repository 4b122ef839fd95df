import { dirname, extname, isAbsolute, join, resolve } from 'node:path';

/** The name the runtime stage looks for in a project's plugins to know the overlay reaches it. */
export const OVERLAY_PLUGIN_NAME = 'vouch:overlay';

/** The slice of a Vite plugin the overlay needs; structural, so vouch never imports Vite's types at runtime. */
export interface OverlayPlugin {
  name: string;
  enforce: 'pre';
  resolveId(id: string, importer?: string): string | undefined;
  load(id: string): string | undefined;
}

/** An import written for the compiled file names the TypeScript source beside it (NodeNext style). */
const SOURCE_FOR: Readonly<Record<string, readonly string[]>> = {
  '.js': ['.ts', '.tsx'],
  '.jsx': ['.tsx'],
  '.mjs': ['.mts'],
  '.cjs': ['.cts'],
};
const BARE_EXTENSIONS = ['.ts', '.tsx', '.mts', '.js', '.mjs', '/index.ts', '/index.tsx', '/index.js'];

/**
 * Serves one inspection's draft text to Vitest in place of the disk, and
 * records which overlaid paths it actually served: a draft Vitest loaded but
 * this plugin did not serve means the run judged the disk, not the claim.
 */
export class OverlayServer {
  readonly #root: string;
  readonly #onServe: () => void;
  #files: ReadonlyMap<string, string> = new Map();
  /** Absolute paths served since the last `use`. */
  readonly served = new Set<string>();

  /** `onServe` runs each time draft text is handed to Vitest: the tool has begun work on claimant input. */
  constructor(root: string, onServe: () => void) {
    this.#root = root;
    this.#onServe = onServe;
  }

  /** Switches to one inspection's files (absolute path to text) and forgets what was served before. */
  use(files: ReadonlyMap<string, string>): void {
    this.#files = files;
    this.served.clear();
  }

  has(path: string): boolean {
    return this.#files.has(path);
  }

  plugin(): OverlayPlugin {
    return {
      name: OVERLAY_PLUGIN_NAME,
      enforce: 'pre',
      resolveId: (id, importer) => this.#resolve(id, importer),
      load: (id) => this.#load(id),
    };
  }

  /**
   * Only paths that exist in the overlay are resolved here; everything else
   * is left to Vite, so a draft that replaces a disk file resolves the usual
   * way and is caught by `load`. This matters for drafts that exist nowhere
   * on disk, which Vite alone would report as missing.
   */
  #resolve(id: string, importer: string | undefined): string | undefined {
    if (this.#files.size === 0 || id.startsWith('\0')) return undefined;
    const [specifier, query] = splitQuery(id);
    const bases: string[] = [];
    if (specifier.startsWith('/@fs/')) bases.push(specifier.slice(4));
    else if (isAbsolute(specifier)) {
      // Vitest asks for a test file by absolute path and then by a root-relative URL (`/test/x.test.ts`).
      bases.push(specifier, join(this.#root, specifier));
    } else if (specifier.startsWith('./') || specifier.startsWith('../')) {
      const from = importer === undefined ? this.#root : dirname(splitQuery(importer)[0]);
      bases.push(resolve(from, specifier));
    } else return undefined;
    for (const base of bases) {
      for (const candidate of candidates(base)) {
        if (this.#files.has(candidate)) return candidate + query;
      }
    }
    return undefined;
  }

  #load(id: string): string | undefined {
    const [path, query] = splitQuery(id);
    const text = this.#files.get(path);
    if (text === undefined) return undefined;
    this.served.add(path);
    this.#onServe();
    // `?raw` asks for the text as a string export, not as a module.
    if (/[?&]raw(?:&|$)/.test(query)) return `export default ${JSON.stringify(text)};`;
    return text;
  }
}

function splitQuery(id: string): [string, string] {
  const at = id.indexOf('?');
  return at === -1 ? [id, ''] : [id.slice(0, at), id.slice(at)];
}

function candidates(base: string): string[] {
  const extension = extname(base);
  const swaps = SOURCE_FOR[extension];
  if (swaps !== undefined) return [base, ...swaps.map((swap) => base.slice(0, -extension.length) + swap)];
  if (extension === '') return [base, ...BARE_EXTENSIONS.map((suffix) => base + suffix)];
  return [base];
}
