import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { configText, type Json } from '../helpers/answers.js';
import { expectCurrentIn, inProcess, statusIn, type AsyncProject } from '../helpers/inProcess.js';
import { cleanEnv, tempProject } from '../helpers/project.js';

/*
 * The negative campaign: changes outside a check's inputs must leave its
 * receipt CURRENT and reusable. A tool that goes STALE on these forces reruns
 * nobody needs, and agents learn to ignore it. vouch runs in process
 * (test/helpers/inProcess.ts), each command with a session of its own.
 */

const projects: AsyncProject[] = [];
afterEach(() => {
  for (const project of projects.splice(0)) project.remove();
});

const config = configText;

const CHECK = { name: 'check', kind: 'custom', command: ['node', 'check.js'], env: ['MY_SETTING'] };
const TOOL = { name: 'tool', kind: 'test', command: ['node', 'check.js', 'vitest'] };
const TYPECHECK = { name: 'typecheck', kind: 'typecheck', command: ['node', 'check.js'], inputs: ['**/*.{ts,js,json}'] };

const FILES: Record<string, string> = {
  'vouch.config.json': config([CHECK, TOOL, TYPECHECK]),
  '.gitignore': 'node_modules/\ndist/\n',
  'package.json': JSON.stringify({ name: 'fx', version: '1.0.0', private: true }, null, 2) + '\n',
  'check.js': 'process.exit(0);\n',
  'README.md': '# fixture\n',
  'src/a.ts': 'export const a: number = 1;\n',
  'src/b.js': 'export const b = 2;\n',
  'node_modules/dep/package.json': '{ "name": "dep", "version": "1.0.0" }\n',
  'node_modules/dep/index.js': 'module.exports = 42;\n',
};

/** Explain must agree: CURRENT, and nothing named as changed. */
async function expectNothingChanged(p: AsyncProject, check: string, env?: NodeJS.ProcessEnv) {
  const out = await p.json(['explain', check], env ? { env } : {});
  expect(out.check.freshness).toBe('CURRENT');
  expect(out.check.reuse_eligible).toBe(true);
  expect({ inputs: out.input_changes, context: out.context_changes, definition: out.definition_changes }).toEqual({
    inputs: [],
    context: [],
    definition: [],
  });
}

async function setUp(name: string, checks: string[], before?: (p: AsyncProject) => void): Promise<{ p: AsyncProject; runId: string }> {
  const p = inProcess(tempProject(name, FILES));
  projects.push(p);
  before?.(p);
  const ran = await p.vouch(['run', ...checks]);
  expect(ran.code, ran.stderr).toBe(0);
  const status = await expectCurrentIn(p, checks[0] ?? 'check');
  return { p, runId: status.receipt.run_id };
}

interface Case {
  name: string;
  check?: string;
  /** Prepares the project before the run. */
  before?(p: AsyncProject): void;
  change(p: AsyncProject): NodeJS.ProcessEnv | void;
}

const cases: Case[] = [
  {
    name: 'a file written under the state dir (.vouch/junk)',
    change: (p) => p.write('.vouch/junk', 'not an input\n'),
  },
  {
    name: 'an ignored build output (dist/out.js, dist/ in .gitignore)',
    change: (p) => p.write('dist/out.js', 'console.log("built");\n'),
  },
  {
    name: 'an unrelated env variable (FOO_UNRELATED=1)',
    change: () => ({ FOO_UNRELATED: '1' }),
  },
  {
    name: 'a VITEST_ variable for a check whose command does not mention vitest',
    change: () => ({ VITEST_FOO: '1' }),
  },
  {
    name: 'touching a source file (times only, same content)',
    change: (p) => {
      const later = new Date(Date.now() + 5_000);
      utimesSync(join(p.root, 'src/b.js'), later, later);
    },
  },
  {
    name: 'rewriting a source file with its own bytes',
    change: (p) => {
      const path = join(p.root, 'src/b.js');
      writeFileSync(path, readFileSync(path));
    },
  },
  {
    name: "editing vouch.config.json so that only another check's definition changes",
    change: (p) => p.write('vouch.config.json', config([CHECK, { ...TOOL, command: ['node', 'check.js', 'vitest', '--other'] }, TYPECHECK])),
  },
  {
    name: 'a file outside the narrowed inputs (README.md for the typecheck check)',
    check: 'typecheck',
    change: (p) => p.write('README.md', '# fixture, edited\n'),
  },
  {
    name: 'a tool cache write under node_modules/.vite/vitest/ and node_modules/.vite-temp/',
    change: (p) => {
      p.write('node_modules/.vite/vitest/da39a3ee5e6b4b0d3255bfef95601890afd80709/results.json', '{"version":"4.1.12","results":{}}');
      p.write('node_modules/.vite-temp/vitest.config.ts.timestamp-1.mjs', 'export default {};\n');
    },
  },
  {
    name: 'committing an untracked input with the same bytes (git index and objects only)',
    before: (p) => p.write('src/untracked.js', 'export const u = 3;\n'),
    change: (p) => {
      p.git('add', '-A');
      p.git('commit', '-qm', 'second');
      p.git('branch', 'other');
    },
  },
];

describe('changes outside the inputs leave the check CURRENT and reusable', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const check = c.check ?? 'check';
    const { p, runId } = await setUp('negative', [check], c.before);
    const extra = c.change(p);
    const env = extra ? cleanEnv(extra) : undefined;
    const status = await expectCurrentIn(p, check, env);
    expect(status.receipt.run_id).toBe(runId);
    // A second look, now from the stat cache the first one refreshed.
    await expectCurrentIn(p, check, env);
    await expectNothingChanged(p, check, env);
  });

  it("editing another check's definition does make that other check STALE", async () => {
    // The counterpart of the config case above: the edit was real, and was seen where it applies.
    const { p } = await setUp('negative-other', ['check', 'tool']);
    p.write('vouch.config.json', config([CHECK, { ...TOOL, command: ['node', 'check.js', 'vitest', '--other'] }, TYPECHECK]));
    await expectCurrentIn(p, 'check');
    expect((await statusIn(p, 'tool')).freshness).toBe('STALE');
  });

  it('re-running status many times keeps the answer CURRENT and records nothing', async () => {
    const { p, runId } = await setUp('negative-repeat', ['check']);
    for (let i = 0; i < 8; i++) expect((await expectCurrentIn(p, 'check')).receipt.run_id).toBe(runId);
    const all = await p.json(['status']);
    expect(all.checks.find((c: Json) => c.name === 'check').freshness).toBe('CURRENT');
    const log = await p.json(['log']);
    expect(log.receipts.map((r: Json) => r.run_id)).toEqual([runId]);
    await expectNothingChanged(p, 'check');
  });
});
