import { statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

/**
 * A file as the disk has it now: inode, size, mtime and ctime in nanoseconds,
 * or 'absent'. Any write changes ctime, so a rewrite that restores the same
 * bytes and size still reads as a change, except within one clock tick,
 * which `DiskModules` guards separately.
 */
interface Identity {
  key: string;
  mtimeMs: number;
}

function identify(path: string): Identity {
  try {
    const stat = statSync(path, { bigint: true });
    return { key: `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`, mtimeMs: Number(stat.mtimeMs) };
  } catch {
    return { key: 'absent', mtimeMs: 0 };
  }
}

/**
 * Timestamps advance in clock ticks (a few ms on Linux), so a same-size
 * rewrite inside the tick in which Vite read the file keeps every stat field.
 * A file this young is not trusted: it is invalidated again on each
 * inspection until it has been quiet for longer than any tick.
 */
const SETTLE_MS = 2_000;

/**
 * Which of the files a resident Vitest has loaded changed on disk since it
 * last looked. A file never seen before counts as changed: it was loaded
 * during some earlier run, at a version this class never recorded, so the
 * only sound answer is to have Vitest read it again (one extra transform).
 */
export class DiskModules {
  readonly #seen = new Map<string, string>();

  changed(paths: Iterable<string>, now = Date.now()): string[] {
    const changed: string[] = [];
    for (const path of paths) {
      const identity = identify(path);
      if (this.#seen.get(path) !== identity.key) changed.push(path);
      if (now - identity.mtimeMs < SETTLE_MS) this.#seen.delete(path);
      else this.#seen.set(path, identity.key);
    }
    return changed;
  }

  /**
   * Whether a directory holding a loaded file gained, lost or renamed an
   * entry. A module Vite already transformed keeps the ids its imports
   * resolved to; a new `x.ts` beside an `x/index.ts` it resolved to changes
   * what `./x` means without changing any loaded file. The directory's own
   * mtime and ctime move on every such change, so this is the signal to
   * re-transform, and so re-resolve, everything loaded.
   */
  directoriesChanged(paths: Iterable<string>, now = Date.now()): boolean {
    const dirs = new Set<string>();
    for (const path of paths) dirs.add(dirname(path));
    let changed = false;
    for (const dir of dirs) {
      const identity = identify(dir);
      const key = `dir:${dir}`;
      if (this.#seen.get(key) !== identity.key) changed = true;
      if (now - identity.mtimeMs < SETTLE_MS) this.#seen.delete(key);
      else this.#seen.set(key, identity.key);
    }
    return changed;
  }

  /**
   * Records, after a run, the files it loaded and their directories, so the
   * next run does not take a file merely never looked at for a changed one
   * (and re-transform everything a first run loaded). Only what has not
   * changed since well before the run began is recorded: a file edited
   * during the run, after Vite read it, stays unrecorded and so is read again.
   */
  noteAfterRun(paths: Iterable<string>, runStartedMs: number): void {
    const note = (key: string, path: string) => {
      const identity = identify(path);
      if (identity.key !== 'absent' && identity.mtimeMs < runStartedMs - SETTLE_MS) this.#seen.set(key, identity.key);
    };
    const dirs = new Set<string>();
    for (const path of paths) {
      if (!this.#seen.has(path)) note(path, path);
      dirs.add(dirname(path));
    }
    for (const dir of dirs) if (!this.#seen.has(`dir:${dir}`)) note(`dir:${dir}`, dir);
  }

  clear(): void {
    this.#seen.clear();
  }
}

/** The slice of Vitest's API this module reads; structural, so the workspace's own Vitest fills it. */
interface ModuleNode {
  file: string | null;
}
interface LoadedGraphs {
  projects: ReadonlyArray<{
    vite: {
      environments: Record<string, { moduleGraph: { idToModuleMap: Map<string, ModuleNode> } }>;
      config: { configFile?: string | undefined; configFileDependencies?: string[] };
    };
  }>;
}

/** Every disk file the resident Vite servers hold a module for (transformed, so possibly cached). */
export function loadedFiles(vitest: LoadedGraphs): Set<string> {
  const files = new Set<string>();
  for (const project of vitest.projects) {
    for (const environment of Object.values(project.vite.environments)) {
      for (const node of environment.moduleGraph.idToModuleMap.values()) {
        if (node.file !== null && isAbsolute(node.file)) files.add(node.file);
      }
    }
  }
  return files;
}

/** Vitest's own config names (vitest/dist constants), looked for at the root; a new one would change which config is read. */
const CONFIG_NAMES = ['vitest.config', 'vite.config'].flatMap((name) => ['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'].map((ext) => name + ext));

/**
 * One string that changes whenever the configuration Vitest was built from
 * may have: the config files each project loaded and everything they
 * imported, the config names at the root, and the manifests Vite consults
 * when it resolves and transforms (package.json, tsconfig.json).
 */
export function configIdentity(workspace: string, vitest: LoadedGraphs | undefined): string {
  const paths = new Set<string>();
  for (const name of [...CONFIG_NAMES, 'vitest.workspace.ts', 'vitest.workspace.js', 'package.json', 'tsconfig.json']) paths.add(join(workspace, name));
  for (const project of vitest?.projects ?? []) {
    const config = project.vite.config;
    if (config.configFile !== undefined) paths.add(config.configFile);
    for (const dependency of config.configFileDependencies ?? []) paths.add(dependency);
  }
  return [...paths]
    .sort()
    .map((path) => `${path}=${identify(path).key}`)
    .join('\n');
}
