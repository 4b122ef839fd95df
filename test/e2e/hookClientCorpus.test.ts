import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CORPUS } from '../fixtures/agent-corpus.js';
import { hookInProcess, type HookAnswer } from '../helpers/corpusHook.js';
import { claudeBash } from '../helpers/hookInput.js';
import { inProcess } from '../helpers/inProcess.js';
import { killHookServers } from '../helpers/hookServers.js';
import { CLI, cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';
import { mulberry32, testSeed } from '../helpers/seed.js';

/*
 * The agent corpus, and seeded chains of its parts, through the native hook
 * client (answered by a resident server) and through the Node hook, in one
 * real project whose checks are in every state a decision meets: CURRENT PASS,
 * CURRENT FAIL, STALE and never run, for Claude Code, Codex and shadow mode in
 * turn. Every answer must be the same, byte for byte. By default every sixth corpus command and 40 chains (about 20 s);
 * VOUCH_HOOK_CLIENT_CALLS=N takes the whole corpus and N chains.
 *
 * The Node hook answers every command in this process (test/helpers/corpusHook.ts: what the
 * `vouch hook` command does with its stdin, without a Node start per command), and a few of them,
 * one of each kind of answer for each host and more spread over the list, also as the process
 * `node dist/bin/main.js hook …`, whose answers must be the same: the process path stays compared
 * with the client's.
 */

const CLIENT = join(REPO, 'build', 'Release', 'vouch_hook');
const available = process.platform === 'linux' && existsSync(CLIENT);
const FULL = process.env.VOUCH_HOOK_CLIENT_CALLS !== undefined;
const CHAINS = FULL ? Number(process.env.VOUCH_HOOK_CLIENT_CALLS) : 40;
const CORPUS_TAKEN = FULL ? CORPUS : CORPUS.filter((_, index) => index % 6 === 0);
const seed = testSeed(import.meta.url, 19);

const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const PACKAGE = {
  name: 'corpus',
  version: '1.0.0',
  private: true,
  scripts: { typecheck: 'node ok.cjs', lint: 'node ok.cjs', test: 'node fail.cjs', build: 'node ok.cjs', audit: 'node ok.cjs', 'lint:fix': 'node ok.cjs' },
};
const CHECKS = [
  { name: 'typecheck', kind: 'typecheck', script: 'typecheck' },
  { name: 'lint', kind: 'lint', script: 'lint' },
  { name: 'test', kind: 'test', script: 'test' },
  { name: 'build', kind: 'build', script: 'build', inputs: ['src/**'] },
  { name: 'audit', kind: 'custom', script: 'audit' },
  { name: 'format', kind: 'lint', command: ['node', 'ok.cjs'], env: ['FORMAT_MODE'] },
];

async function project(): Promise<TempProject> {
  const p = tempProject('hook-client-corpus', {
    'vouch.config.json': `${JSON.stringify({ schema: 1, packageManager: 'npm', checks: CHECKS }, null, 2)}\n`,
    'package.json': `${JSON.stringify(PACKAGE, null, 2)}\n`,
    '.gitignore': 'node_modules/\n',
    'ok.cjs': 'console.log("fine");\n',
    'fail.cjs': 'console.log("1 failed"); process.exit(1);\n',
    'src/a.js': 'export const a = 1;\n',
    'README.md': '# corpus\n',
  });
  cleanups.push(() => p.remove());
  // typecheck, lint, format: CURRENT PASS; test: CURRENT FAIL; build: STALE (an input edited after its run); audit: never run.
  // Run in this process (test/helpers/inProcess.ts): the setup, not what is compared.
  const inside = inProcess(p);
  for (const check of ['typecheck', 'lint', 'format', 'test', 'build']) await inside.vouch(['run', check]);
  p.write('src/a.js', 'export const a = 2;\n');
  // lint and typecheck read every file by default: run them again so they stay CURRENT after the edit.
  for (const check of ['typecheck', 'lint', 'format', 'test']) await inside.vouch(['run', check]);
  return p;
}

/** Seeded chains of corpus parts, with the joiners and prefixes agents type. */
function chains(count: number): string[] {
  const random = mulberry32(seed.value);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const parts = CORPUS.map((item) => item.command);
  const joiners = [' && ', '; ', ' || ', ' | ', '\n'];
  const prefixes = ['', '', '', 'VOUCH_FORCE=1 ', 'FORMAT_MODE=strict ', 'npm_config_workspace=packages/a ', 'cd src && '];
  return Array.from({ length: count }, () => {
    const length = 1 + Math.floor(random() * 3);
    return Array.from({ length }, () => pick(prefixes) + pick(parts)).reduce((chain, part) => `${chain}${pick(joiners)}${part}`);
  });
}

type Answer = HookAnswer;

// A deny says how long ago its receipt's run was, which moves between two calls: the one part not compared.
const ageless = (stdout: string) => stdout.replace(/\b\d+ (s|sec|secs|min|mins|h|hours?) ago\b/g, 'N ago');

function call(argv: string[], cwd: string, env: NodeJS.ProcessEnv, stdin: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: ageless(Buffer.concat(out).toString('utf8')), stderr: Buffer.concat(err).toString('utf8') }));
    child.stdin.end(stdin);
  });
}

/** The Node hook is run as a process on this many of the commands (test/helpers/corpusHook.ts answers them all in this process). */
const PROCESS_SAMPLES = 8;

/** The indexes to ask the process: the first of each group (host and kind of answer), then evenly spread ones, PROCESS_SAMPLES at least. */
function processSamples(groups: string[]): number[] {
  const chosen = new Set<number>();
  const seen = new Set<string>();
  groups.forEach((group, index) => {
    if (seen.has(group)) return;
    seen.add(group);
    chosen.add(index);
  });
  const target = Math.min(PROCESS_SAMPLES, groups.length);
  for (let k = 0; chosen.size < target; k++) chosen.add(k < target ? Math.floor((k * groups.length) / target) : k - target);
  return [...chosen].sort((a, b) => a - b);
}

async function pool<T, R>(items: T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}

describe.skipIf(!available)('the native hook client on the agent corpus', () => {
  it(`answers ${CORPUS_TAKEN.length} corpus commands and ${CHAINS} seeded chains (seed ${seed.value}, ${seed.source}) exactly as the Node hook`, { timeout: 600_000 }, async () => {
    const p = await project();
    const runtime = mkdtempSync(join(REPO, '.tmp', 'hook-corpus-run-'));
    chmodSync(runtime, 0o700);
    const log = join(runtime, 'hook.log');
    const env = cleanEnv({ XDG_RUNTIME_DIR: runtime, VOUCH_HOOK_SERVER_IDLE_MS: '120000', VOUCH_HOOK_LOG: log });
    delete env._;
    cleanups.push(() => {
      killHookServers(runtime);
      rmSync(runtime, { recursive: true, force: true });
    });
    const commands = [...CORPUS_TAKEN.map((item) => item.command), ...chains(CHAINS)];
    // Claude Code, Codex and shadow mode in turn: each host's answer, and shadow's silence, through one server.
    const HOSTS = [['claude'], ['codex'], ['claude', '--shadow']];
    const inputs = commands.map((command, index) => ({ args: HOSTS[index % HOSTS.length]!, stdin: JSON.stringify(claudeBash(p.root, command)) }));
    // One at a time: each call sets VOUCH_NATIVE in this process as its env has it.
    const viaNode = await pool(inputs, 1, async (input) => {
      // As the client's fallback calls it: reached through the client, whose rewrites run through it.
      const answer = await hookInProcess([...input.args, '--client'], input.stdin, p.root, env);
      return { ...answer, stdout: ageless(answer.stdout) };
    });
    const kinds = viaNode.map((answer) => (answer.stdout === '' ? 'pass' : answer.stdout.includes('"permissionDecision":"deny"') ? 'deny' : answer.stdout.includes('updatedInput') ? 'rewrite' : 'other'));
    console.log(`hook client corpus: ${commands.length} commands; Node answered ${['deny', 'rewrite', 'pass', 'other'].map((kind) => `${kinds.filter((item) => item === kind).length} ${kind}`).join(', ')}`);
    // The Node hook as a process, on a few: the first of each kind of answer for each host, then
    // more spread evenly over the list, up to PROCESS_SAMPLES; each must answer as in this process.
    const sampled = processSamples(inputs.map((input, index) => `${input.args.join(' ')}\0${kinds[index]}`));
    const viaProcess = await pool(sampled, 2, (index) => call([process.execPath, CLI, 'hook', ...inputs[index]!.args, '--client'], p.root, env, inputs[index]!.stdin));
    const processDiffering = sampled.filter((index, at) => JSON.stringify(viaProcess[at]) !== JSON.stringify(viaNode[index])).map((index) => `${inputs[index]!.args.join(' ')}: ${commands[index]}`);
    expect(processDiffering, 'commands the Node hook process answered otherwise than the Node hook in this process').toEqual([]);
    for (const kind of ['deny', 'rewrite', 'pass']) expect(sampled.some((index) => kinds[index] === kind), `a process asked answered ${kind}`).toBe(true);
    for (const args of HOSTS) expect(sampled.some((index) => inputs[index]!.args.join(' ') === args.join(' ')), `a process asked was hook ${args.join(' ')}`).toBe(true);
    // Then through the client. Its first call has no server: it answers through Node and starts one.
    await call([CLIENT, process.execPath, CLI, 'hook', 'claude'], p.root, env, inputs[0]!.stdin);
    const serverUp = () => existsSync(join(runtime, 'vouch')) && readdirSync(join(runtime, 'vouch')).some((name) => name.endsWith('.sock'));
    for (let waited = 0; !serverUp(); waited += 50) {
      expect(waited, 'a hook server within 15 s').toBeLessThan(15_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    const loggedBefore = logLines(log).length;
    // Eight at once: one server answers callers side by side.
    const viaClient = await pool(inputs, 8, (input) => call([CLIENT, process.execPath, CLI, 'hook', ...input.args], p.root, env, input.stdin));
    const differing = commands.filter((_, index) => JSON.stringify(viaNode[index]) !== JSON.stringify(viaClient[index]));
    expect(differing, 'commands answered differently').toEqual([]);

    // Not a vacuous equality: every kind of answer is among them.
    const count = (kind: string) => kinds.filter((item) => item === kind).length;
    expect(count('deny')).toBeGreaterThan(5);
    expect(count('rewrite')).toBeGreaterThan(5);
    expect(count('pass')).toBeGreaterThan(5);
    expect(viaNode.some((answer) => answer.stdout.includes('FAILED'))).toBe(true);
    // And the server answered every one of them: the client ran no Node hook (the hook log marks a server's answers).
    const clientLines = logLines(log).slice(loggedBefore);
    expect(clientLines).toHaveLength(commands.length);
    expect(clientLines.filter((line) => line.server === true)).toHaveLength(commands.length);
  });
});

function logLines(file: string): Array<{ server?: boolean }> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}
