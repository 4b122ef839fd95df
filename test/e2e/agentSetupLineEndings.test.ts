import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';

/*
 * `vouch agent setup` writes its section into CLAUDE.md or AGENTS.md in the
 * file's own line ending, and `vouch agent remove` gives back the file's
 * bytes exactly.
 */

mkdirSync(join(REPO, '.tmp'), { recursive: true });
const scratch = mkdtempSync(join(REPO, '.tmp', 'agent-eol-'));
const home = join(scratch, 'home');
mkdirSync(home);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const projects: TempProject[] = [];
afterAll(() => {
  for (const p of projects.splice(0)) p.remove();
});

const PACKAGE_JSON = JSON.stringify({ name: 'app', private: true, scripts: { typecheck: 'tsc --noEmit', test: 'vitest run' } }, null, 2) + '\n';
const config = (names: string[]) => JSON.stringify({ schema: 1, packageManager: 'npm', checks: names.map((name) => ({ name, kind: name, script: name })) }, null, 2) + '\n';

function vouch(p: TempProject, args: string[]): { code: number | null; out: any } {
  // No vouch on the login shell's PATH (the shell fails): setup names this install by path.
  const result = spawnSync(process.execPath, [CLI, ...args, '--json'], { cwd: p.root, env: cleanEnv({ HOME: home, SHELL: '/bin/false' }), encoding: 'utf8', timeout: 60_000 });
  if (result.error) throw result.error;
  try {
    return { code: result.status, out: JSON.parse(result.stdout) };
  } catch {
    throw new Error(`vouch ${args.join(' ')} printed no JSON (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
  }
}

/** Every line end in the text: 'crlf', or 'lf' for a bare LF (a lone CR counts as 'cr'). */
function lineEnds(text: string): string[] {
  return [...text.matchAll(/\r\n|\n|\r/g)].map((match) => (match[0] === '\r\n' ? 'crlf' : match[0] === '\n' ? 'lf' : 'cr'));
}

const CASES = [
  { host: 'claude', file: 'CLAUDE.md', text: '# App\r\n\r\nUse npm, not pnpm.\r\n' },
  { host: 'claude', file: 'CLAUDE.md', text: '# App\r\n\r\nNo line end at the end' },
  { host: 'claude', file: 'CLAUDE.md', text: '# App\r\n\r\nTwo blank lines before vouch.\r\n\r\n' },
  { host: 'codex', file: 'AGENTS.md', text: '# Agents\r\n\r\n- Run `npm test` before a commit.\r\n' },
] as const;

describe('agent setup keeps a CRLF instructions file CRLF', () => {
  for (const { host, file, text } of CASES) {
    it(`${host}: ${JSON.stringify(text)}`, () => {
      const p = tempProject(`agent-eol-${host}`, { 'package.json': PACKAGE_JSON, 'vouch.config.json': config(['typecheck', 'test']), [file]: text }, { git: false });
      projects.push(p);
      const original = readFileSync(join(p.root, file));

      expect(vouch(p, ['agent', 'setup', host, '--apply']).code).toBe(0);
      const written = readFileSync(join(p.root, file), 'utf8');
      expect(written.startsWith(text)).toBe(true);
      expect(written).toContain('<!-- vouch:begin -->\r\n');
      expect(written.endsWith('<!-- vouch:end -->\r\n')).toBe(true);
      expect(new Set(lineEnds(written))).toEqual(new Set(['crlf']));

      // Setup again: vouch's section is recognised as its own, intact, and the file is not touched.
      const again = vouch(p, ['agent', 'setup', host, '--apply']);
      expect(again.code).toBe(0);
      expect(again.out.items.find((item: any) => item.path === file)?.action).toBe('unchanged');
      expect(readFileSync(join(p.root, file), 'utf8')).toBe(written);

      // A changed config updates the section in place, still in CRLF.
      writeFileSync(join(p.root, 'vouch.config.json'), config(['typecheck', 'test', 'lint']));
      const updated = vouch(p, ['agent', 'setup', host, '--apply']);
      expect(updated.code).toBe(0);
      expect(updated.out.items.find((item: any) => item.path === file)?.action).toBe('update');
      const after = readFileSync(join(p.root, file), 'utf8');
      expect(after).toContain('lint');
      expect(new Set(lineEnds(after))).toEqual(new Set(['crlf']));

      expect(vouch(p, ['agent', 'remove', host, '--apply']).code).toBe(0);
      expect(readFileSync(join(p.root, file)).equals(original)).toBe(true);
    });
  }

  it("codex: a CRLF .codex/config.toml gets vouch's MCP table in CRLF, and remove gives its bytes back", () => {
    const toml = '# my settings\r\nmodel = "gpt-5"\r\n';
    const p = tempProject('agent-eol-toml', { 'package.json': PACKAGE_JSON, 'vouch.config.json': config(['test']), '.codex/config.toml': toml }, { git: false });
    projects.push(p);
    expect(vouch(p, ['agent', 'setup', 'codex', '--apply']).code).toBe(0);
    const written = readFileSync(join(p.root, '.codex', 'config.toml'), 'utf8');
    expect(written.startsWith(toml)).toBe(true);
    expect(written).toContain('[mcp_servers.vouch]\r\n');
    expect(new Set(lineEnds(written))).toEqual(new Set(['crlf']));
    const again = vouch(p, ['agent', 'setup', 'codex', '--apply']);
    expect(again.out.items.find((item: any) => item.path === '.codex/config.toml')?.action).toBe('unchanged');
    expect(vouch(p, ['agent', 'remove', 'codex', '--apply']).code).toBe(0);
    expect(readFileSync(join(p.root, '.codex', 'config.toml'), 'utf8')).toBe(toml);
  });

  it('an LF file stays LF', () => {
    const text = '# App\n\nUse npm.\n';
    const p = tempProject('agent-eol-lf', { 'package.json': PACKAGE_JSON, 'vouch.config.json': config(['test']), 'CLAUDE.md': text }, { git: false });
    projects.push(p);
    expect(vouch(p, ['agent', 'setup', 'claude', '--apply']).code).toBe(0);
    expect(new Set(lineEnds(readFileSync(join(p.root, 'CLAUDE.md'), 'utf8')))).toEqual(new Set(['lf']));
    expect(vouch(p, ['agent', 'remove', 'claude', '--apply']).code).toBe(0);
    expect(readFileSync(join(p.root, 'CLAUDE.md'), 'utf8')).toBe(text);
  });
});
