import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseClaimToken } from '../../src/core/claimToken.js';
import { installedVersion, serve, stopServing } from '../helpers/claims.js';
import { cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';

/*
 * `vouch prove` end to end on a workspace that lints with Biome, through the
 * real TypeScript, Biome (the repo's own @biomejs/biome, which the workspace
 * resolves from inside the repo) and Vitest.
 */

const BIOME = installedVersion('@biomejs/biome');

const PRICE = `/** The price after a percentage discount, in cents. */
export function discounted(cents: number, percent: number): number {
  const off = Math.round((cents * percent) / 100);
  return Math.max(0, cents - off);
}
`;

/** The edit: a discount is clamped to 0–100%. */
const CLAMPED = `/** The price after a percentage discount, in cents; the discount is clamped to 0–100%. */
export function discounted(cents: number, percent: number): number {
  const rate = Math.min(Math.max(percent, 0), 100);
  const off = Math.round((cents * rate) / 100);
  return cents - off;
}
`;

/** The same edit, with a comparison Biome's recommended noDoubleEquals rejects; it behaves the same. */
const LOOSE = CLAMPED.replace('  const rate =', '  if (percent == 0) return cents;\n  const rate =');

/** The edit without the clamp: a 150% discount gives money back. */
const UNCLAMPED = `/** The price after a percentage discount, in cents. */
export function discounted(cents: number, percent: number): number {
  return cents - Math.round((cents * percent) / 100);
}
`;

const TEST = {
  path: 'test/discount.test.ts',
  text: `import { describe, expect, it } from 'vitest';
import { discounted } from '../src/price.js';

describe('discounted', () => {
  it('takes 10% off', () => {
    expect(discounted(1000, 10)).toBe(900);
  });
  it('never gives money back', () => {
    expect(discounted(100, 150)).toBe(0);
  });
});
`,
};

function claim(caseText: string, control: { text: string; stage: string; reason: string }) {
  return {
    project: 'tsconfig.json',
    case: { drafts: [{ path: 'src/price.ts', text: caseText }], test: TEST },
    control: { drafts: [{ path: 'src/price.ts', text: control.text }], stage: control.stage, reason: control.reason },
  };
}

let app: TempProject;
beforeAll(() => {
  app = tempProject('prove-biome', {
    'package.json': JSON.stringify({ name: 'shop', private: true, type: 'module', scripts: { typecheck: 'tsc --noEmit', lint: 'biome lint src test', test: 'vitest run' } }, null, 2),
    'biome.json': '{}\n',
    'tsconfig.json': JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: [] },
      include: ['src', 'test', 'vitest.config.ts'],
    }),
    'vitest.config.ts': "import { defineConfig } from 'vitest/config';\n\nexport default defineConfig({ test: { include: ['test/**/*.test.ts'] } });\n",
    'src/price.ts': PRICE,
    // Already on disk before any claim, and Biome rejects it: the baseline, in a file no claim touches.
    'src/legacy.ts': 'export function same(a: unknown): boolean {\n  return a == 1;\n}\n',
    'claims/clamp.json': JSON.stringify(claim(CLAMPED, { text: UNCLAMPED, stage: 'runtime', reason: 'Without the clamp a 150% discount returns -50 cents.' })),
    'claims/clamp-lint.json': JSON.stringify(claim(CLAMPED, { text: LOOSE, stage: 'lint', reason: 'A loose == comparison is what the workspace lint forbids.' })),
    'claims/loose.json': JSON.stringify(claim(LOOSE, { text: UNCLAMPED, stage: 'runtime', reason: 'Without the clamp a 150% discount returns -50 cents.' })),
  });
});
// The first prove is cold, in its own process; the rest ask one served prover (a cold prove is
// about 4 s of CPU here, a served one under 1 s), which the last test kills as a crash would.
let server: ChildProcess | undefined;
const servedProver = async () => (server ??= await serve(app));
const served = async (args: string[]) => {
  await servedProver();
  const result = app.vouch(['prove', ...args]);
  if (args.includes('--json')) expect(JSON.parse(result.stdout).cold, 'answered by the served prover').toBe(false);
  return result;
};
afterAll(async () => {
  if (server) await stopServing(server);
  app?.remove();
});

const biomeOnDisk = (...paths: string[]) =>
  spawnSync(process.execPath, [join(REPO, 'node_modules', '@biomejs', 'biome', 'bin', 'biome'), 'lint', ...paths], { cwd: app.root, encoding: 'utf8', env: cleanEnv() });

describe('prove on a Biome workspace', () => {
  it('the workspace is as described: its own biome lint fails on the baseline file only', () => {
    expect(biomeOnDisk('src/legacy.ts').status).toBe(1);
    expect(biomeOnDisk('src/price.ts').status).toBe(0);
  });

  it('a clean claim earns a receipt judged by biome@VERSION, and the baseline issue in an untouched file is not blamed on it', async () => {
    const result = app.vouch(['prove', 'claims/clamp.json', '--no-server']);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(`judged by typescript@${installedVersion('typescript')}, biome@${BIOME}, vitest@${installedVersion('vitest')}`);
    expect(result.stdout).toMatch(/^ {2}case {4}lint {5}clean/m);
    expect(result.stdout).toMatch(/^ {2}control lint {5}clean/m);
    expect(result.stdout).not.toContain('legacy.ts');
    const json = JSON.parse((await served(['claims/clamp.json', '--json'])).stdout);
    expect(result.stdout.trimEnd().split('\n').at(-1), 'the same receipt, cold or served').toBe(`receipt ${json.receipt}`);
    const token = parseClaimToken(json.receipt);
    expect(token.toolchain.linter).toEqual({ name: 'biome', version: BIOME });
    expect(json.receipt).toContain(`:biome@${BIOME}:`);
    expect(json.verdict.toolchain.linter).toEqual({ name: 'biome', version: BIOME });
    expect(json.verdict.config.files).toContain('biome.json');
    for (const check of json.verdict.checks.filter((c: any) => c.stage === 'lint')) expect(check).toMatchObject({ completed: true, issues: [] });
  });

  it('a control that breaks Biome\'s rule earns a lint receipt, located at the comparison', async () => {
    const result = await served(['claims/clamp-lint.json', '--json']);
    const json = JSON.parse(result.stdout);
    expect(typeof json.receipt, result.stdout + result.stderr).toBe('string');
    expect(json.receipt).toMatch(/^vouch-claim:[0-9a-f]{64}:lint:typescript@[^:]+:biome@/);
    const lint = json.verdict.checks.find((c: any) => c.stage === 'lint' && c.phase === 'control');
    const line = LOOSE.split('\n').findIndex((text) => text.includes('=='));
    expect(lint.issues).toEqual([
      { origin: 'claimant', stage: 'lint', path: 'src/price.ts', line: line + 1, column: LOOSE.split('\n')[line]!.indexOf('==') + 1, code: 'lint/suspicious/noDoubleEquals', message: expect.stringContaining('==') },
    ]);
  });

  it('a case that breaks Biome\'s rule fails at lint with its location, judged from memory: the file on disk is unchanged and lints clean', async () => {
    const before = readFileSync(join(app.root, 'src', 'price.ts'), 'utf8');
    const result = await served(['claims/loose.json']);
    expect(result.code, result.stdout + result.stderr).toBe(1);
    const line = LOOSE.split('\n').findIndex((text) => text.includes('==')) + 1;
    const column = LOOSE.split('\n')[line - 1]!.indexOf('==') + 1;
    expect(result.stdout).toMatch(/^ {2}case {4}lint {5}breaks: 1 claimant issue/m);
    expect(result.stdout).toContain(`    [claimant] src/price.ts:${line}:${column}: `);
    expect(result.stdout).toMatch(/why: .*case/);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('no receipt');
    // Judged from memory: the draft was never written, and what is on disk lints clean.
    expect(readFileSync(join(app.root, 'src', 'price.ts'), 'utf8')).toBe(before);
    expect(before).toBe(PRICE);
    expect(biomeOnDisk('src/price.ts').status).toBe(0);
    expect(app.git('status', '--porcelain', '--', 'src', 'test')).toBe('');
  });
});

/** The `biome lsp-proxy` processes running in the workspace, and the daemons each serves (by the private cache dir in its environment). */
function biomeProcesses(root: string): { proxies: number[]; daemons: number[]; homes: string[] } {
  const proxies: number[] = [];
  const homes: string[] = [];
  const daemons: number[] = [];
  const all = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  const cmdline = (pid: string) => {
    try {
      if (/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) return [];
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      return [];
    }
  };
  for (const pid of all) {
    const args = cmdline(pid);
    if (!args.includes('lsp-proxy')) continue;
    try {
      if (readlinkSync(`/proc/${pid}/cwd`) !== root) continue;
      const home = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((entry) => entry.startsWith('XDG_CACHE_HOME='));
      if (home !== undefined) homes.push(home.slice('XDG_CACHE_HOME='.length));
    } catch {
      continue;
    }
    proxies.push(Number(pid));
  }
  for (const pid of all) {
    const args = cmdline(pid);
    if (args.includes('__run_server') && homes.some((home) => args.some((arg) => arg.startsWith(`--log-path=${home}`)))) daemons.push(Number(pid));
  }
  return { proxies, daemons, homes };
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}

describe('Biome resident in a served prover', () => {
  it('keeps one Biome server across proves, with a daemon of its own, and leaves none behind when the prover is killed', async () => {
    // The prover the tests above asked, if they ran.
    const prover = await servedProver();
    let homes: string[] = [];
    try {
      const first = JSON.parse(app.vouch(['prove', 'claims/clamp.json', '--json']).stdout);
      expect(first.cold).toBe(false);
      const running = biomeProcesses(app.root);
      homes = running.homes;
      expect(homes).toHaveLength(1);
      expect(running.proxies).toHaveLength(1);
      expect(running.daemons).toHaveLength(1);
      const second = JSON.parse(app.vouch(['prove', 'claims/loose.json', '--json']).stdout);
      expect(second.receipt).toBeNull();
      const third = JSON.parse(app.vouch(['prove', 'claims/clamp.json', '--json']).stdout);
      expect(third.receipt).toBe(first.receipt);
      // The same proxy and daemon judged all three.
      expect(biomeProcesses(app.root)).toEqual(running);
    } finally {
      const exited = new Promise((resolve) => prover.once('exit', resolve));
      prover.kill('SIGKILL');
      await exited;
      server = undefined;
    }
    // Its proxy sees its input close and exits; the daemon, started to stop when its last client goes, follows.
    expect(await until(() => { const left = biomeProcesses(app.root); return left.proxies.length === 0 && left.daemons.length === 0; }, 10_000)).toBe(true);
    // A killed prover cannot remove its private folder (docs/claims.md, Limits); the test does.
    for (const home of homes) rmSync(home, { recursive: true, force: true });
    expect(existsSync(join(app.root, '.vouch', 'prove.sock'))).toBe(true);
  });
});
