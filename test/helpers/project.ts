import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The bundled CLI, exactly what the package's bin runs. */
export const CLI = join(REPO, 'dist', 'bin', 'main.js');
const TMP = join(REPO, '.tmp');

/**
 * A real temporary project under the repo's .tmp/, so that node resolution
 * from inside it finds the repo's own typescript, vitest and oxlint.
 */
export interface TempProject {
  root: string;
  write(path: string, content: string | Buffer): void;
  /** Runs the built vouch CLI in the project, synchronously. */
  vouch(args: string[], options?: { env?: NodeJS.ProcessEnv; cwd?: string; timeout?: number }): CliResult;
  /** Runs vouch and parses its stdout as JSON. */
  json<T = any>(args: string[], options?: { env?: NodeJS.ProcessEnv }): T;
  git(...args: string[]): string;
  remove(): void;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * A config dir shared by the tests, so vouch's per-user key for environment
 * digests is never written into the real home. Mode 0755: an unprivileged
 * vouch (test/helpers/privileges.ts) finds it unusable and falls back.
 */
export const XDG_CONFIG_HOME = join(TMP, 'xdg-config');

/** The environment tests run vouch with: the caller's, minus variables that would leak between tests. */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith('VITEST') || name.startsWith('npm_') || name === 'NODE_OPTIONS' || name === 'TEST' || name === 'CI') delete env[name];
  }
  mkdirSync(XDG_CONFIG_HOME, { recursive: true, mode: 0o755 });
  return { ...env, XDG_CONFIG_HOME, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t', ...extra };
}

export function tempProject(name: string, files: Record<string, string> = {}, options: { git?: boolean } = {}): TempProject {
  mkdirSync(TMP, { recursive: true });
  const root = mkdtempSync(join(TMP, `${name}-`));
  const project: TempProject = {
    root,
    write(path, content) {
      const abs = join(root, path);
      mkdirSync(dirname(abs), { recursive: true });
      writeFileSync(abs, content);
    },
    vouch(args, opts = {}) {
      const result: SpawnSyncReturns<string> = spawnSync(process.execPath, [CLI, ...args], {
        cwd: opts.cwd ?? root,
        env: opts.env ?? cleanEnv(),
        encoding: 'utf8',
        timeout: opts.timeout ?? 120_000,
      });
      if (result.error) throw result.error;
      return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
    },
    json(args, opts = {}) {
      const result = project.vouch([...args, '--json'], opts);
      try {
        return JSON.parse(result.stdout);
      } catch {
        throw new Error(`vouch ${args.join(' ')} --json printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
      }
    },
    git(...args) {
      const result = spawnSync('git', args, { cwd: root, encoding: 'utf8', env: cleanEnv() });
      if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
      return result.stdout;
    },
    remove() {
      rmSync(root, { recursive: true, force: true });
    },
  };
  for (const [path, content] of Object.entries(files)) project.write(path, content);
  if (options.git !== false) {
    project.git('init', '-q');
    project.git('add', '-A');
    project.git('commit', '-qm', 'init', '--allow-empty');
  }
  return project;
}

/** Starts vouch without waiting, for tests that signal or race it. */
export function spawnVouch(root: string, args: string[], env: NodeJS.ProcessEnv = cleanEnv()) {
  return spawn(process.execPath, [CLI, ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
}
