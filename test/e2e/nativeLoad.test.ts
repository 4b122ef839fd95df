import { spawnSync } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';

/*
 * vouch installed with a native module that does not load in this Node (as
 * after switching Node versions): a copy of dist/ beside a node_modules whose
 * better-sqlite3 has a .node file that is not a shared object, and a copy
 * whose own addon (build/Release/vouch_scan.node) is broken the same way. The
 * CLI says the fix on one line with its own exit code; the hook says it once
 * per session and lets the command run as typed.
 */

let scratch: string;
/** dist/ with a broken better-sqlite3. */
let brokenSqlite: string;
/** dist/ with a better-sqlite3 that was never built. */
let unbuiltSqlite: string;
/** dist/ with a broken vouch_scan.node and a working better-sqlite3. */
let brokenAddon: string;
const projects: TempProject[] = [];

/** A copy of the package: dist/, package.json, and node_modules linked to the repository's, but for `replace`. */
function install(name: string, replace: Record<string, (dir: string) => void>): string {
  const dir = join(scratch, name);
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  cpSync(join(REPO, 'dist'), join(dir, 'dist'), { recursive: true });
  cpSync(join(REPO, 'package.json'), join(dir, 'package.json'));
  const modules = realpathSync(join(REPO, 'node_modules'));
  for (const entry of readdirSync(modules)) {
    if (Object.hasOwn(replace, entry)) continue;
    symlinkSync(join(modules, entry), join(dir, 'node_modules', entry));
  }
  for (const make of Object.values(replace)) make(dir);
  return dir;
}

beforeAll(() => {
  // Outside the repository: a copy under it would resolve better-sqlite3's build up in the repository's own node_modules.
  scratch = mkdtempSync(join(tmpdir(), 'vouch-native-load-'));
  brokenSqlite = install('broken-sqlite', {
    'better-sqlite3': (dir) => {
      const real = realpathSync(join(REPO, 'node_modules', 'better-sqlite3'));
      const copy = join(dir, 'node_modules', 'better-sqlite3');
      mkdirSync(join(copy, 'build', 'Release'), { recursive: true });
      cpSync(join(real, 'lib'), join(copy, 'lib'), { recursive: true });
      cpSync(join(real, 'package.json'), join(copy, 'package.json'));
      writeFileSync(join(copy, 'build', 'Release', 'better_sqlite3.node'), 'not a shared object\n');
    },
  });
  unbuiltSqlite = install('unbuilt-sqlite', {
    'better-sqlite3': (dir) => {
      const real = realpathSync(join(REPO, 'node_modules', 'better-sqlite3'));
      const copy = join(dir, 'node_modules', 'better-sqlite3');
      mkdirSync(copy, { recursive: true });
      cpSync(join(real, 'lib'), join(copy, 'lib'), { recursive: true });
      cpSync(join(real, 'package.json'), join(copy, 'package.json'));
    },
  });
  brokenAddon = install('broken-addon', {});
  mkdirSync(join(brokenAddon, 'build', 'Release'), { recursive: true });
  writeFileSync(join(brokenAddon, 'build', 'Release', 'vouch_scan.node'), 'not a shared object\n');
});

afterAll(() => {
  for (const p of projects.splice(0)) p.remove();
  rmSync(scratch, { recursive: true, force: true });
});

function project(): TempProject {
  const p = tempProject('native-load', {
    'vouch.config.json': JSON.stringify({ schema: 1, packageManager: 'npm', checks: [{ name: 'test', kind: 'test', script: 'test' }] }) + '\n',
    'package.json': JSON.stringify({ name: 'fx', private: true, scripts: { test: 'node -e 0' } }) + '\n',
    'src/a.js': 'export const a = 1;\n',
  });
  projects.push(p);
  return p;
}

function vouch(installDir: string, p: TempProject, args: string[], input?: string) {
  const result = spawnSync(process.execPath, [join(installDir, 'dist', 'bin', 'main.js'), ...args], { cwd: p.root, env: cleanEnv(), encoding: 'utf8', timeout: 60_000, ...(input !== undefined ? { input } : {}) });
  if (result.error) throw result.error;
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function bash(p: TempProject, session: string, command = 'npm test'): string {
  return JSON.stringify({ session_id: session, cwd: p.root, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } });
}

const NATIVE_FILE = () => join(brokenSqlite, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');

describe('a native module that does not load', () => {
  it('every command that opens the store: one line naming the module, this Node and the rebuild, exit 69, no stack trace', () => {
    const p = project();
    for (const args of [['status'], ['run', 'test'], ['log'], ['explain', 'test']]) {
      const run = vouch(brokenSqlite, p, args);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(69);
      expect(run.stderr.split('\n').filter((line) => line !== '')).toHaveLength(1);
      expect(run.stderr).toContain(`the native module better-sqlite3 (${NATIVE_FILE()}) does not load`);
      expect(run.stderr).toContain(`Node ${process.version} (NODE_MODULE_VERSION ${process.versions.modules})`);
      expect(run.stderr).toContain(`Fix: cd ${brokenSqlite} && npm rebuild better-sqlite3`);
      expect(run.stderr).not.toMatch(/internal error|\n\s+at /);
    }
    const json = vouch(brokenSqlite, p, ['status', '--json']);
    expect(json.code).toBe(69);
    const doc = JSON.parse(json.stdout);
    expect(doc.error.code).toBe('native-module-unloadable');
    expect(doc.error.message).toContain('npm rebuild better-sqlite3');
  });

  it('better-sqlite3 never built: the same line, saying no build was found', () => {
    const p = project();
    const run = vouch(unbuiltSqlite, p, ['status']);
    expect(run.code, run.stderr).toBe(69);
    expect(run.stderr).toBe(
      `vouch: the native module better-sqlite3 does not load: Node ${process.version} (NODE_MODULE_VERSION ${process.versions.modules}) says: no build of it was found (Could not locate the bindings file). ` +
        `Fix: cd ${unbuiltSqlite} && npm rebuild better-sqlite3 (with this Node), or run vouch with the Node it was installed with\n`,
    );
  });

  it('Claude Code: a systemMessage once per session, and the command runs as typed', () => {
    const p = project();
    const first = vouch(brokenSqlite, p, ['hook', 'claude'], bash(p, 'session-a'));
    expect(first.code).toBe(0);
    expect(first.stderr).toBe('');
    const out = JSON.parse(first.stdout);
    expect(first.stdout).toBe(JSON.stringify(out) + '\n');
    expect(Object.keys(out)).toEqual(['systemMessage']);
    expect(out.systemMessage).toContain('npm rebuild better-sqlite3');
    expect(out.systemMessage).toContain('lets every command run as typed');

    // The same session again, and another command: nothing; another session is told again.
    expect(vouch(brokenSqlite, p, ['hook', 'claude'], bash(p, 'session-a'))).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(vouch(brokenSqlite, p, ['hook', 'claude'], bash(p, 'session-a', 'npm test 2>&1 | tail -5'))).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(JSON.parse(vouch(brokenSqlite, p, ['hook', 'claude'], bash(p, 'session-b')).stdout).systemMessage).toBe(out.systemMessage);
    // A command that runs no check never reaches the store: nothing to say.
    expect(vouch(brokenSqlite, p, ['hook', 'claude'], bash(p, 'session-c', 'ls -la'))).toEqual({ code: 0, stdout: '', stderr: '' });
    // The marker is one owner-only file in the state dir.
    const marker = join(p.root, '.vouch', 'hook-notice');
    expect(readFileSync(marker, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    expect(lstatSync(marker).mode & 0o777).toBe(0o600);
    // An event without a session_id cannot be told apart from the next: it is told every time.
    const anonymous = JSON.stringify({ cwd: p.root, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'npm test' } });
    for (let i = 0; i < 2; i++) expect(JSON.parse(vouch(brokenSqlite, p, ['hook', 'claude'], anonymous).stdout).systemMessage).toBe(out.systemMessage);
  });

  it('Codex: the line on stderr once per session, nothing on stdout', () => {
    const p = project();
    const first = vouch(brokenSqlite, p, ['hook', 'codex'], bash(p, 'codex-1'));
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('');
    expect(first.stderr.split('\n').filter((line) => line !== '')).toHaveLength(1);
    expect(first.stderr).toContain('npm rebuild better-sqlite3');
    expect(vouch(brokenSqlite, p, ['hook', 'codex'], bash(p, 'codex-1'))).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('the marker is never written through a link: one in its place is replaced; a linked state dir is refused and nothing is written', () => {
    const p = project();
    const elsewhere = mkdtempSync(join(scratch, 'elsewhere-'));
    writeFileSync(join(elsewhere, 'target'), 'keep\n');
    mkdirSync(join(p.root, '.vouch'), { mode: 0o700 });
    symlinkSync(join(elsewhere, 'target'), join(p.root, '.vouch', 'hook-notice'));
    const first = vouch(brokenSqlite, p, ['hook', 'claude'], bash(p, 'session-link'));
    expect(JSON.parse(first.stdout).systemMessage).toContain('npm rebuild');
    expect(readFileSync(join(elsewhere, 'target'), 'utf8')).toBe('keep\n');
    expect(lstatSync(join(p.root, '.vouch', 'hook-notice')).isFile()).toBe(true);
    expect(vouch(brokenSqlite, p, ['hook', 'claude'], bash(p, 'session-link')).stdout).toBe('');

    const q = project();
    const other = mkdtempSync(join(scratch, 'elsewhere-'));
    symlinkSync(other, join(q.root, '.vouch'));
    // vouch refuses a linked state dir before it opens SQLite: the command runs as typed, and nothing lands there.
    expect(vouch(brokenSqlite, q, ['hook', 'claude'], bash(q, 'session-link'))).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(readdirSync(other)).toEqual([]);
  });

  it("vouch's own addon broken: vouch works without it (it has a JavaScript fallback), and says nothing", () => {
    const p = project();
    const run = vouch(brokenAddon, p, ['run', 'test']);
    expect(run.code, run.stderr).toBe(0);
    expect(vouch(brokenAddon, p, ['status']).code).toBe(0);
    const hook = vouch(brokenAddon, p, ['hook', 'claude'], bash(p, 'session-addon'));
    expect(hook.code).toBe(0);
    expect(JSON.parse(hook.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
  });
});
