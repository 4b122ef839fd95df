/**
 * vouch's Jest resolver (https://jestjs.io/docs/configuration#resolver-string),
 * loaded by the workspace's Jest inside the Jest stage's host process.
 * A relative or absolute request that names a file existing only in the
 * claim's drafts resolves to it; every other request goes to the
 * workspace's own resolver, or Jest's default. Jest 30's default resolver
 * is native (unrs-resolver) and never sees the host's patched `fs`, so a
 * new module a claim drafts would not be found without this.
 */
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';

/** Where the host puts the hook this module reads; a symbol, so no workspace global collides with it. */
export const JEST_OVERLAY = Symbol.for('vouch.jestOverlay');

export interface JestOverlayHook {
  /** The claim's files for the run in flight, by absolute path. */
  files: ReadonlyMap<string, string>;
  /** The resolver each project configured, by its rootDir. */
  userResolvers: ReadonlyMap<string, string>;
  /** Whether a regular file is on disk, through the unpatched `fs`. */
  onDisk(path: string): boolean;
}

interface ResolverOptions {
  basedir: string;
  extensions?: readonly string[];
  rootDir?: string;
  defaultResolver: (request: string, options: ResolverOptions) => string;
}

type Resolve = (request: string, options: ResolverOptions) => string;

/** The file a relative or absolute request names, in Node's order (the path, then with each extension, then its index), when the first one that exists is only in memory. */
export function draftedTarget(request: string, basedir: string, extensions: readonly string[], hook: Pick<JestOverlayHook, 'files' | 'onDisk'>): string | undefined {
  if (!(request.startsWith('./') || request.startsWith('../') || request === '.' || request === '..' || isAbsolute(request))) return undefined;
  const base = resolve(basedir, request);
  const candidates = [base, ...extensions.map((extension) => base + extension), ...extensions.map((extension) => join(base, `index${extension}`))];
  for (const candidate of candidates) {
    if (hook.files.has(candidate)) return hook.onDisk(candidate) ? undefined : candidate;
    if (hook.onDisk(candidate)) return undefined;
  }
  return undefined;
}

function userResolver(path: string): Resolve {
  const loaded = createRequire(path)(path) as Resolve | { sync?: Resolve; default?: Resolve };
  if (typeof loaded === 'function') return loaded;
  const resolver = loaded.sync ?? loaded.default;
  if (typeof resolver !== 'function') throw new Error(`the resolver ${path} exports no function`);
  return resolver;
}

export function sync(request: string, options: ResolverOptions): string {
  const hook = (globalThis as Record<symbol, JestOverlayHook | undefined>)[JEST_OVERLAY];
  if (hook !== undefined) {
    const drafted = draftedTarget(request, options.basedir, options.extensions ?? [], hook);
    if (drafted !== undefined) return drafted;
    const own = options.rootDir === undefined ? undefined : hook.userResolvers.get(options.rootDir);
    if (own !== undefined) return userResolver(own)(request, options);
  }
  return options.defaultResolver(request, options);
}
