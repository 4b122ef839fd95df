import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newestChangeMs, SETTLE_MS } from '../helpers/settle.js';
import { compareEvidencePaths, evidenceOf, type EvidenceEntry, type EvidenceUse } from '../../src/core/evidence.js';
import { nowNs } from '../../src/core/identity.js';
import { reason } from '../../src/core/reason.js';
import { MemoryStatCache } from '../../src/core/statCache.js';
import { EvidenceLooker } from '../../src/fs/evidenceLook.js';
import { insertReceipt, latestReceipt } from '../../src/store/receipts.js';
import { inProcess } from '../helpers/inProcess.js';
import { until } from '../helpers/observer.js';
import { CLI, cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';

/*
 * `vouch explain` and `explain --inputs` on a traced receipt: one whose evidence is what its
 * run read, listed and looked up (core/evidence.ts). The receipt is made here from a real run's
 * receipt, with evidence entries looked at exactly as a traced run's are (fs/evidenceLook.ts),
 * so that what it touched is known exactly and no tracer is needed; the last block runs a
 * traced check for real where strace is installed.
 *
 * vouch runs in this process (test/helpers/inProcess.ts): the same commands print the same text
 * and JSON, without a Node start each. The MCP server keeps a process of its own (the client
 * speaks to it over stdio). A traced run in this process waits first until the last edit is
 * settled (runIn says why).
 */

/** `vouch ARGS` in this process, and its JSON. */
const vouchIn = (p: TempProject, args: string[]) => inProcess(p).vouch(args, { env });
const jsonIn = (p: TempProject, args: string[]) => inProcess(p).json(args, { env });

/**
 * A traced run takes a file it read whose ctime is not before its start, less a clock slack of
 * 20 ms (fs/runEvidence.ts), for one changed while it ran. A run through the CLI starts long after
 * the test's last write (a Node start and vouch's loading); one in this process may start a few
 * milliseconds after it. So a traced run in this process first waits until nothing in the project
 * (or the file outside it) changed within SETTLE_MS: its files are then written before the run, as
 * the test means them.
 */


/** `vouch ARGS` in this process, once the last edit (to the project, or to `also`) is settled. */
async function runIn(p: TempProject, args: string[], also: string[] = []) {
  const newest = Math.max(newestChangeMs(p.root), ...also.map((path) => lstatSync(path).ctimeMs));
  await until(() => Date.now() > newest + SETTLE_MS, `the last edit to be ${SETTLE_MS} ms old`, 5_000, 5);
  return await vouchIn(p, args);
}

const PACKAGE = 'node_modules/.pnpm/x@1.0.0';
const FILES = 30;
const env = cleanEnv();

function files(): Record<string, string> {
  const out: Record<string, string> = {
    '.gitignore': 'node_modules/\n.env\n',
    '.env': 'TOKEN=a\n',
    'package.json': '{ "name": "app", "private": true }\n',
    'README.md': 'read by nobody\n',
    'src/a.ts': 'export const a = 1;\n',
    'src/b.ts': 'export const b = 2;\n',
    'node_modules/y/index.js': 'module.exports = 1;\n',
    'node_modules/.cache/tool/data.json': '{"run":1}\n',
    // The real run reads .env, which the tests below change with the rest: traced, its own
    // evidence then changes too, and it cannot answer as an earlier receipt in place of the one
    // recorded here (core/decide.ts decideWithEarlierTraced).
    'vouch.config.json': JSON.stringify({ schema: 1, checks: [{ name: 'unit', kind: 'test', command: ['node', '-e', "require('fs').readFileSync('.env')"], mode: 'traced' }] }) + '\n',
  };
  for (let f = 0; f < FILES; f++) out[`${PACKAGE}/node_modules/x/f${String(f).padStart(2, '0')}.js`] = `module.exports = ${f};\n`;
  return out;
}

/** What the check's run touched, as [path, use, own]. */
function touched(outside: string): [string, EvidenceUse, boolean][] {
  return [
    ['src/a.ts', 'read', false],
    ['src/b.ts', 'read', false],
    ['.env', 'read', false],
    ['src', 'listed', false],
    ['src/c.ts', 'lookup', false],
    ['package.json', 'lookup', false],
    ['node_modules/y/index.js', 'read', false],
    ...Array.from({ length: FILES }, (_, f): [string, EvidenceUse, boolean] => [`${PACKAGE}/node_modules/x/f${String(f).padStart(2, '0')}.js`, 'read', false]),
    [outside, 'read', false],
    ['node_modules/.cache/tool/data.json', 'read', true],
  ];
}

/** Records a traced receipt for `unit`, bound to the latest receipt's definition and context. */
function recordTraced(p: TempProject, outside: string): EvidenceEntry[] {
  const looker = new EvidenceLooker(realpathSync(p.root), new MemoryStatCache(), nowNs());
  const entries = touched(outside)
    .map(([path, use, own]) => looker.look(path, use, own).entry)
    .sort(compareEvidencePaths);
  const evidence = evidenceOf(entries);
  const db = new Database(join(p.root, '.vouch', 'state.db'));
  try {
    const latest = latestReceipt(db, 'unit');
    if (latest === null) throw new Error('run unit first');
    insertReceipt(
      db,
      {
        ...latest,
        // Of the same form as a real run id, a minute later: the newest receipt of the check.
        runId: `${latest.runId.slice(0, -6)}7aced0`,
        manifestDigest: evidence.digest,
        inputCount: entries.length,
        evidence: { mode: 'traced', notes: [reason('read-outside-inputs', `read ${outside}, outside its declared inputs`)] },
      },
      () => ({ entries }),
    );
  } finally {
    db.close();
  }
  return entries;
}

function compile() {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/);
  for (const name of ['explain', 'explain-inputs']) ajv.addSchema(JSON.parse(readFileSync(join(REPO, 'schemas', `${name}.schema.json`), 'utf8')), `${name}.schema.json`);
  const check = (name: string, value: unknown) => {
    const validate = ajv.getSchema(`${name}.schema.json`)!;
    return validate(value) ? null : ajv.errorsText(validate.errors);
  };
  return Object.assign(
    (name: string, value: unknown) => {
      expect(check(name, value), `${name}.schema.json rejected ${JSON.stringify(value, null, 2)}`).toBeNull();
    },
    { check },
  );
}

describe('vouch explain on a traced receipt', () => {
  let p: TempProject;
  let outside: string;
  let entries: EvidenceEntry[];
  const expectValid = compile();

  beforeAll(async () => {
    p = tempProject('explain-traced', files());
    outside = `${realpathSync(p.root)}-outside/config.json`;
    mkdirSync(join(outside, '..'), { recursive: true });
    writeFileSync(outside, '{"a":1}\n');
    expect((await runIn(p, ['run', 'unit'], [outside])).code).toBe(0);
    entries = recordTraced(p, outside);
  });
  afterAll(() => {
    p?.remove();
    rmSync(join(outside, '..'), { recursive: true, force: true });
  });

  it('--inputs groups what the run touched and counts each group; --json has every entry', async () => {
    const text = await vouchIn(p, ['explain', 'unit', '--inputs']);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^unit: inputs of receipt \S+-7aced0 \(PASS, from .+\), as traced \(what its run read, listed and looked up\)$/);
    expect(lines).toContain('read: 3 files in 2 directories');
    expect(lines).toContain('listed: 1 directory in 1 directory');
    expect(lines).toContain('looked up, found: 1 path in 1 directory');
    expect(lines).toContain('looked up, absent: 1 path in 1 directory');
    expect(lines).toContain(`installed: ${FILES + 1} paths in 2 packages`);
    expect(lines).toContain(`  ${PACKAGE}  ${FILES}`);
    expect(lines).toContain('outside the root: 1 path in 1 directory');
    expect(lines).toContain('its own (written by the run): 1 path in 1 directory');
    expect(lines).toContain('notes:');
    expect(lines.find((line) => line.startsWith('  read-outside-inputs: '))).toContain(outside);
    expect(text.stdout).not.toContain('README.md');
    expect(text.stdout).not.toContain('f00.js');

    const all = (await vouchIn(p, ['explain', 'unit', '--inputs', '--all'])).stdout;
    expect(all).toContain(`    ${PACKAGE}/node_modules/x/f00.js\n`);
    expect(all).toContain(`    ${outside}\n`);

    const json = await jsonIn(p, ['explain', 'unit', '--inputs']);
    expectValid('explain-inputs', json);
    expect(json.mode).toBe('traced');
    expect(json.receipt.evidence.notes).toEqual([{ code: 'read-outside-inputs', message: `read ${outside}, outside its declared inputs` }]);
    expect(Object.fromEntries(json.groups.map((group: { kind: string; count: number }) => [group.kind, group.count]))).toEqual({
      read: 3,
      listed: 1,
      found: 1,
      absent: 1,
      installed: FILES + 1,
      outside: 1,
      own: 1,
    });
    expect(json.evidence).toHaveLength(entries.length);
    expect(json.evidence).toContainEqual({ path: 'src/c.ts', use: 'lookup', own: false, type: 'absent', link: null, digest: null, executable: null });
    expect(json.evidence).toContainEqual(expect.objectContaining({ path: 'node_modules/.cache/tool/data.json', use: 'read', own: true, type: 'file' }));

    // The schema holds a traced document to its own groups, and a declared one to no evidence.
    const broken: [string, (value: any) => void][] = [
      ['mode declared with traced groups and evidence', (v) => (v.mode = 'declared')],
      ['a declared group kind in a traced document', (v) => (v.groups[0].kind = 'source')],
      ['an entry used in no known way', (v) => (v.evidence[0].use = 'written')],
      ['an entry without own', (v) => delete v.evidence[0].own],
    ];
    for (const [what, mutate] of broken) {
      const sample = structuredClone(json);
      mutate(sample);
      expect(expectValid.check('explain-inputs', sample), what).not.toBeNull();
    }
  });

  it('nothing changed, and a reinstall of the same bytes is no change: CURRENT, with the receipt\'s notes', async () => {
    const modules = join(p.root, 'node_modules');
    cpSync(modules, `${modules}-aside`, { recursive: true });
    rmSync(modules, { recursive: true });
    renameSync(`${modules}-aside`, modules);
    p.write('README.md', 'edited, and never read\n');
    const text = await vouchIn(p, ['explain', 'unit']);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^unit: CURRENT, result PASS, receipt \S+-7aced0 from /);
    expect(lines).toContain('notes (how receipt ' + lines[0]!.match(/receipt (\S+) from/)![1] + ' was made):');
    expect(lines.at(-1)).toBe('nothing changed since the receipt');
    const json = await jsonIn(p, ['explain', 'unit']);
    expectValid('explain', json);
    expect(json.check.freshness).toBe('CURRENT');
    expect(json.evidence).toEqual({ mode: 'traced', notes: [expect.objectContaining({ code: 'read-outside-inputs' })], changes: [] });
    expect(json.input_changes).toEqual([]);
  });

  it('what the run read, listed and looked up changed: STALE, each change named, a package counted; --all and --json list every change', async () => {
    p.write('.env', 'TOKEN=b\n');
    p.write('src/c.ts', 'export const c = 3;\n');
    writeFileSync(outside, '{"a":2}\n');
    p.write('node_modules/.cache/tool/data.json', '{"run":"someone else"}\n');
    for (let f = 0; f < FILES; f++) p.write(`${PACKAGE}/node_modules/x/f${String(f).padStart(2, '0')}.js`, `module.exports = ${f + 100};\n`);
    const text = await vouchIn(p, ['explain', 'unit']);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^unit: STALE, result PASS/);
    expect(lines[1]).toMatch(/^ {2}inputs-changed: inputs changed since run \S+: /);
    const inputs = lines.slice(lines.indexOf('inputs:') + 1);
    expect(inputs).toEqual([
      '  .env: content changed',
      `  ${outside}: content changed`,
      '  node_modules/.cache/tool/data.json: content changed',
      '  src: entries added, removed or changed kind',
      '  src/c.ts: absent → a file',
      `  installed: ${FILES} changes in 1 package (--all lists them)`,
      `    ${PACKAGE}: all ${FILES} files changed`,
    ]);

    const all = (await vouchIn(p, ['explain', 'unit', '--all'])).stdout.split('\n');
    expect(all.filter((line) => line.startsWith(`  ${PACKAGE}/node_modules/x/`))).toHaveLength(FILES);

    const json = await jsonIn(p, ['explain', 'unit']);
    expectValid('explain', json);
    expect(json.check.freshness).toBe('STALE');
    expect(json.evidence.changes).toHaveLength(FILES + 5);
    expect(json.evidence.changes).toContainEqual({
      path: 'src/c.ts',
      use: 'lookup',
      own: false,
      description: 'src/c.ts: absent → a file',
      old: { type: 'absent', link: null, digest: null },
      // A file looked up is bound by its size and modification time too.
      new: { type: 'file', link: null, digest: expect.stringMatching(/^\d+:\d+$/) },
    });
  });

  it('the MCP inputs tool answers with the same document, and the explain tool names the changes', async () => {
    const serverEnv = Object.fromEntries(Object.entries(env).filter((pair): pair is [string, string] => pair[1] !== undefined));
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], cwd: p.root, env: serverEnv, stderr: 'pipe' });
    const client = new Client({ name: 'vouch-test', version: '0' });
    await client.connect(transport);
    try {
      const inputs = (await client.callTool({ name: 'inputs', arguments: { check: 'unit' } })) as CallToolResult;
      expect(inputs.isError).toBeFalsy();
      expectValid('explain-inputs', inputs.structuredContent);
      expect(inputs.structuredContent).toEqual(await jsonIn(p, ['explain', 'unit', '--inputs']));
      const summary = inputs.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
      expect(summary).toMatch(/inputs as traced/);
      expect(summary).toContain(`${FILES + 1} installed paths (${PACKAGE} ${FILES}, node_modules/y 1)`);

      const explained = (await client.callTool({ name: 'explain', arguments: { check: 'unit' } })) as CallToolResult;
      expect(explained.isError).toBeFalsy();
      const said = explained.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
      expect(said).toContain('src/c.ts: absent → a file');
      expect(said).toContain(`${PACKAGE}: all ${FILES} files changed`);
      expect(said).toContain('note on the receipt: read-outside-inputs: ');
    } finally {
      await client.close();
    }
  });

  it('a traced receipt whose evidence is gone from the store: UNVERIFIED, as status says, and a notice; never CURRENT on no evidence', async () => {
    const db = new Database(join(p.root, '.vouch', 'state.db'));
    try {
      const { manifest_digest: digest } = db.prepare('SELECT manifest_digest FROM receipts ORDER BY seq DESC LIMIT 1').get() as { manifest_digest: string };
      expect(db.prepare('DELETE FROM manifests WHERE digest = ?').run(digest).changes).toBe(1);
    } finally {
      db.close();
    }
    const json = await jsonIn(p, ['explain', 'unit']);
    expectValid('explain', json);
    expect(json.check.freshness).toBe('UNVERIFIED');
    expect(json.check.freshness).toBe((await jsonIn(p, ['status', 'unit'])).checks[0].freshness);
    expect(json.evidence).toMatchObject({ mode: 'traced', changes: [] });
    expect(json.notices.join('\n')).toMatch(/the evidence of run \S+ could not be read: which inputs changed since is not known/);

    const inputs = await jsonIn(p, ['explain', 'unit', '--inputs']);
    expectValid('explain-inputs', inputs);
    expect([inputs.mode, inputs.groups, inputs.evidence]).toEqual(['traced', null, null]);
    expect(inputs.notices.join('\n')).toMatch(/the evidence of run \S+ could not be read: what it depends on is not known/);
    expect((await vouchIn(p, ['explain', 'unit', '--inputs'])).stdout).toContain('  its evidence could not be read: what it depends on is not known\n');
  });
});

describe('vouch explain on a traced receipt in a state dir git lists', () => {
  let p: TempProject;
  let outside: string;
  afterAll(() => {
    p?.remove();
    if (outside) rmSync(join(outside, '..'), { recursive: true, force: true });
  });

  it('its evidence, which may be forged and name any path, is not looked at: UNVERIFIED as status says, no changes named', async () => {
    p = tempProject('explain-traced-listed', files());
    outside = `${realpathSync(p.root)}-outside/config.json`;
    mkdirSync(join(outside, '..'), { recursive: true });
    writeFileSync(outside, '{"a":1}\n');
    expect((await runIn(p, ['run', 'unit'], [outside])).code).toBe(0);
    recordTraced(p, outside);
    p.write('src/a.ts', 'export const a = 2;\n');
    p.git('add', '-f', '.vouch');
    const json = await jsonIn(p, ['explain', 'unit']);
    expect(json.check.freshness).toBe('UNVERIFIED');
    expect(json.check.reasons.map((r: { code: string }) => r.code)).toContain('state-dir-in-git');
    expect(json.evidence).toMatchObject({ mode: 'traced', changes: [] });
    expect(json.check.freshness).toBe((await jsonIn(p, ['status', 'unit'])).checks[0].freshness);
    expect((await vouchIn(p, ['explain', 'unit'])).stdout).not.toContain('src/a.ts');
  });
});

const STRACE = process.platform === 'linux' && spawnSync('strace', ['-V']).status === 0;
const TITLE = STRACE ? 'vouch explain after a real traced run' : 'vouch explain after a real traced run (SKIPPED: strace is not on PATH; apt-get install strace)';

describe.runIf(STRACE)(TITLE, () => {
  let p: TempProject;
  const expectValid = compile();

  beforeAll(async () => {
    p = tempProject('explain-traced-run', {
      '.gitignore': '.vouch/\n.env\nnode_modules/\n',
      '.env': 'S=1\n',
      'README.md': '# readme\n',
      'src/a.ts': 'export const a = 1;\n',
      'fixtures/one.json': '{}',
      'node_modules/dep/index.js': 'module.exports = 1;\n',
      'node_modules/dep/package.json': '{ "name": "dep" }\n',
      'check.mjs': `import fs from 'node:fs';
import { createRequire } from 'node:module';
fs.readFileSync('src/a.ts'); fs.readFileSync('.env'); fs.readdirSync('fixtures'); fs.existsSync('src/a.local.ts');
createRequire(import.meta.url)('dep');
fs.mkdirSync('node_modules/.cache/check', { recursive: true });
fs.writeFileSync('node_modules/.cache/check/last.json', String(Date.now()));
fs.readFileSync('node_modules/.cache/check/last.json');
`,
      'vouch.config.json': JSON.stringify({ schema: 1, checks: [{ name: 'check', kind: 'test', command: ['node', 'check.mjs'], mode: 'traced' }] }) + '\n',
    });
    const ran = await runIn(p, ['run', 'check']);
    expect(ran.code, ran.stderr).toBe(0);
  });
  afterAll(() => p?.remove());

  it('--inputs says what the run read, listed, probed and wrote, and not what it never touched', async () => {
    const json = await jsonIn(p, ['explain', 'check', '--inputs']);
    expectValid('explain-inputs', json);
    expect(json.mode).toBe('traced');
    const group = (kind: string) => json.groups.find((g: { kind: string }) => g.kind === kind);
    expect(group('read').paths).toEqual(expect.arrayContaining(['.env', 'check.mjs', 'src/a.ts']));
    expect(group('listed').paths).toContain('fixtures');
    expect(group('absent').paths).toContain('src/a.local.ts');
    expect(group('installed').buckets).toContainEqual({ name: 'node_modules/dep', count: expect.any(Number) });
    expect(group('own').paths).toContain('node_modules/.cache/check/last.json');
    expect(json.evidence.map((entry: { path: string }) => entry.path)).not.toContain('README.md');
    expect(json.receipt.evidence.notes.map((note: { code: string }) => note.code)).toContain('read-outside-inputs');

    const text = (await vouchIn(p, ['explain', 'check', '--inputs'])).stdout;
    expect(text).toMatch(/^check: inputs of receipt \S+ \(PASS, from .+\), as traced/);
    expect(text).toMatch(/^looked up, absent: \d+ paths? in /m);
  });

  it('an edit to a file it never read changes nothing; one to a file it read, or a file where it found none, is named', async () => {
    p.write('README.md', '# edited\n');
    const current = await vouchIn(p, ['explain', 'check']);
    expect(current.code, current.stderr).toBe(0);
    expect(current.stdout.trimEnd().split('\n').at(-1)).toBe('nothing changed since the receipt');
    expect((await jsonIn(p, ['status', 'check'])).checks[0].freshness).toBe('CURRENT');

    p.write('.env', 'S=2\n');
    p.write('src/a.local.ts', 'export {};\n');
    const lines = (await vouchIn(p, ['explain', 'check'])).stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^check: STALE, result PASS/);
    expect(lines.slice(lines.indexOf('inputs:') + 1)).toEqual(expect.arrayContaining(['  .env: content changed', '  src/a.local.ts: absent → a file']));
    const json = await jsonIn(p, ['explain', 'check']);
    expectValid('explain', json);
    expect(json.check.freshness).toBe((await jsonIn(p, ['status', 'check'])).checks[0].freshness);
  });
});
