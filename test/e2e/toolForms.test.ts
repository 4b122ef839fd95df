import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { expectCurrent, type Json } from '../helpers/answers.js';
import { CLI, cleanEnv, tempProject, type TempProject } from '../helpers/project.js';

/*
 * A tool's forms documented as the same run (src/agents/toolEquivalents.ts), with the real
 * vitest: a check whose script is bare `vitest` runs once under vouch (no terminal on stdin), so
 * its receipt answers for a typed `npx vitest run`; a form that is not the same run runs as typed.
 */

const projects: TempProject[] = [];
afterEach(() => {
  for (const project of projects.splice(0)) project.remove();
});

const FILES: Record<string, string> = {
  'vouch.config.json': JSON.stringify({ schema: 1, packageManager: 'npm', checks: [{ name: 'test', kind: 'test', script: 'test' }] }, null, 2) + '\n',
  'package.json': JSON.stringify({ name: 'fx', version: '1.0.0', private: true, type: 'module', scripts: { test: 'vitest' } }, null, 2) + '\n',
  '.gitignore': 'node_modules/\n',
  // Its own config: vitest would otherwise find the nearest one above.
  'vitest.config.js': "export default { test: { include: ['src/**/*.test.js'] } };\n",
  'src/sum.test.js': "import { expect, test } from 'vitest';\ntest('adds', () => expect(1 + 1).toBe(2));\n",
};

function claudeHook(p: TempProject, command: string): Json {
  const input = { session_id: 's', transcript_path: '/tmp/t.jsonl', cwd: p.root, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } };
  const result = spawnSync(process.execPath, [CLI, 'hook', 'claude'], { cwd: p.root, input: JSON.stringify(input), env: cleanEnv(), encoding: 'utf8', timeout: 60_000 });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout === '' ? null : JSON.parse(result.stdout);
}

describe('vitest: a check of bare `vitest` answers for `vitest run`', () => {
  it('runs once under vouch; `npx vitest run` is denied on its receipt, `vitest --run` too; other forms run as typed', () => {
    const p = tempProject('tool-forms-vitest', FILES);
    projects.push(p);
    // No terminal on stdin: one run, not watch mode (which would never end).
    const ran = p.vouch(['run', 'test'], { timeout: 90_000 });
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    const runId = expectCurrent(p, 'test').receipt.run_id as string;

    for (const command of ['npx vitest run 2>&1 | tail -20', 'vitest --run', 'pnpm exec vitest run', 'npm test']) {
      const out = claudeHook(p, command);
      expect(out?.hookSpecificOutput?.permissionDecision, command).toBe('deny');
      expect(out.hookSpecificOutput.permissionDecisionReason, command).toContain(runId);
    }
    for (const command of ['npx vitest run src/sum.test.js', 'vitest watch', 'vitest run --watch', 'vitest dev', 'vitest --reporter=dot', 'npx vitest related src/sum.test.js']) {
      expect(claudeHook(p, command), command).toBeNull();
    }

    // Stale: the typed form is rewritten to the check, which runs the script's own form.
    p.write('src/sum.test.js', "import { expect, test } from 'vitest';\ntest('adds', () => expect(2 + 2).toBe(4));\n");
    const rewritten = claudeHook(p, 'npx vitest run 2>&1 | tail -20');
    expect(rewritten.hookSpecificOutput.updatedInput.command).toMatch(/ run test --if-due 2>&1 \| tail -20$/);
  });
});
