import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { expectCurrent, statusOf, type Json } from '../helpers/answers.js';
import { claudeBash } from '../helpers/hookInput.js';
import { CLI, cleanEnv, tempProject, type TempProject } from '../helpers/project.js';

/*
 * A package manager's settings in the environment (npm_config_*, pnpm_*,
 * yarn_*, bun_*, in any case) change what a script run does, so a check's
 * context records them: a receipt made without one is not CURRENT with it
 * set, for the hook as for `vouch status`. Typed in front of a command, the
 * part runs as typed (test/fixtures/agent-corpus.ts has the forms).
 */

const projects: TempProject[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.remove();
});

const FILES: Record<string, string> = {
  'vouch.config.json': JSON.stringify({ schema: 1, packageManager: 'npm', checks: [{ name: 'test', kind: 'test', script: 'test' }] }, null, 2) + '\n',
  'package.json': JSON.stringify({ name: 'fx', version: '1.0.0', private: true, scripts: { test: 'node check.cjs' } }, null, 2) + '\n',
  'check.cjs': 'process.exit(0);\n',
  'src/a.js': 'export const a = 1;\n',
};

function project(): TempProject {
  const p = tempProject('pm-settings', FILES);
  projects.push(p);
  return p;
}

/** The hook's decision for a command: deny, a rewrite, or '' for run as typed. */
function decision(p: TempProject, command: string, env: NodeJS.ProcessEnv): string {
  const result = spawnSync(process.execPath, [CLI, 'hook', 'claude'], { cwd: p.root, input: JSON.stringify(claudeBash(p.root, command)), env, encoding: 'utf8', timeout: 60_000 });
  expect(result.status, result.stderr).toBe(0);
  if (result.stdout === '') return '';
  const out = (JSON.parse(result.stdout) as Json).hookSpecificOutput;
  return out.permissionDecision === 'deny' ? 'deny' : `rewrite: ${out.updatedInput.command}`;
}

describe("a package manager's settings", () => {
  it('set in the environment: a receipt made without them is STALE, and the hook does not deny', () => {
    const p = project();
    const plain = cleanEnv();
    expect(p.vouch(['run', 'test']).code).toBe(0);
    expectCurrent(p, 'test');
    expect(decision(p, 'npm test', plain)).toBe('deny');

    for (const [name, value] of [
      ['npm_config_workspace', 'packages/a'],
      ['NPM_CONFIG_SCRIPT_SHELL', '/bin/sh'],
      ['Npm_Config_Ignore_Scripts', 'true'],
      ['pnpm_config_filter', 'a'],
      ['YARN_IGNORE_SCRIPTS', 'true'],
      ['BUN_CONFIG_VERBOSE_FETCH', '1'],
      ['COREPACK_ENABLE_STRICT', '0'],
    ] as const) {
      const env = cleanEnv({ [name]: value });
      const status = statusOf(p, 'test', env);
      expect(status.freshness, name).toBe('STALE');
      expect(decision(p, 'npm test', env), name).toMatch(/^rewrite: /);
    }

    // Run with the setting, the receipt is CURRENT with it, and STALE again without it.
    const set = cleanEnv({ npm_config_script_shell: '/bin/sh' });
    expect(p.vouch(['run', 'test'], { env: set }).code).toBe(0);
    expectCurrent(p, 'test', set);
    expect(decision(p, 'npm test', set)).toBe('deny');
    expect(statusOf(p, 'test', plain).freshness).toBe('STALE');
    expect(decision(p, 'npm test', plain)).toMatch(/^rewrite: /);
  });

  it('typed in front of the command: it runs as typed, even when the receipt is CURRENT', () => {
    const p = project();
    const env = cleanEnv();
    expect(p.vouch(['run', 'test']).code).toBe(0);
    expect(decision(p, 'npm test', env)).toBe('deny');
    for (const command of ['npm_config_workspace=packages/a npm test', 'NPM_CONFIG_IGNORE_SCRIPTS=true npm test 2>&1 | tail -5', 'YARN_IGNORE_SCRIPTS=1 npm test', 'COREPACK_ENABLE_STRICT=0 npm test', 'export npm_config_workspace=packages/a; npm test']) {
      expect(decision(p, command, env), command).toBe('');
    }
  });
});
