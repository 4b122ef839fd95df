import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addVouchHooks, removeVouchHooks, type HookEntry } from '../../src/agents/setup/hookEntries.js';
import { appendSection, findSection, removeSection } from '../../src/agents/setup/managedSection.js';
import { unifiedDiff } from '../../src/agents/setup/unifiedDiff.js';
import { VOUCH_ERROR_CODES } from '../../src/core/errors.js';
import { CLI as BUILT_CLI, cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';

/** The built CLI; VOUCH_AGENT_TEST_CLI points these tests at another build of it (an unbundled one while dist/ is being rebuilt). */
const CLI = process.env.VOUCH_AGENT_TEST_CLI ?? BUILT_CLI;
const THIS_INSTALL = realpathSync(CLI);
/** The native hook client of this checkout, when built: setup then writes it in front of this Node and entry script. */
const HOOK_CLIENT = process.platform === 'linux' && existsSync(join(REPO, 'build', 'Release', 'vouch_hook')) ? join(REPO, 'build', 'Release', 'vouch_hook') : null;
/** What the hook handlers run, given what the instructions call vouch. */
const hookProgram = (program: string): string => (HOOK_CLIENT === null ? program : `${HOOK_CLIENT} ${process.execPath} ${THIS_INSTALL}`);

// ---------------------------------------------------------------- schemas

/** vouch's own output schemas, strict, as test/jsonSchema.test.ts compiles them. */
function outputValidator() {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/);
  for (const name of ['agent-setup', 'agent-remove', 'agent-doctor', 'error']) {
    ajv.addSchema(JSON.parse(readFileSync(join(REPO, 'schemas', `${name}.schema.json`), 'utf8')), `${name}.schema.json`);
  }
  return (name: string, value: unknown) => {
    const validate = ajv.getSchema(`${name}.schema.json`);
    if (!validate) throw new Error(`${name}.schema.json did not compile`);
    expect(validate(value) ? null : ajv.errorsText(validate.errors, { separator: '\n' }), `${name}.schema.json rejected:\n${JSON.stringify(value, null, 2)}`).toBeNull();
  };
}
const expectValid = outputValidator();

/**
 * Claude Code's settings schema: an unmodified copy of SchemaStore's
 * src/schemas/json/claude-code-settings.json (Apache-2.0, commit 7437ca64),
 * draft-07 with a non-standard keyword, hence strict: false.
 */
const claudeSettings = new Ajv({ strict: false, allErrors: true, formats: { uri: /^[a-z][a-z0-9+.-]*:/i } }).compile(
  JSON.parse(readFileSync(join(REPO, 'test', 'fixtures', 'claude-code-settings.schema.json'), 'utf8')),
);

function expectClaudeSettingsValid(text: string) {
  const value = JSON.parse(text);
  expect(claudeSettings(value) ? null : JSON.stringify(claudeSettings.errors, null, 2), text).toBeNull();
}

// ---------------------------------------------------------------- running vouch

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * A login shell stand-in: setup asks `$SHELL -l -c 'command -v vouch'`, and
 * this one answers with `found` (or finds nothing), so tests decide whether
 * "the vouch on PATH" is this install.
 */
function fakeShell(dir: string, found: string | null): string {
  const path = join(dir, found === null ? 'shell-none' : 'shell-found');
  writeFileSync(path, found === null ? '#!/bin/sh\nexit 1\n' : `#!/bin/sh\necho 'Welcome banner from a profile'\necho '${found}'\n`);
  chmodSync(path, 0o755);
  return path;
}

let scratch: string;
let home: string;
let shellFound: string;
let shellNone: string;

beforeAll(() => {
  mkdirSync(join(REPO, '.tmp'), { recursive: true });
  scratch = mkdtempSync(join(REPO, '.tmp', 'agent-setup-'));
  home = join(scratch, 'home');
  mkdirSync(home);
  shellFound = fakeShell(scratch, THIS_INSTALL);
  shellNone = fakeShell(scratch, null);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function vouch(project: TempProject, args: string[], shell = shellFound): Run {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: project.root, env: cleanEnv({ HOME: home, SHELL: shell }), encoding: 'utf8', timeout: 60_000 });
  if (result.error) throw result.error;
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function json(project: TempProject, args: string[], shell = shellFound): { code: number | null; out: any } {
  const result = vouch(project, [...args, '--json'], shell);
  try {
    return { code: result.code, out: JSON.parse(result.stdout) };
  } catch {
    throw new Error(`vouch ${args.join(' ')} --json printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
}

/** Every file under the root with its bytes, the state dir left out. */
function tree(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const rel = relative(root, path);
      if (rel === '.vouch' || rel === '.git') continue;
      if (entry.isDirectory()) {
        files[`${rel}/`] = '';
        walk(path);
      } else files[rel] = readFileSync(path, 'utf8');
    }
  };
  walk(root);
  return files;
}

const read = (project: TempProject, path: string) => readFileSync(join(project.root, path), 'utf8');

// ---------------------------------------------------------------- fixtures

const PACKAGE_JSON = JSON.stringify({ name: 'app', private: true, scripts: { typecheck: 'tsc --noEmit', test: 'vitest run' } }, null, 2) + '\n';

function config(checks: Array<Record<string, unknown>>): string {
  return JSON.stringify({ schema: 1, packageManager: 'npm', checks }, null, 2) + '\n';
}

const TWO_CHECKS = config([
  { name: 'typecheck', kind: 'typecheck', script: 'typecheck' },
  { name: 'test', kind: 'test', script: 'test' },
]);

/** A user's own local settings, laid out by hand (an inline array), with a hook of their own. */
const USER_SETTINGS = `{
  "permissions": {
    "allow": ["Bash(npm run lint:*)", "Read(./src/**)"]
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "prettier --write \\"$CLAUDE_PROJECT_DIR\\"",
            "timeout": 5
          }
        ]
      }
    ]
  }
}
`;

const USER_CLAUDE_MD = '# App\n\nUse pnpm? No: npm.\n';

function claudeProject(name: string, extra: Record<string, string> = {}): TempProject {
  return tempProject(
    name,
    { 'package.json': PACKAGE_JSON, 'vouch.config.json': TWO_CHECKS, 'CLAUDE.md': USER_CLAUDE_MD, '.claude/settings.local.json': USER_SETTINGS, ...extra },
    { git: false },
  );
}

// ---------------------------------------------------------------- Claude Code

describe('vouch agent setup in a repository whose agent files are links', () => {
  it('a .claude directory and a CLAUDE.md linked outside are neither read nor written; each is refused, naming the link', () => {
    const project = tempProject('agent-linked', { 'package.json': PACKAGE_JSON, 'vouch.config.json': TWO_CHECKS }, { git: false });
    const outside = mkdtempSync(join(REPO, '.tmp', 'agent-linked-outside-'));
    try {
      mkdirSync(join(outside, 'claude'));
      writeFileSync(join(outside, 'claude', 'settings.local.json'), USER_SETTINGS);
      writeFileSync(join(outside, 'notes.md'), USER_CLAUDE_MD);
      symlinkSync(join(outside, 'claude'), join(project.root, '.claude'));
      symlinkSync(join(outside, 'notes.md'), join(project.root, 'CLAUDE.md'));
      const before = tree(outside);
      const setup = json(project, ['agent', 'setup', 'claude', '--apply']);
      expect(setup.code, JSON.stringify(setup.out)).toBe(1);
      const byId = Object.fromEntries(setup.out.items.map((item: any) => [item.id, item]));
      for (const id of ['hooks', 'instructions', 'skill']) {
        expect(byId[id], id).toMatchObject({ state: 'invalid', action: 'refused' });
        expect(byId[id].message, id).toMatch(/reached through the symbolic link .*(\.claude|CLAUDE\.md) \(to /);
      }
      expect(tree(outside)).toEqual(before);
    } finally {
      project.remove();
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe('vouch agent setup/remove claude, on a real project', () => {
  let project: TempProject;
  beforeAll(() => {
    project = claudeProject('agent-claude');
  });
  afterAll(() => project?.remove());

  it('sets up, keeps the user settings and text, validates, and removes back to the same bytes', () => {
    const before = tree(project.root);

    const setup = json(project, ['agent', 'setup', 'claude', '--apply']);
    expect(setup.code, JSON.stringify(setup.out)).toBe(0);
    expectValid('agent-setup', setup.out);
    expect(setup.out).toMatchObject({ operation: 'setup', host: 'claude', mode: 'apply', applied: true, refused: 0 });
    expect(setup.out.items.map((item: any) => [item.id, item.state, item.action])).toEqual([
      ['hooks', 'missing', 'create'],
      ['instructions', 'missing', 'create'],
      ['skill', 'missing', 'create'],
      ['mcp', 'missing', 'create'],
    ]);
    expect(setup.out.command).toMatchObject({ program: 'vouch', same_install: true, hook_command: `${hookProgram('vouch')} hook claude`, hook_client: HOOK_CLIENT, this_install: THIS_INSTALL, mcp_server: { command: 'vouch', args: ['mcp'] } });
    expect(setup.out.command.lookup).toMatchObject({ shell: shellFound, found: THIS_INSTALL, resolved: THIS_INSTALL, error: null });

    // Settings: valid for Claude Code, the user's permissions and hooks kept byte for byte, vouch's hooks added.
    const settingsText = read(project, '.claude/settings.local.json');
    expectClaudeSettingsValid(settingsText);
    expect(settingsText).toContain('"allow": ["Bash(npm run lint:*)", "Read(./src/**)"]');
    const settings = JSON.parse(settingsText);
    const original = JSON.parse(USER_SETTINGS);
    expect(settings.permissions).toEqual(original.permissions);
    expect(settings.hooks.PostToolUse).toEqual(original.hooks.PostToolUse);
    expect(settings.hooks.PreToolUse).toEqual([{ matcher: 'Bash', hooks: [{ type: 'command', command: `${hookProgram('vouch')} hook claude`, timeout: 30 }] }]);
    expect(settings.hooks.SessionStart).toEqual([{ matcher: 'startup|resume|clear|compact', hooks: [{ type: 'command', command: `${hookProgram('vouch')} hook claude`, timeout: 10 }] }]);

    // CLAUDE.md: the user's text first, untouched; one short managed section after it.
    const claudeMd = read(project, 'CLAUDE.md');
    expect(claudeMd.startsWith(USER_CLAUDE_MD)).toBe(true);
    const section = findSection(claudeMd);
    expect(section.kind).toBe('one');
    expect(claudeMd.split('\n').length).toBeLessThan(20);

    // The skill: the exact commands for this config's checks.
    const skill = read(project, '.claude/skills/vouch/SKILL.md');
    expect(skill).toMatch(/^---\nname: vouch\ndescription: .{20,1024}\n---\n/);
    for (const name of ['typecheck', 'test']) {
      expect(skill).toContain(`\`vouch status ${name}\``);
      expect(skill).toContain(`\`vouch run ${name} --if-due\``);
    }
    expect(skill).toContain('`npm run typecheck`');

    // The record names each item with its digest.
    const record = JSON.parse(read(project, '.vouch/agent-claude.json'));
    expect(record).toMatchObject({ schema: 1, host: 'claude' });
    expect(record.items.map((item: any) => [item.kind, item.path, item.created_file])).toEqual([
      ['hooks', '.claude/settings.local.json', false],
      ['section', 'CLAUDE.md', false],
      ['file', '.claude/skills/vouch/SKILL.md', true],
      ['server', '.mcp.json', true],
    ]);
    for (const item of record.items) expect(item.digest).toMatch(/^[0-9a-f]{64}$/);

    // Again: nothing changes.
    const again = json(project, ['agent', 'setup', 'claude', '--apply']);
    expect(again.code).toBe(0);
    expect(again.out.items.map((item: any) => item.action)).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged']);
    expect(again.out.files).toEqual([]);

    const removed = json(project, ['agent', 'remove', 'claude', '--apply']);
    expect(removed.code, JSON.stringify(removed.out)).toBe(0);
    expectValid('agent-remove', removed.out);
    expect(removed.out.items.map((item: any) => item.action)).toEqual(['remove', 'remove', 'remove', 'remove']);
    expect(tree(project.root)).toEqual(before);
    expect(existsSync(join(project.root, '.vouch', 'agent-claude.json'))).toBe(false);

    // Nothing left to remove.
    const none = json(project, ['agent', 'remove', 'claude', '--apply']);
    expect(none.out.items.map((item: any) => item.action)).toEqual(['none', 'none', 'none', 'none']);
    expect(tree(project.root)).toEqual(before);
  });

  it('creates the settings file when there is none, valid for Claude Code, and removes it again', () => {
    const bare = tempProject('agent-claude-bare', { 'package.json': PACKAGE_JSON, 'vouch.config.json': TWO_CHECKS }, { git: false });
    try {
      const before = tree(bare.root);
      const setup = json(bare, ['agent', 'setup', 'claude', '--apply']);
      expect(setup.code).toBe(0);
      expectClaudeSettingsValid(read(bare, '.claude/settings.local.json'));
      expect(read(bare, 'CLAUDE.md').startsWith('<!-- vouch:begin -->\n')).toBe(true);
      expect(json(bare, ['agent', 'remove', 'claude', '--apply']).code).toBe(0);
      expect(tree(bare.root)).toEqual(before);
    } finally {
      bare.remove();
    }
  });

  it('says so when git would not ignore .claude/settings.local.json, whose hooks name this machine', () => {
    const repo = tempProject('agent-claude-gitignore', { 'package.json': PACKAGE_JSON, 'vouch.config.json': TWO_CHECKS });
    try {
      const warning = '.claude/settings.local.json is not ignored by git';
      expect(json(repo, ['agent', 'setup', 'claude', '--dry-run']).out.notes.join('\n')).toContain(warning);
      repo.write('.gitignore', '.claude/settings.local.json\n');
      expect(json(repo, ['agent', 'setup', 'claude', '--dry-run']).out.notes.join('\n')).not.toContain(warning);
    } finally {
      repo.remove();
    }
  });

  it('runs this install by absolute path when a login shell finds no vouch (or another one)', () => {
    const other = claudeProject('agent-claude-path');
    try {
      const setup = json(other, ['agent', 'setup', 'claude', '--apply'], shellNone);
      expect(setup.code).toBe(0);
      const program = `${process.execPath} ${THIS_INSTALL}`;
      expect(setup.out.command).toMatchObject({ same_install: false, program, hook_command: `${hookProgram(program)} hook claude` });
      expect(setup.out.notes.join('\n')).toContain('finds no vouch');
      const settingsText = read(other, '.claude/settings.local.json');
      expectClaudeSettingsValid(settingsText);
      expect(JSON.parse(settingsText).hooks.PreToolUse[0].hooks[0].command).toBe(`${hookProgram(program)} hook claude`);
      expect(read(other, '.claude/skills/vouch/SKILL.md')).toContain(`\`${program} run typecheck --if-due\``);
      expect(JSON.parse(read(other, '.mcp.json')).mcpServers.vouch).toEqual({ command: process.execPath, args: [THIS_INSTALL, 'mcp'] });

      // Once vouch is on PATH, setup again switches the intact items to plain "vouch", in place; hooks that
      // run the native client name this install by path either way, so they stay as they are.
      const upgrade = json(other, ['agent', 'setup', 'claude', '--apply']);
      expect(upgrade.out.items.map((item: any) => item.action)).toEqual([HOOK_CLIENT === null ? 'update' : 'unchanged', 'update', 'update', 'update']);
      const settings = JSON.parse(read(other, '.claude/settings.local.json'));
      expect(settings.hooks.PreToolUse).toEqual([{ matcher: 'Bash', hooks: [{ type: 'command', command: `${hookProgram('vouch')} hook claude`, timeout: 30 }] }]);
      expect(JSON.parse(read(other, '.mcp.json')).mcpServers.vouch).toEqual({ command: 'vouch', args: ['mcp'] });
    } finally {
      other.remove();
    }
  });

  it('upgrade: a changed config updates the intact skill and section in place, and leaves the hooks', () => {
    const other = claudeProject('agent-claude-upgrade');
    try {
      expect(json(other, ['agent', 'setup', 'claude', '--apply']).code).toBe(0);
      const settingsBefore = read(other, '.claude/settings.local.json');
      other.write(
        'vouch.config.json',
        config([
          { name: 'typecheck', kind: 'typecheck', script: 'typecheck' },
          { name: 'test', kind: 'test', script: 'test' },
          { name: 'lint', kind: 'lint', command: ['oxlint', 'src'] },
        ]),
      );
      const upgrade = json(other, ['agent', 'setup', 'claude', '--apply']);
      expect(upgrade.code).toBe(0);
      expect(upgrade.out.items.map((item: any) => [item.id, item.state, item.action])).toEqual([
        ['hooks', 'intact', 'unchanged'],
        ['instructions', 'outdated', 'update'],
        ['skill', 'outdated', 'update'],
        ['mcp', 'intact', 'unchanged'],
      ]);
      expect(upgrade.out.files.map((file: any) => [file.path, file.change])).toEqual([
        ['CLAUDE.md', 'modify'],
        ['.claude/skills/vouch/SKILL.md', 'modify'],
      ]);
      expect(read(other, '.claude/skills/vouch/SKILL.md')).toContain('`vouch run lint --if-due`');
      expect(read(other, 'CLAUDE.md')).toContain('(typecheck, test, lint)');
      expect(read(other, 'CLAUDE.md').startsWith(USER_CLAUDE_MD)).toBe(true);
      expect(read(other, '.claude/settings.local.json')).toBe(settingsBefore);
      // The record now vouches for the new content: a later remove takes it all away.
      expect(json(other, ['agent', 'remove', 'claude', '--apply']).out.items.map((item: any) => item.action)).toEqual(['remove', 'remove', 'remove', 'remove']);
      expect(read(other, 'CLAUDE.md')).toBe(USER_CLAUDE_MD);
    } finally {
      other.remove();
    }
  });

  it('refuses edited managed content on setup and on remove, and leaves it exactly as edited', () => {
    const other = claudeProject('agent-claude-edited');
    try {
      expect(json(other, ['agent', 'setup', 'claude', '--apply']).code).toBe(0);
      const skillPath = '.claude/skills/vouch/SKILL.md';
      other.write(skillPath, read(other, skillPath) + '\nMy own rule: always run lint first.\n');
      other.write('CLAUDE.md', read(other, 'CLAUDE.md').replace('use that answer;', 'use that answer, mostly;'));
      other.write('vouch.config.json', config([{ name: 'typecheck', kind: 'typecheck', script: 'typecheck' }]));
      const edited = { skill: read(other, skillPath), claudeMd: read(other, 'CLAUDE.md') };

      const setup = json(other, ['agent', 'setup', 'claude', '--apply']);
      expect(setup.code).toBe(1);
      expectValid('agent-setup', setup.out);
      expect(setup.out.refused).toBe(2);
      expect(setup.out.items.map((item: any) => [item.id, item.state, item.action])).toEqual([
        ['hooks', 'intact', 'unchanged'],
        ['instructions', 'edited', 'refused'],
        ['skill', 'edited', 'refused'],
        ['mcp', 'intact', 'unchanged'],
      ]);
      expect(setup.out.items[2].message).toContain('changed since vouch wrote it');
      expect(setup.out.items[2].message).toContain('then run setup again');
      expect(read(other, skillPath)).toBe(edited.skill);
      expect(read(other, 'CLAUDE.md')).toBe(edited.claudeMd);

      const human = vouch(other, ['agent', 'setup', 'claude', '--apply']);
      expect(human.code).toBe(1);
      expect(human.stdout).toContain('! vouch\'s section of CLAUDE.md: not updated');

      const removed = json(other, ['agent', 'remove', 'claude', '--apply']);
      expect(removed.code).toBe(1);
      expectValid('agent-remove', removed.out);
      expect(removed.out.items.map((item: any) => [item.id, item.action])).toEqual([
        ['hooks', 'remove'],
        ['instructions', 'refused'],
        ['skill', 'refused'],
        ['mcp', 'remove'],
      ]);
      expect(removed.out.items[1].message).toContain('delete the lines from vouch:begin to vouch:end yourself');
      expect(read(other, skillPath)).toBe(edited.skill);
      expect(read(other, 'CLAUDE.md')).toBe(edited.claudeMd);
      expect(read(other, '.claude/settings.local.json')).toBe(USER_SETTINGS);
      // The record keeps only what was refused, so the edits stay known as edits.
      const record = JSON.parse(read(other, '.vouch/agent-claude.json'));
      expect(record.items.map((item: any) => item.kind)).toEqual(['section', 'file']);
      const doctor = json(other, ['agent', 'doctor', 'claude']);
      expect(doctor.out.hosts[0].items.map((item: any) => item.state)).toEqual(['missing', 'edited', 'edited', 'missing']);
    } finally {
      other.remove();
    }
  });

  it('--dry-run shows the diff and writes nothing, not even the record', () => {
    const other = claudeProject('agent-claude-dry');
    try {
      const before = tree(other.root);
      const dry = json(other, ['agent', 'setup', 'claude', '--dry-run']);
      expect(dry.code).toBe(0);
      expectValid('agent-setup', dry.out);
      expect(dry.out).toMatchObject({ mode: 'dry-run', applied: false });
      expect(dry.out.files.map((file: any) => [file.path, file.change])).toEqual([
        ['.claude/settings.local.json', 'modify'],
        ['CLAUDE.md', 'modify'],
        ['.claude/skills/vouch/SKILL.md', 'create'],
        ['.mcp.json', 'create'],
      ]);
      expect(dry.out.files[0].diff).toContain(`+            "command": "${hookProgram('vouch')} hook claude",`);
      const human = vouch(other, ['agent', 'setup', 'claude', '--dry-run']);
      expect(human.code).toBe(0);
      expect(human.stdout).toContain('--- a/CLAUDE.md\n+++ b/CLAUDE.md\n');
      expect(human.stdout).toContain('Dry run: nothing was written. To write it: vouch agent setup claude --apply');
      expect(tree(other.root)).toEqual(before);
      expect(existsSync(join(other.root, '.vouch', 'agent-claude.json'))).toBe(false);

      expect(json(other, ['agent', 'setup', 'claude', '--apply']).code).toBe(0);
      const installed = tree(other.root);
      const dryRemove = json(other, ['agent', 'remove', 'claude', '--dry-run']);
      expectValid('agent-remove', dryRemove.out);
      expect(dryRemove.out.files.map((file: any) => file.change)).toEqual(['modify', 'modify', 'delete', 'delete']);
      expect(tree(other.root)).toEqual(installed);
    } finally {
      other.remove();
    }
  });

  it('without a terminal, setup and remove need --apply: a usage error that names it', () => {
    const other = claudeProject('agent-claude-usage');
    try {
      const before = tree(other.root);
      for (const operation of ['setup', 'remove']) {
        const result = vouch(other, ['agent', operation, 'claude']);
        expect(result.code).toBe(2);
        expect(result.stderr).toContain('--apply');
        expect(result.stdout).toBe('');
        const asJson = json(other, ['agent', operation, 'claude']);
        expect(asJson.code).toBe(2);
        expectValid('error', asJson.out);
        expect(asJson.out.error.code).toBe('usage');
        expect(asJson.out.error.message).toContain('--apply');
      }
      expect(vouch(other, ['agent', 'setup']).stderr).toContain('vouch agent setup claude');
      expect(vouch(other, ['agent', 'setup', 'cursor', '--apply']).stderr).toContain('claude, codex');
      expect(vouch(other, ['agent', 'setup', 'claude', '--apply', '--dry-run']).code).toBe(2);
      expect(tree(other.root)).toEqual(before);
    } finally {
      other.remove();
    }
  });

  it('without a record (a fresh clone, a deleted state dir), content equal to what setup writes is adopted; other content is not vouch\'s', () => {
    const other = claudeProject('agent-claude-norecord');
    try {
      expect(json(other, ['agent', 'setup', 'claude', '--apply']).code).toBe(0);
      rmSync(join(other.root, '.vouch'), { recursive: true });
      const adopted = json(other, ['agent', 'setup', 'claude', '--apply']);
      expect(adopted.out.items.map((item: any) => [item.state, item.action])).toEqual([
        ['intact', 'unchanged'],
        ['intact', 'unchanged'],
        ['intact', 'unchanged'],
        ['intact', 'unchanged'],
      ]);
      expect(existsSync(join(other.root, '.vouch', 'agent-claude.json'))).toBe(true);

      rmSync(join(other.root, '.vouch'), { recursive: true });
      other.write('vouch.config.json', config([{ name: 'typecheck', kind: 'typecheck', script: 'typecheck' }]));
      const unknown = json(other, ['agent', 'remove', 'claude', '--apply']);
      expect(unknown.code).toBe(1);
      expect(unknown.out.items.map((item: any) => [item.state, item.action])).toEqual([
        ['intact', 'remove'],
        ['edited', 'refused'],
        ['edited', 'refused'],
        ['intact', 'remove'],
      ]);
      expect(unknown.out.items[2].message).toContain('no record that vouch wrote it');
      expect(read(other, '.claude/settings.local.json')).toBe(USER_SETTINGS);
    } finally {
      other.remove();
    }
  });

  it('a settings file that is not valid JSON is refused and left alone; the rest is set up', () => {
    const broken = '{\n  "permissions": { "allow": [] },\n}\n';
    const other = claudeProject('agent-claude-badjson', { '.claude/settings.local.json': broken });
    try {
      const setup = json(other, ['agent', 'setup', 'claude', '--apply']);
      expect(setup.code).toBe(1);
      expectValid('agent-setup', setup.out);
      expect(setup.out.items.map((item: any) => [item.state, item.action])).toEqual([
        ['invalid', 'refused'],
        ['missing', 'create'],
        ['missing', 'create'],
        ['missing', 'create'],
      ]);
      expect(setup.out.items[0].message).toContain('not valid JSON');
      expect(setup.out.items[0].message).toContain('fix the file');
      expect(read(other, '.claude/settings.local.json')).toBe(broken);
    } finally {
      other.remove();
    }
  });

  // `script` gives the CLI a terminal, so it shows the changes and asks.
  const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;
  it.skipIf(!hasScript)('in a terminal, shows the diff and asks; "n" or the end of input writes nothing, "y" applies', () => {
    const other = claudeProject('agent-claude-tty');
    try {
      const before = tree(other.root);
      const inTerminal = (answer: string) => {
        const command = `SHELL='${shellFound}' HOME='${home}' '${process.execPath}' '${CLI}' agent setup claude`;
        const result = spawnSync('script', ['-qec', command, '/dev/null'], { cwd: other.root, env: cleanEnv({ SHELL: '/bin/sh' }), input: answer, encoding: 'utf8', timeout: 60_000 });
        return { code: result.status, stdout: result.stdout };
      };
      for (const answer of ['n\n', '']) {
        const no = inTerminal(answer);
        expect(no.code).toBe(0);
        expect(no.stdout).toContain('+++ b/CLAUDE.md');
        expect(no.stdout).toContain('Apply these changes? [y/N]');
        expect(no.stdout).toContain('Nothing was written.');
        expect(tree(other.root)).toEqual(before);
      }
      const yes = inTerminal('y\n');
      expect(yes.code).toBe(0);
      expect(yes.stdout).toContain('Wrote 4 files');
      expect(read(other, '.claude/skills/vouch/SKILL.md')).toContain('`vouch run test --if-due`');
    } finally {
      other.remove();
    }
  });

  it('reports another tool\'s rewrite hook on Bash (rtk) as a conflict, and still sets up', () => {
    const shared = `${JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'rtk hook claude' }] }] } }, null, 2)}\n`;
    const other = claudeProject('agent-claude-rtk', { '.claude/settings.json': shared });
    try {
      const setup = json(other, ['agent', 'setup', 'claude', '--apply']);
      expect(setup.code).toBe(0);
      expect(setup.out.conflicts).toEqual([
        { code: 'rewrite-hook', path: join(other.root, '.claude', 'settings.json'), tool: 'rtk', message: expect.stringContaining('rtk also rewrites Bash commands') },
      ]);
      expect(read(other, '.claude/settings.json')).toBe(shared);
      const doctor = json(other, ['agent', 'doctor', 'claude']);
      expect(doctor.out.hosts[0].conflicts.map((conflict: any) => conflict.tool)).toEqual(['rtk']);
    } finally {
      other.remove();
    }
  });
});

// ---------------------------------------------------------------- Codex

describe('vouch agent setup/remove codex, on a real project', () => {
  it('sets up AGENTS.md, the skill and .codex/hooks.json, says to trust them in /hooks, and removes back to the same bytes', () => {
    // No final newline in AGENTS.md: removal must give back exactly that.
    const project = tempProject('agent-codex', { 'package.json': PACKAGE_JSON, 'vouch.config.json': TWO_CHECKS, 'AGENTS.md': '# Agents\n\nBe brief.' }, { git: false });
    try {
      const before = tree(project.root);
      const setup = json(project, ['agent', 'setup', 'codex', '--apply']);
      expect(setup.code, JSON.stringify(setup.out)).toBe(0);
      expectValid('agent-setup', setup.out);
      expect(setup.out.items.map((item: any) => [item.path, item.action])).toEqual([
        ['.codex/hooks.json', 'create'],
        ['AGENTS.md', 'create'],
        ['.agents/skills/vouch/SKILL.md', 'create'],
        ['.codex/config.toml', 'create'],
      ]);
      expect(setup.out.notes.join('\n')).toContain('/hooks');
      expect(setup.out.conflicts).toEqual([]);
      expect(JSON.parse(read(project, '.codex/hooks.json'))).toEqual({
        hooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `${hookProgram('vouch')} hook codex`, timeout: 30 }] }],
          SessionStart: [{ matcher: 'startup|resume|clear', hooks: [{ type: 'command', command: `${hookProgram('vouch')} hook codex`, timeout: 10 }] }],
        },
      });
      const agentsMd = read(project, 'AGENTS.md');
      expect(agentsMd.startsWith('# Agents\n\nBe brief.\n\n<!-- vouch:begin -->\n')).toBe(true);
      // Codex shares 32 KiB across every AGENTS.md: the section stays small.
      const section = findSection(agentsMd);
      expect(section.kind === 'one' && Buffer.byteLength(section.text)).toBeLessThan(1024);
      expect(read(project, '.agents/skills/vouch/SKILL.md')).toContain('`vouch run test --if-due`');
      const human = vouch(project, ['agent', 'setup', 'codex', '--apply']);
      expect(human.stdout).toContain('open /hooks in Codex and trust the vouch hooks');

      const removed = json(project, ['agent', 'remove', 'codex', '--apply']);
      expect(removed.code).toBe(0);
      expect(tree(project.root)).toEqual(before);
    } finally {
      project.remove();
    }
  });

  it('reports AGENTS.override.md, which Codex reads instead of AGENTS.md', () => {
    const project = tempProject('agent-codex-override', { 'package.json': PACKAGE_JSON, 'vouch.config.json': TWO_CHECKS, 'AGENTS.override.md': '# Local override\n' }, { git: false });
    try {
      const setup = json(project, ['agent', 'setup', 'codex', '--dry-run']);
      expect(setup.code).toBe(0);
      expect(setup.out.conflicts).toEqual([
        { code: 'agents-override', path: join(project.root, 'AGENTS.override.md'), tool: null, message: expect.stringContaining('Codex reads it instead of AGENTS.md') },
      ]);
      expect(vouch(project, ['agent', 'setup', 'codex', '--dry-run']).stdout).toContain('Conflicts:');
    } finally {
      project.remove();
    }
  });

  it('reports a rewrite hook in the [hooks] tables of .codex/config.toml, which Codex loads too', () => {
    const toml = ['model = "gpt-5"', '', '[[hooks.PreToolUse]]', 'matcher = "Bash"', '', '[[hooks.PreToolUse.hooks]]', 'type = "command"', 'command = "rtk hook codex"', ''].join('\n');
    const project = tempProject('agent-codex-toml-rtk', { 'package.json': PACKAGE_JSON, 'vouch.config.json': TWO_CHECKS, '.codex/config.toml': toml }, { git: false });
    try {
      const setup = json(project, ['agent', 'setup', 'codex', '--dry-run']);
      expect(setup.code).toBe(0);
      expect(setup.out.conflicts).toEqual([
        { code: 'rewrite-hook', path: join(project.root, '.codex', 'config.toml'), tool: 'rtk', message: expect.stringContaining('rtk also rewrites Bash commands') },
      ]);
      // A config.toml that does not parse holds no hook that runs, and is no conflict.
      project.write('.codex/config.toml', '[[hooks.PreToolUse]\ncommand = "rtk hook codex"\n');
      expect(json(project, ['agent', 'setup', 'codex', '--dry-run']).out.conflicts).toEqual([]);
    } finally {
      project.remove();
    }
  });
});

// ---------------------------------------------------------------- the MCP server

/** A user's own .mcp.json, laid out by hand, with a server and a key of their own. */
const USER_MCP_JSON = `{
  "mcpServers": {
    "github": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"] }
  },
  "note": "kept"
}
`;

/** A user's own Codex config: top-level keys, a server of their own, no final newline. */
const USER_CODEX_TOML = `model = "o3"
approval_policy = "on-request"

[mcp_servers.docs]
command = "docs-server"
args = ["--port", "0"]`;

const VOUCH_TOML_TABLE = '[mcp_servers.vouch]\ncommand = "vouch"\nargs = ["mcp"]\n# vouch:end\n';

/** Starts a registered server as the host would (no shell, from the root) and asks it to initialize. */
async function initializeServer(command: string, args: string[], cwd: string): Promise<any> {
  const child = spawn(command, args, { cwd, env: cleanEnv({ HOME: home }), stdio: ['pipe', 'pipe', 'pipe'] });
  try {
    const reply = new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
      });
      child.on('error', reject);
      child.on('exit', (code) => reject(new Error(`the server exited (${code}) before it answered`)));
    });
    const request = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'vouch-test', version: '0' } } };
    child.stdin.write(`${JSON.stringify(request)}\n`);
    return JSON.parse(await reply);
  } finally {
    child.kill();
  }
}

describe('vouch agent setup registers the MCP server', () => {
  it('Claude Code: adds mcpServers.vouch to .mcp.json, keeps the other servers and keys byte for byte, doctor reports it, remove gives back the file', () => {
    const project = claudeProject('agent-mcp-claude', { '.mcp.json': USER_MCP_JSON });
    try {
      const setup = json(project, ['agent', 'setup', 'claude', '--apply']);
      expect(setup.code, JSON.stringify(setup.out)).toBe(0);
      expectValid('agent-setup', setup.out);
      expect(setup.out.items[3]).toMatchObject({ id: 'mcp', kind: 'server', path: '.mcp.json', state: 'missing', action: 'create' });
      expect(setup.out.files.map((file: any) => [file.path, file.change])).toContainEqual(['.mcp.json', 'modify']);
      const text = read(project, '.mcp.json');
      // The user's lines, as written.
      expect(text).toContain('    "github": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"] },\n');
      expect(text).toContain('  "note": "kept"\n');
      const value = JSON.parse(text);
      expect(value.mcpServers).toEqual({ ...JSON.parse(USER_MCP_JSON).mcpServers, vouch: { command: 'vouch', args: ['mcp'] } });
      expect(value.note).toBe('kept');
      const record = JSON.parse(read(project, '.vouch/agent-claude.json'));
      expect(record.items.at(-1)).toMatchObject({ kind: 'server', path: '.mcp.json', created_file: false, created_dirs: [] });

      const doctor = json(project, ['agent', 'doctor', 'claude']);
      expectValid('agent-doctor', doctor.out);
      expect(doctor.out.hosts[0].items[3]).toMatchObject({ id: 'mcp', state: 'intact' });
      expect(doctor.out.hosts[0].mcp_server).toEqual({ path: join(project.root, '.mcp.json'), registered: true, command: 'vouch', args: ['mcp'] });
      expect(vouch(project, ['agent', 'doctor', 'claude']).stdout).toContain(`MCP server "vouch" registered in ${join(project.root, '.mcp.json')} (vouch mcp)`);

      const removed = json(project, ['agent', 'remove', 'claude', '--apply']);
      expect(removed.code).toBe(0);
      expect(removed.out.items[3]).toMatchObject({ id: 'mcp', action: 'remove' });
      expect(read(project, '.mcp.json')).toBe(USER_MCP_JSON);
      const after = json(project, ['agent', 'doctor', 'claude']);
      expect(after.out.hosts[0].mcp_server).toMatchObject({ registered: false, command: null, args: null });
      expect(vouch(project, ['agent', 'doctor', 'claude']).stdout).toContain('MCP server: not registered');
    } finally {
      project.remove();
    }
  });

  it('Claude Code: creates .mcp.json when absent; remove deletes it only while nothing of the user\'s is in it', () => {
    const project = claudeProject('agent-mcp-claude-new');
    try {
      expect(json(project, ['agent', 'setup', 'claude', '--apply']).code).toBe(0);
      expect(JSON.parse(read(project, '.mcp.json'))).toEqual({ mcpServers: { vouch: { command: 'vouch', args: ['mcp'] } } });
      expect(JSON.parse(read(project, '.vouch/agent-claude.json')).items.at(-1)).toMatchObject({ kind: 'server', created_file: true });

      // The user adds a server of their own to the file vouch created: it stays, with only vouch's entry taken out.
      const withTheirs = read(project, '.mcp.json').replace('"mcpServers": {\n', '"mcpServers": {\n    "mine": { "command": "my-server" },\n');
      project.write('.mcp.json', withTheirs);
      expect(json(project, ['agent', 'remove', 'claude', '--apply']).code).toBe(0);
      expect(JSON.parse(read(project, '.mcp.json'))).toEqual({ mcpServers: { mine: { command: 'my-server' } } });

      // Set up and removed with nothing else in it: the file goes.
      rmSync(join(project.root, '.mcp.json'));
      expect(json(project, ['agent', 'setup', 'claude', '--apply']).code).toBe(0);
      expect(json(project, ['agent', 'remove', 'claude', '--apply']).code).toBe(0);
      expect(existsSync(join(project.root, '.mcp.json'))).toBe(false);
    } finally {
      project.remove();
    }
  });

  it('a server named "vouch" the user wrote is a conflict: reported, never overwritten, never removed', () => {
    const theirs = `{\n  "mcpServers": {\n    "vouch": { "command": "npx", "args": ["vouch", "mcp"] }\n  }\n}\n`;
    const project = claudeProject('agent-mcp-claude-foreign', { '.mcp.json': theirs });
    try {
      const dry = json(project, ['agent', 'setup', 'claude', '--dry-run']);
      expect(dry.out.items[3]).toMatchObject({ id: 'mcp', state: 'edited', action: 'refused' });
      expect(dry.out.files.map((file: any) => file.path)).not.toContain('.mcp.json');

      const setup = json(project, ['agent', 'setup', 'claude', '--apply']);
      expect(setup.code).toBe(1);
      expectValid('agent-setup', setup.out);
      expect(setup.out.items.map((item: any) => item.action)).toEqual(['create', 'create', 'create', 'refused']);
      expect(setup.out.items[3].message).toContain('delete or rename that "vouch" server entry');
      expect(setup.out.conflicts).toEqual([{ code: 'mcp-server', path: join(project.root, '.mcp.json'), tool: null, message: expect.stringContaining('already registers an MCP server named "vouch"') }]);
      expect(read(project, '.mcp.json')).toBe(theirs);

      const doctor = json(project, ['agent', 'doctor', 'claude']);
      expectValid('agent-doctor', doctor.out);
      expect(doctor.out.hosts[0].mcp_server).toMatchObject({ registered: true, command: 'npx', args: ['vouch', 'mcp'] });
      expect(doctor.out.hosts[0].conflicts.map((conflict: any) => conflict.code)).toEqual(['mcp-server']);

      const removed = json(project, ['agent', 'remove', 'claude', '--apply']);
      expect(removed.code).toBe(1);
      expect(removed.out.items.map((item: any) => item.action)).toEqual(['remove', 'remove', 'remove', 'refused']);
      expect(read(project, '.mcp.json')).toBe(theirs);
    } finally {
      project.remove();
    }
  });

  it('Codex: appends a marked [mcp_servers.vouch] table to .codex/config.toml, doctor reports it, remove gives back the exact bytes', () => {
    const project = tempProject('agent-mcp-codex', { 'package.json': PACKAGE_JSON, 'vouch.config.json': TWO_CHECKS, '.codex/config.toml': USER_CODEX_TOML }, { git: false });
    try {
      const before = tree(project.root);
      const dry = json(project, ['agent', 'setup', 'codex', '--dry-run']);
      expectValid('agent-setup', dry.out);
      expect(dry.out.files.find((file: any) => file.path === '.codex/config.toml').diff).toContain('+[mcp_servers.vouch]\n');
      expect(tree(project.root)).toEqual(before);

      const setup = json(project, ['agent', 'setup', 'codex', '--apply']);
      expect(setup.code, JSON.stringify(setup.out)).toBe(0);
      expect(setup.out.items[3]).toMatchObject({ id: 'mcp', kind: 'server', path: '.codex/config.toml', action: 'create' });
      expect(setup.out.notes.join('\n')).toContain('only in a project you trust');
      const text = read(project, '.codex/config.toml');
      expect(text.startsWith(`${USER_CODEX_TOML}\n\n# vouch:begin\n`)).toBe(true);
      expect(text.endsWith(VOUCH_TOML_TABLE)).toBe(true);
      expect(text.match(/^\[mcp_servers\.vouch\]$/gm)).toHaveLength(1);

      // Setup again: nothing to do.
      expect(json(project, ['agent', 'setup', 'codex', '--apply']).out.items[3].action).toBe('unchanged');
      const doctor = json(project, ['agent', 'doctor', 'codex']);
      expectValid('agent-doctor', doctor.out);
      expect(doctor.out.hosts[0].mcp_server).toEqual({ path: join(project.root, '.codex', 'config.toml'), registered: true, command: 'vouch', args: ['mcp'] });

      expect(json(project, ['agent', 'remove', 'codex', '--apply']).code).toBe(0);
      expect(tree(project.root)).toEqual(before);
    } finally {
      project.remove();
    }
  });

  it.each([
    ['a [mcp_servers.vouch] table', '[mcp_servers.vouch]\ncommand = "npx"\nargs = ["vouch", "mcp"]\n', 'edited'],
    ['a quoted table name', '[mcp_servers."vouch"]\ncommand = "npx"\n', 'edited'],
    ['a sub-table of it', '[mcp_servers.vouch.env]\nFOO = "1"\n', 'edited'],
    ['dotted keys at the top', 'mcp_servers.vouch.command = "npx"\n', 'edited'],
    ['a key in [mcp_servers]', '[mcp_servers]\nvouch = { command = "npx", args = ["vouch", "mcp"] }\n', 'edited'],
    ['an inline mcp_servers', 'mcp_servers = { other = { command = "x" } }\n', 'invalid'],
  ])('Codex: %s is not vouch\'s, and is left exactly as it is', (_name, toml, state) => {
    const project = tempProject('agent-mcp-codex-foreign', { 'package.json': PACKAGE_JSON, 'vouch.config.json': TWO_CHECKS, '.codex/config.toml': toml }, { git: false });
    try {
      const setup = json(project, ['agent', 'setup', 'codex', '--apply']);
      expect(setup.code).toBe(1);
      expectValid('agent-setup', setup.out);
      expect(setup.out.items[3]).toMatchObject({ id: 'mcp', state, action: 'refused' });
      expect(setup.out.conflicts.map((conflict: any) => conflict.code)).toEqual(state === 'edited' ? ['mcp-server'] : []);
      expect(read(project, '.codex/config.toml')).toBe(toml);
      expect(json(project, ['agent', 'remove', 'codex', '--apply']).out.items[3].action).toBe('refused');
      expect(read(project, '.codex/config.toml')).toBe(toml);
    } finally {
      project.remove();
    }
  });

  it('Codex: a key written after vouch\'s table (which TOML would read as part of it) is refused, not hidden', () => {
    const project = tempProject('agent-mcp-codex-after', { 'package.json': PACKAGE_JSON, 'vouch.config.json': TWO_CHECKS }, { git: false });
    try {
      expect(json(project, ['agent', 'setup', 'codex', '--apply']).code).toBe(0);
      const appended = `${read(project, '.codex/config.toml')}model = "o3"\n`;
      project.write('.codex/config.toml', appended);
      const doctor = json(project, ['agent', 'doctor', 'codex']);
      expect(doctor.out.hosts[0].items[3]).toMatchObject({ state: 'invalid', problem: expect.stringContaining('part of [mcp_servers.vouch]') });
      expect(json(project, ['agent', 'remove', 'codex', '--apply']).out.items[3].action).toBe('refused');
      expect(read(project, '.codex/config.toml')).toBe(appended);
    } finally {
      project.remove();
    }
  });

  it('--no-mcp leaves the server out; one registered before stays vouch\'s, and remove takes it out', () => {
    const project = claudeProject('agent-mcp-no');
    try {
      const before = tree(project.root);
      const without = json(project, ['agent', 'setup', 'claude', '--apply', '--no-mcp']);
      expect(without.code).toBe(0);
      expectValid('agent-setup', without.out);
      expect(without.out.items[3]).toMatchObject({ id: 'mcp', state: 'missing', action: 'skipped' });
      expect(without.out.command.mcp_server).toBeNull();
      expect(without.out.notes.join('\n')).not.toContain('.mcp.json');
      expect(vouch(project, ['agent', 'setup', 'claude', '--dry-run', '--no-mcp']).stdout).not.toContain('MCP server runs');
      expect(existsSync(join(project.root, '.mcp.json'))).toBe(false);
      expect(JSON.parse(read(project, '.vouch/agent-claude.json')).items.map((item: any) => item.kind)).toEqual(['hooks', 'section', 'file']);

      expect(json(project, ['agent', 'setup', 'claude', '--apply']).out.items[3].action).toBe('create');
      const registered = read(project, '.mcp.json');
      const again = json(project, ['agent', 'setup', 'claude', '--apply', '--no-mcp']);
      expect(again.out.items[3]).toMatchObject({ state: 'intact', action: 'skipped' });
      expect(read(project, '.mcp.json')).toBe(registered);
      expect(JSON.parse(read(project, '.vouch/agent-claude.json')).items.map((item: any) => item.kind)).toContain('server');

      const misuse = vouch(project, ['agent', 'remove', 'claude', '--apply', '--no-mcp']);
      expect(misuse.code).toBe(2);
      expect(misuse.stderr).toContain('--no-mcp is an option of setup');

      expect(json(project, ['agent', 'remove', 'claude', '--apply']).code).toBe(0);
      expect(tree(project.root)).toEqual(before);
    } finally {
      project.remove();
    }
  });

  it('the registered command starts this install\'s MCP server, with the options that find a config elsewhere', async () => {
    const elsewhere = JSON.stringify({ ...JSON.parse(TWO_CHECKS), root: '..' }, null, 2);
    const project = tempProject('agent-mcp-run', { 'package.json': PACKAGE_JSON, 'config/vouch.json': elsewhere }, { git: false });
    try {
      // A config's "root" may not climb above it; the user says so with --root, and the entry carries it.
      const refused = json(project, ['agent', 'setup', 'claude', '--apply', '--config', 'config/vouch.json'], shellNone);
      expect(refused.code, JSON.stringify(refused.out)).toBe(2);
      expect(refused.out.error.code).toBe('root-outside-config');
      const setup = json(project, ['agent', 'setup', 'claude', '--apply', '--config', 'config/vouch.json', '--root', '.'], shellNone);
      expect(setup.code, JSON.stringify(setup.out)).toBe(0);
      const entry = JSON.parse(read(project, '.mcp.json')).mcpServers.vouch;
      expect(entry).toEqual({ command: process.execPath, args: [THIS_INSTALL, 'mcp', '--config', 'config/vouch.json', '--root', project.root] });
      expect(setup.out.command.mcp_server).toEqual(entry);
      expect(setup.out.notes.join('\n')).toContain(".mcp.json names this machine's vouch by path");
      const reply = await initializeServer(entry.command, entry.args, project.root);
      expect(reply).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: expect.stringContaining('vouch') } } });
    } finally {
      project.remove();
    }
  });
});

// ---------------------------------------------------------------- doctor

describe('vouch agent doctor', () => {
  it('reports the lookup, the config, the observer, each item and hook, and behavior_verified: false; it writes nothing', () => {
    const project = claudeProject('agent-doctor');
    try {
      expect(json(project, ['agent', 'setup', 'claude', '--apply']).code).toBe(0);
      const before = tree(project.root);
      const recordBefore = read(project, '.vouch/agent-claude.json');

      const doctor = json(project, ['agent', 'doctor']);
      expect(doctor.code).toBe(0);
      expectValid('agent-doctor', doctor.out);
      expect(doctor.out.behavior_verified).toBe(false);
      expect(doctor.out.config).toEqual({ valid: true, checks: ['typecheck', 'test'], error: null });
      expect(doctor.out.command).toMatchObject({ program: 'vouch', same_install: true, this_install: THIS_INSTALL });
      expect(doctor.out.observer).toEqual({ running: false, reachable: null, healthy: null, pid: null, socket: null, error: null });
      expect(doctor.out.hosts.map((host: any) => [host.host, host.recorded])).toEqual([
        ['claude', true],
        ['codex', false],
      ]);
      const claude = doctor.out.hosts[0];
      expect(claude.items.map((item: any) => [item.path, item.state])).toEqual([
        ['.claude/settings.local.json', 'intact'],
        ['CLAUDE.md', 'intact'],
        ['.claude/skills/vouch/SKILL.md', 'intact'],
        ['.mcp.json', 'intact'],
      ]);
      expect(claude.hooks).toEqual([
        { path: join(project.root, '.claude', 'settings.local.json'), event: 'PreToolUse', matcher: 'Bash', command: `${hookProgram('vouch')} hook claude`, runs: THIS_INSTALL, same_install: true },
        { path: join(project.root, '.claude', 'settings.local.json'), event: 'SessionStart', matcher: 'startup|resume|clear|compact', command: `${hookProgram('vouch')} hook claude`, runs: THIS_INSTALL, same_install: true },
      ]);
      expect(doctor.out.hosts[1].items.map((item: any) => item.state)).toEqual(['missing', 'missing', 'missing', 'missing']);

      // From a shell that finds no vouch, installed "vouch" hooks run nothing this doctor can find; hooks
      // that run the native client name this install by path, so they still run it.
      const lost = json(project, ['agent', 'doctor', 'claude'], shellNone);
      expectValid('agent-doctor', lost.out);
      expect(lost.out.hosts).toHaveLength(1);
      expect(lost.out.command.same_install).toBe(false);
      expect(lost.out.hosts[0].hooks[0]).toMatchObject(HOOK_CLIENT === null ? { runs: null, same_install: false } : { runs: THIS_INSTALL, same_install: true });
      expect(lost.out.hosts[0].items.map((item: any) => item.state)).toEqual([HOOK_CLIENT === null ? 'outdated' : 'intact', 'outdated', 'outdated', 'outdated']);

      const human = vouch(project, ['agent', 'doctor']);
      expect(human.code).toBe(0);
      expect(human.stdout).toContain('Behavior verified: no.');
      expect(human.stdout).toContain('hook PreToolUse [Bash]');

      expect(tree(project.root)).toEqual(before);
      expect(read(project, '.vouch/agent-claude.json')).toBe(recordBefore);
    } finally {
      project.remove();
    }
  });

  it('reaches a running observer over its socket', () => {
    const project = claudeProject('agent-doctor-observer');
    try {
      const start = vouch(project, ['start']);
      expect(start.code, start.stderr).toBe(0);
      try {
        const doctor = json(project, ['agent', 'doctor', 'codex']);
        expectValid('agent-doctor', doctor.out);
        expect(doctor.out.observer).toMatchObject({ running: true, reachable: true, healthy: true, error: null });
        expect(doctor.out.observer.pid).toBeGreaterThan(0);
      } finally {
        vouch(project, ['stop']);
      }
    } finally {
      project.remove();
    }
  });

  it('says why the observer cannot be looked at, in text as in JSON: a linked observer dir', () => {
    const project = claudeProject('agent-doctor-linked-observer');
    const outside = mkdtempSync(join(REPO, '.tmp', 'agent-doctor-outside-'));
    try {
      mkdirSync(join(project.root, '.vouch'), { recursive: true, mode: 0o700 });
      symlinkSync(outside, join(project.root, '.vouch', 'observer'));
      const doctor = json(project, ['agent', 'doctor', 'claude']);
      expect(doctor.code).toBe(0);
      expectValid('agent-doctor', doctor.out);
      expect(doctor.out.observer).toMatchObject({ running: false, error: expect.stringContaining('observer') });
      const human = vouch(project, ['agent', 'doctor', 'claude']);
      expect(human.code).toBe(0);
      expect(human.stdout).toContain(`Observer: not running: ${doctor.out.observer.error}`);
    } finally {
      project.remove();
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('still reports when the config does not load', () => {
    const project = claudeProject('agent-doctor-bad-config', { 'vouch.config.json': '{"schema": 1, "checks": "typecheck"}\n' });
    try {
      const doctor = json(project, ['agent', 'doctor', 'claude']);
      expect(doctor.code).toBe(0);
      expectValid('agent-doctor', doctor.out);
      expect(doctor.out.config).toMatchObject({ valid: false, checks: [], error: { code: 'config-invalid' } });
      // Setup cannot write a skill without checks: the config error, with its fix.
      const setup = json(project, ['agent', 'setup', 'claude', '--apply']);
      expect(setup.code).toBe(2);
      expect(setup.out.error.code).toBe('config-invalid');
    } finally {
      project.remove();
    }
  });
});

// ---------------------------------------------------------------- docs and schemas

describe('docs/json.md "vouch agent" and schemas/agent-*.schema.json', () => {
  const docs = readFileSync(join(REPO, 'docs', 'json.md'), 'utf8');
  const section = docs.slice(docs.indexOf('\n## vouch agent\n'));

  it('is the last section of docs/json.md, and each example in it matches its schema', () => {
    expect(section.length).toBeGreaterThan(100);
    expect(section.slice(1).includes('\n## ')).toBe(false);
    const examples = [...section.matchAll(/<!-- agent-example: ([\w-]+) -->\n```json\n([\s\S]*?)\n```/g)];
    expect(examples.map((match) => match[1]).sort()).toEqual(['agent-doctor', 'agent-remove', 'agent-setup']);
    for (const [, name, text] of examples) expectValid(name as string, JSON.parse(text as string));
  });

  it('documents every error code the agent setup code throws', () => {
    // The closed list new VouchError type-checks against; the agent commands' codes are the agent-* ones.
    const codes = VOUCH_ERROR_CODES.filter((code) => code.startsWith('agent-'));
    expect(codes.length).toBeGreaterThan(0);
    for (const code of codes) expect(section, code).toContain(`| \`${code}\` |`);
  });

  it('the schemas are closed: every object lists all its fields as required and allows no others', () => {
    const walk = (node: unknown, where: string) => {
      if (node === null || typeof node !== 'object') return;
      const object = node as { properties?: Record<string, unknown>; required?: string[]; additionalProperties?: unknown };
      if (object.properties && typeof object.properties === 'object' && !where.endsWith('/properties')) {
        expect(object.additionalProperties, where).toBe(false);
        expect([...(object.required ?? [])].sort(), where).toEqual(Object.keys(object.properties).sort());
      }
      for (const [key, child] of Object.entries(node)) walk(child, `${where}/${key}`);
    };
    for (const name of ['agent-setup', 'agent-remove', 'agent-doctor']) {
      const schema = JSON.parse(readFileSync(join(REPO, 'schemas', `${name}.schema.json`), 'utf8'));
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(schema.properties.schema.const).toBe(1);
      walk(schema, name);
    }
  });
});

// ---------------------------------------------------------------- the editing primitives, in process

describe('text edits give back the original bytes', () => {
  const entries: HookEntry[] = [
    { event: 'PreToolUse', matcher: 'Bash', handler: { type: 'command', command: 'vouch hook claude', timeout: 30 } },
    { event: 'SessionStart', matcher: 'startup', handler: { type: 'command', command: 'vouch hook claude', timeout: 10 } },
  ];
  const events = ['PreToolUse', 'SessionStart'];

  it.each([
    ['two spaces', '{\n  "model": "opus"\n}\n'],
    ['tabs and CRLF', '{\r\n\t"model": "opus",\r\n\t"hooks": {\r\n\t\t"Stop": []\r\n\t}\r\n}\r\n'],
    ['compact, no final newline', '{"model":"opus","hooks":{"PreToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"x"}]}]}}'],
    ['an existing Bash group of the user', '{\n    "hooks": {\n        "PreToolUse": [\n            { "matcher": "Bash", "hooks": [ { "type": "command", "command": "rtk hook claude" } ] }\n        ]\n    }\n}\n'],
    ['empty object', '{}\n'],
  ])('settings JSON: %s', (_name, original) => {
    const added = addVouchHooks(original, 'claude', entries);
    const value = JSON.parse(added);
    expect(value.hooks.PreToolUse.at(-1)).toEqual({ matcher: 'Bash', hooks: [entries[0]?.handler] });
    expect(value.hooks.SessionStart.at(-1)).toEqual({ matcher: 'startup', hooks: [entries[1]?.handler] });
    expect(addVouchHooks(added, 'claude', entries)).toBe(added);
    expect(removeVouchHooks(added, 'claude', events)).toBe(original);
  });

  it('settings JSON: an upgrade replaces the handler where it stands', () => {
    const added = addVouchHooks('{\n  "model": "opus"\n}\n', 'claude', entries);
    const upgraded = addVouchHooks(added, 'claude', entries.map((entry) => ({ ...entry, handler: { ...entry.handler, command: "'/opt/node' /opt/vouch/main.js hook claude" } })));
    expect(upgraded.split('\n').length).toBe(added.split('\n').length);
    expect(JSON.parse(upgraded).hooks.PreToolUse[0].hooks[0].command).toBe("'/opt/node' /opt/vouch/main.js hook claude");
    expect(removeVouchHooks(upgraded, 'claude', events)).toBe('{\n  "model": "opus"\n}\n');
  });

  it.each([['# Notes\n'], ['# Notes'], ['# Notes\n\n'], ['']])('managed section after %j', (original) => {
    const section = '<!-- vouch:begin -->\nbody\n<!-- vouch:end -->';
    const { text, separator } = appendSection(original, section);
    const found = findSection(text);
    if (found.kind !== 'one') throw new Error('section not found');
    expect(found.text).toBe(section);
    expect(removeSection(text, found, separator)).toBe(original);
  });

  it('a begin marker without its end is not a section vouch can own', () => {
    expect(findSection('a\n<!-- vouch:begin -->\nb\n').kind).toBe('broken');
    expect(findSection('a `<!-- vouch:begin -->` in prose\n').kind).toBe('none');
  });

  it('diffs name both files and mark each line', () => {
    expect(unifiedDiff('a.md', 'x\ny\n', 'x\nz\n')).toBe('--- a/a.md\n+++ b/a.md\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n');
    expect(unifiedDiff('a.md', null, 'x\n')).toBe('--- /dev/null\n+++ b/a.md\n@@ -0,0 +1,1 @@\n+x\n');
    expect(unifiedDiff('a.md', 'same\n', 'same\n')).toBe('');
  });
});
