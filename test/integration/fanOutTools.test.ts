import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fanOutOf } from '../../src/agents/fanOut.js';
import { CORPUS, TARGETS, WORKSPACE, type FanOutCase } from '../fixtures/fanout-corpus.js';

/*
 * The corpus against the real tools: each command the corpus resolves to
 * packages (in the base target) is run by pnpm, npm, yarn 1 or turbo (a dry
 * run) on a real copy of the corpus workspace, offline, and the packages
 * whose scripts ran must be exactly the answer. bun and nx are not installed
 * here; their cases rest on their docs.
 *
 * Every case's answer is checked against the corpus. The tools themselves confirm the corpus,
 * not vouch's code, and pinned tools answer the same until the corpus or the lockfile changes:
 * the suite runs them on every third case of each tool (about 30 s), and
 * VOUCH_FANOUT_TOOLS=all on every case.
 */

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = join(REPO, 'node_modules', '.bin');
const ENV = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1', npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', NO_UPDATE_NOTIFIER: '1' };

type Tool = 'pnpm' | 'npm' | 'yarn' | 'turbo';

let base = '';

function writeWorkspace(dir: string, packageManager: string | null, dependency: string): void {
  const root: Record<string, unknown> = { name: 'demo-root', version: '1.0.0', private: true, workspaces: WORKSPACE.globs, scripts: { check: 'echo RAN:demo-root:check' } };
  if (packageManager) root.packageManager = packageManager;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify(root));
  for (const pkg of WORKSPACE.packages) {
    mkdirSync(join(dir, pkg.dir, 'src'), { recursive: true });
    const scripts = Object.fromEntries(Object.keys(pkg.scripts).map((script) => [script, `echo RAN:${pkg.name}:${script}`]));
    const dependencies = Object.fromEntries(pkg.dependsOn.map((name) => [name, dependency]));
    writeFileSync(join(dir, pkg.dir, 'package.json'), JSON.stringify({ name: pkg.name, version: '1.0.0', dependencies, scripts }));
  }
}

function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(command, args, { cwd, env: ENV, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** Which tool runs a corpus command here, and with what argv; null for the ones not run. */
function plan(entry: FanOutCase): { tool: Tool; command: string; args: string[] } | null {
  const argv = entry.command.split(' ');
  const at = argv.indexOf('turbo');
  if (at !== -1) return { tool: 'turbo', command: join(BIN, 'turbo'), args: [...argv.slice(at + 1), '--dry=json'] };
  if (argv.includes('nx')) return null;
  if (argv[0] === 'pnpm') return { tool: 'pnpm', command: join(BIN, 'pnpm'), args: argv.slice(1) };
  if (argv[0] === 'npm') return { tool: 'npm', command: 'npm', args: argv.slice(1) };
  if (argv[0] === 'yarn' && !argv.includes('foreach')) return { tool: 'yarn', command: join(BIN, 'yarn'), args: argv.slice(1) };
  return null;
}

const CASES = CORPUS.filter((entry) => (entry.target ?? 'base') === 'base' && entry.expected?.kind === 'packages' && plan(entry) !== null);
const EVERY_CASE = process.env.VOUCH_FANOUT_TOOLS === 'all';
/** The cases a real tool runs: every third of each tool's, or all of them. */
const TOOL_RUNS = new Set(
  EVERY_CASE ? CASES : (['pnpm', 'npm', 'yarn', 'turbo'] as const).flatMap((tool) => CASES.filter((entry) => plan(entry)!.tool === tool).filter((_, index) => index % 3 === 0)),
);

/** Whether the tool is installed here, asked once per tool: `npm --version` is a Node start each time. */
const installed = new Map<Tool, boolean>();
function available(tool: Tool): boolean {
  let found = installed.get(tool);
  if (found === undefined) installed.set(tool, (found = tool === 'npm' ? spawnSync('npm', ['--version'], { env: ENV }).status === 0 : existsSync(join(BIN, tool))));
  return found;
}

describe('the fan-out corpus against the real tools', () => {
  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'vouch-fanout-tools-'));
    writeWorkspace(join(base, 'pnpm'), 'pnpm@10.34.9', 'workspace:*');
    writeFileSync(join(base, 'pnpm', 'pnpm-workspace.yaml'), `packages:\n${WORKSPACE.globs.map((glob) => `  - ${glob}\n`).join('')}`);
    writeFileSync(join(base, 'pnpm', 'turbo.json'), JSON.stringify({ tasks: { test: {}, lint: {}, clean: {}, build: { dependsOn: ['^build'] } } }));
    writeWorkspace(join(base, 'npm'), null, '1.0.0');
    writeWorkspace(join(base, 'yarn'), null, '1.0.0');
    spawnSync('git', ['init', '-q'], { cwd: join(base, 'pnpm'), env: ENV });
    if (available('pnpm')) await run(join(BIN, 'pnpm'), ['install', '--offline'], join(base, 'pnpm'));
    if (available('npm')) await run('npm', ['install', '--offline'], join(base, 'npm'));
    if (available('yarn')) await run(join(BIN, 'yarn'), ['install', '--offline'], join(base, 'yarn'));
  });
  afterAll(() => {
    if (base) rmSync(base, { recursive: true, force: true });
  });

  it('covers each tool', () => {
    for (const tool of ['pnpm', 'npm', 'yarn', 'turbo'] as const) {
      expect(CASES.filter((entry) => plan(entry)!.tool === tool).length, tool).toBeGreaterThanOrEqual(5);
      expect([...TOOL_RUNS].filter((entry) => plan(entry)!.tool === tool).length, `${tool} runs`).toBeGreaterThanOrEqual(2);
    }
  });

  it.each(CASES.map((entry) => [`${entry.cwd ? `in ${entry.cwd}: ` : ''}${entry.command}`, entry] as const))('%s', async (_name, entry) => {
    const how = plan(entry)!;
    if (!available(how.tool)) return;
    const answer = fanOutOf(entry.command.split(' '), { ...TARGETS.base, cwdDir: entry.cwd ?? '' });
    expect(answer).toEqual(entry.expected);
    if (!TOOL_RUNS.has(entry)) return;
    const dir = how.tool === 'turbo' ? 'pnpm' : how.tool;
    const result = await run(how.command, how.args, join(base, dir, entry.cwd ?? ''));
    expect(result.code, result.stderr).toBe(0);
    let ran: string[];
    if (how.tool === 'turbo') {
      const dry = JSON.parse(result.stdout) as { tasks: Array<{ taskId: string; command: string }> };
      ran = dry.tasks.filter((task) => task.command !== '<NONEXISTENT>').map((task) => task.taskId.slice(0, task.taskId.lastIndexOf('#')));
    } else {
      ran = [...new Set([...`${result.stdout}\n${result.stderr}`.matchAll(/RAN:((?:@demo\/)?[a-z-]+):/g)].map((match) => match[1]!))];
    }
    const expected = entry.expected?.kind === 'packages' ? entry.expected.packages : [];
    expect(ran.sort()).toEqual([...expected].sort());
  });
});
