import Database from 'better-sqlite3';
import { cpSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, tempProject, type TempProject } from '../helpers/project.js';

/*
 * `vouch explain` after a reinstall says so in a line instead of a line per
 * file, and `explain --inputs` says what a receipt depends on. The project
 * has 40 installed packages of 30 files each; "reinstalling" them copies
 * node_modules aside and back, so every installed file is a new file (a new
 * inode) with the same bytes, as `rm -rf node_modules && npm ci` leaves it.
 */

const PACKAGES = 40;
const FILES = 30;
const INSTALLED = PACKAGES * FILES;

function files(): Record<string, string> {
  const out: Record<string, string> = {
    '.gitignore': 'node_modules/\n',
    'package.json': '{ "name": "app", "private": true }\n',
    'vouch.config.json':
      JSON.stringify({ schema: 1, checks: [{ name: 'unit', kind: 'test', command: ['node', '-e', '0'], env: ['MY_TOKEN'] }, { name: 'other', kind: 'lint', command: ['node', '-e', '0'] }] }) + '\n',
  };
  for (let index = 0; index < 25; index++) out[`src/m${index}.ts`] = `export const m${index} = ${index};\n`;
  out['test/a.test.ts'] = 'ok\n';
  for (let p = 0; p < PACKAGES; p++) {
    const name = p % 4 === 0 ? `@scope/pkg${p}` : `pkg${p}`;
    for (let f = 0; f < FILES; f++) out[`node_modules/${name}/lib/f${f}.js`] = `module.exports = ${f};\n`;
  }
  return out;
}

/** Every installed file replaced by a copy: same paths and bytes, new inodes. */
function reinstall(p: TempProject) {
  const aside = join(p.root, '..', `${p.root.split('/').pop()}-node_modules`);
  cpSync(join(p.root, 'node_modules'), aside, { recursive: true });
  rmSync(join(p.root, 'node_modules'), { recursive: true });
  renameSync(aside, join(p.root, 'node_modules'));
}

describe('vouch explain, summarised, and explain --inputs', () => {
  let p: TempProject;
  const env = cleanEnv({ MY_TOKEN: 'token-value-never-shown' });
  beforeAll(() => {
    p = tempProject('explain-summary', files());
  });
  afterAll(() => p?.remove());

  it('--inputs without a receipt: exit 0, nothing is known, and the declared globs are not listed as inputs', () => {
    const text = p.vouch(['explain', 'unit', '--inputs'], { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe('unit: no receipt yet, so nothing is known about what it depends on ("vouch run unit" makes one)\n');
    const json = p.json(['explain', 'unit', '--inputs'], { env });
    expect(json).toEqual({ schema: 1, check: 'unit', mode: 'declared', receipt: null, declared: null, context: null, notes: [], groups: null, evidence: null, notices: [] });
  });

  it('--inputs with a receipt: counts by directory and package, the context by name only, the declared globs', () => {
    expect(p.vouch(['run', 'unit'], { env }).code).toBe(0);
    const text = p.vouch(['explain', 'unit', '--inputs'], { env });
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^unit: inputs of receipt \S+ \(PASS, from .+\), as declared/);
    expect(lines).toContain('source: 28 files in 3 directories');
    expect(lines).toContain('  src   25');
    expect(lines).toContain(`installed: 1,200 files in ${PACKAGES} packages`);
    expect(lines).toContain(`  … and ${PACKAGES - 10} more packages`);
    expect(lines.filter((line) => /^ {2}node_modules\//.test(line))).toHaveLength(10);
    expect(lines).toContain('  argv: ["node","-e","0"]');
    expect(lines.find((line) => line.startsWith('  env (names only): '))).toContain('MY_TOKEN');
    expect(lines).toContain('  inputs: **');
    expect(lines).toContain('  installed: node_modules/**');
    expect(text.stdout).not.toContain('token-value-never-shown');
    expect(text.stdout).not.toContain('lib/f0.js');
    expect(lines.length).toBeLessThan(40);

    const all = p.vouch(['explain', 'unit', '--inputs', '--all'], { env }).stdout;
    expect(all).toContain('    node_modules/@scope/pkg0/lib/f0.js\n');
    expect(all).toContain('    src/m0.ts\n');
    expect(all.split('\n').length).toBeGreaterThan(INSTALLED + 28);

    const json = p.json(['explain', 'unit', '--inputs'], { env });
    expect(json.receipt.check).toBe('unit');
    expect(json.declared).toEqual({ inputs: ['**'], installed: ['node_modules/**'] });
    expect(json.context.env).toContainEqual({ name: 'MY_TOKEN', set: true });
    expect(JSON.stringify(json)).not.toContain('token-value-never-shown');
    const [source, installed] = json.groups;
    expect([source.kind, source.count, source.paths.length]).toEqual(['source', 28, 28]);
    expect(source.buckets[0]).toEqual({ name: 'src', count: 25 });
    expect([installed.kind, installed.count, installed.paths.length, installed.buckets.length]).toEqual(['installed', INSTALLED, INSTALLED, PACKAGES]);
    expect(installed.buckets).toContainEqual({ name: 'node_modules/@scope/pkg0', count: FILES });
    expect(json.receipt.input_count).toBe(INSTALLED + 28);
  });

  it('after a reinstall: one line says every installed file changed identity; --all and --json list every file', () => {
    reinstall(p);
    const text = p.vouch(['explain', 'unit'], { env });
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines.length).toBeLessThan(6);
    const summary = lines.find((line) => line.includes('installed files'));
    expect(summary).toMatch(new RegExp(`^ {2}installed: all 1,200 installed files \\(${PACKAGES} packages\\) changed identity \\(.*ino.*\\), as a reinstall does \\(--all lists them\\)$`));
    expect(text.stdout).not.toContain('lib/f0.js');

    const all = p.vouch(['explain', 'unit', '--all'], { env }).stdout.split('\n');
    expect(all.filter((line) => /^ {2}identity {2}node_modules\/.+ \(installed; .*ino.* changed\)$/.test(line))).toHaveLength(INSTALLED);

    const json = p.json(['explain', 'unit'], { env });
    expect(json.input_changes).toHaveLength(INSTALLED);
    expect(new Set(json.input_changes.map((change: { change: string }) => change.change))).toEqual(new Set(['identity']));
  });

  it('a package upgraded and a source file edited: the package is named, the edit listed', () => {
    expect(p.vouch(['run', 'unit'], { env }).code).toBe(0);
    rmSync(join(p.root, 'node_modules', 'pkg1'), { recursive: true });
    for (let f = 0; f < FILES + 2; f++) p.write(`node_modules/pkg1-next/lib/f${f}.js`, `module.exports = ${f};\n`);
    p.write('src/m3.ts', 'export const m3 = 33;\n');
    const lines = p.vouch(['explain', 'unit'], { env }).stdout.trimEnd().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/^unit: STALE/),
      expect.stringMatching(/^ {2}inputs-changed: /),
      'inputs:',
      expect.stringMatching(/^ {2}modified {2}src\/m3\.ts \(/),
      `  installed: ${2 * FILES + 2} files changed in 2 packages (--all lists them)`,
      `    node_modules/pkg1-next: added (${FILES + 2} files)`,
      `    node_modules/pkg1: removed (${FILES} files)`,
    ]);
  });

  it('a receipt whose input manifest is gone: not every input "added", but a notice that the changes are not known', () => {
    expect(p.vouch(['run', 'unit'], { env }).code).toBe(0);
    const db = new Database(join(p.root, '.vouch', 'state.db'));
    try {
      const { manifest_digest: digest } = db.prepare('SELECT manifest_digest FROM receipts ORDER BY rowid DESC LIMIT 1').get() as { manifest_digest: string };
      expect(db.prepare('DELETE FROM manifests WHERE digest = ?').run(digest).changes).toBe(1);
    } finally {
      db.close();
    }
    const json = p.json(['explain', 'unit', '--no-observer'], { env });
    expect(json.input_changes).toEqual([]);
    expect(json.notices.join('\n')).toMatch(/the input manifest of run \S+ could not be read: which inputs changed since is not known/);
  });
});
