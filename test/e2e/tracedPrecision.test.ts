import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceAvailability } from '../../src/exec/trace/tracer.js';
import { configText, type Json } from '../helpers/answers.js';
import { inProcess, statusIn, type AsyncProject } from '../helpers/inProcess.js';
import { until } from '../helpers/observer.js';
import { ContentStore, installPackage, lockfileText, relativeLink, virtualStorePath, type StorePackage } from '../helpers/pnpmStore.js';
import { CLI, cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';
import { newestChangeMs, SETTLE_MS } from '../helpers/settle.js';

/*
 * Precision of traced receipts on a pnpm workspace (issue 17, "Precision"): a real `tsc --noEmit`
 * over packages/a and packages/b, whose dependency is installed as pnpm installs it (hard links
 * into a store outside the root, reached through symbolic links). After one traced run, nothing
 * the compiler never read may take its receipt out of CURRENT: README.md, CLAUDE.md, `vouch agent
 * setup`, a second traced check writing its own cache under node_modules/, another project
 * installed from the same store. An edit to a file it read makes it STALE, and the reason names
 * the file.
 *
 * Runs and status questions go through vouch in this process (test/helpers/inProcess.ts): each
 * traced run is strace and the check, child processes all the same. `vouch agent setup` keeps a
 * process of its own: what it installs names the script that process runs.
 */

const availability = traceAvailability();
const TITLE = availability.available ? 'traced receipts on a pnpm workspace' : `traced receipts on a pnpm workspace (SKIPPED: tracing cannot run here: ${availability.code}: ${availability.message})`;

const TSC = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');


const DEP: StorePackage = {
  name: 'dep',
  version: '1.0.0',
  files: {
    'package.json': JSON.stringify({ name: 'dep', version: '1.0.0', main: 'index.js', types: 'index.d.ts' }, null, 2) + '\n',
    'index.js': 'exports.double = (n) => n * 2;\n',
    'index.d.ts': 'export declare function double(n: number): number;\n',
  },
};

const DEP_2: StorePackage = {
  ...DEP,
  version: '2.0.0',
  files: {
    ...DEP.files,
    'package.json': JSON.stringify({ name: 'dep', version: '2.0.0', main: 'index.js', types: 'index.d.ts' }, null, 2) + '\n',
    'index.d.ts': 'export declare function double(n: number): string;\n',
  },
};

const A_SOURCE = "import { double } from 'dep';\n\nexport const a: number = double(2);\n";

/** A second traced check: reads the cache its last run left, then writes its own under node_modules/.cache. */
const CACHE_CHECK = `import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
mkdirSync('node_modules/.cache/other', { recursive: true });
let runs = 0;
try {
  runs = JSON.parse(readFileSync('node_modules/.cache/other/state.json', 'utf8')).runs;
} catch {}
writeFileSync('node_modules/.cache/other/state.json', JSON.stringify({ runs: runs + 1 }));
writeFileSync('node_modules/.cache/other/result.txt', 'ok\\n');
readFileSync('node_modules/.cache/other/result.txt', 'utf8');
`;

/** A third traced check: says it started (outside the root), then works for a while, so that something can happen next to the project meanwhile. */
const slowCheck = (marker: string) => `import { readFileSync, writeFileSync } from 'node:fs';
readFileSync('packages/a/src/index.ts', 'utf8');
writeFileSync(${JSON.stringify(marker)}, 'started');
await new Promise((resolve) => setTimeout(resolve, 1500));
`;

const FILES: Record<string, string> = {
  'pnpm-workspace.yaml': "packages:\n  - 'packages/*'\n",
  'package.json': JSON.stringify({ name: 'ws', private: true, scripts: { typecheck: 'tsc --noEmit' } }, null, 2) + '\n',
  '.gitignore': 'node_modules/\n',
  'README.md': '# workspace\n',
  'CLAUDE.md': '# notes for agents\n',
  // lib without the DOM, whose declarations are most of what the default lib of es2022 costs: a
  // traced tsc still reads its lib files from outside the root and checks them, in less than
  // half the CPU (1.6 s against 4.1 s a run).
  'tsconfig.json':
    JSON.stringify(
      {
        compilerOptions: { strict: true, noEmit: true, target: 'es2022', lib: ['es2022'], module: 'esnext', moduleResolution: 'bundler', types: [], skipLibCheck: false },
        include: ['packages/*/src'],
      },
      null,
      2,
    ) + '\n',
  'packages/a/package.json': JSON.stringify({ name: '@ws/a', version: '1.0.0', types: 'src/index.ts', dependencies: { dep: '^1.0.0' } }, null, 2) + '\n',
  'packages/a/src/index.ts': A_SOURCE,
  'packages/b/package.json': JSON.stringify({ name: '@ws/b', version: '1.0.0', dependencies: { '@ws/a': 'workspace:*' } }, null, 2) + '\n',
  'packages/b/src/index.ts': "import { a } from '@ws/a';\n\nexport const b: number = a + 1;\n",
  'cache.mjs': CACHE_CHECK,
  'vouch.config.json': configText([
    { name: 'typecheck', kind: 'typecheck', command: ['node', TSC, '--noEmit', '-p', 'tsconfig.json'], mode: 'traced' },
    { name: 'cache', kind: 'custom', command: ['node', 'cache.mjs'], mode: 'traced' },
    { name: 'slow', kind: 'custom', command: ['node', 'slow.mjs'], mode: 'traced' },
    { name: 'typecheck-dots', kind: 'typecheck', command: ['node', TSC, '--noEmit', '-p', 'tsconfig.dots.json'], mode: 'traced' },
    { name: 'typecheck-star', kind: 'typecheck', command: ['node', TSC, '--noEmit', '-p', 'tsconfig.star.json'], mode: 'traced' },
  ]),
  // An include that can match a name starting with a dot: that check's listings keep dot names.
  'tsconfig.dots.json': JSON.stringify({ extends: './tsconfig.json', include: ['packages/*/src', '.generated/**/*'] }, null, 2) + '\n',
  // The usual spelling: its `*.ts` also matches a file named `.ts`, and no other dot name.
  'tsconfig.star.json': JSON.stringify({ extends: './tsconfig.json', include: ['packages/*/src/**/*.ts'] }, null, 2) + '\n',
};

describe(TITLE, () => {
  let project: TempProject;
  /** The project's vouch commands, in this process. */
  let vouch: AsyncProject;
  let scratch: string;
  let store: ContentStore;
  let home: string;
  let shell: string;

  const status = (check = 'typecheck'): Promise<Json> => statusIn(vouch, check);
  const expectCurrent = async (check = 'typecheck', after = '') => {
    const found = await status(check);
    expect(found.freshness, `${check} after ${after}: ${JSON.stringify(found.reasons)}`).toBe('CURRENT');
    expect(found.result).toBe('PASS');
    expect(found.reuse_eligible).toBe(true);
  };
  /**
   * A traced run started in this process can begin within milliseconds of the test's last write,
   * inside the window where a file read whose ctime is that close to the start counts as changed
   * during the run (as a CLI process, a Node start later, it could not). So a run here first waits
   * until nothing in the project or the scratch dir (the preload, the store) changed within
   * SETTLE_MS: the edit is then one made before the run, as each test means it.
   */
  const settled = async () => {
    const newest = Math.max(newestChangeMs(project.root), newestChangeMs(scratch));
    await until(() => Date.now() > newest + SETTLE_MS, `the last edit to be ${SETTLE_MS} ms old`, 5_000, 5);
  };
  const runIn = async (args: string[], options?: { env?: NodeJS.ProcessEnv }) => {
    await settled();
    return vouch.vouch(args, options);
  };
  const run = async (check: string) => {
    const result = await runIn(['run', check]);
    expect(result.code, `vouch run ${check}:\n${result.stdout}\n${result.stderr}`).toBe(0);
  };
  /** Each test starts from a CURRENT receipt of its own, whatever the test before it left. */
  const freshReceipt = async (check = 'typecheck') => {
    if ((await status(check)).freshness !== 'CURRENT') await run(check);
    await expectCurrent(check, 'a fresh run');
  };

  beforeAll(async () => {
    if (!availability.available) return;
    mkdirSync(join(REPO, '.tmp'), { recursive: true });
    scratch = mkdtempSync(join(REPO, '.tmp', 'traced-precision-outside-'));
    store = new ContentStore(join(scratch, 'pnpm-store'));
    home = join(scratch, 'home');
    mkdirSync(home);
    // A login shell stand-in that finds this vouch, as test/e2e/agentSetup.test.ts's does.
    shell = join(scratch, 'shell');
    writeFileSync(shell, `#!/bin/sh\necho '${realpathSync(CLI)}'\n`);
    chmodSync(shell, 0o755);
    project = tempProject('traced-precision', { ...FILES, 'slow.mjs': slowCheck(join(scratch, 'slow-started')), 'pnpm-lock.yaml': lockfileText({ '.': [], 'packages/a': ['dep'], 'packages/b': ['@ws/a'] }, [DEP]) });
    vouch = inProcess(project);
    installPackage(project.root, store, DEP, { dependents: ['packages/a'] });
    relativeLink(join(project.root, 'packages/b/node_modules/@ws/a'), join(project.root, 'packages/a'));
    // The state dir made first, and the root's change time left behind the run's clock slack:
    // the first `vouch run` in a fresh project makes it, and tsc lists the root.
    expect((await vouch.vouch(['status'])).code).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 150));
    await run('typecheck');
  });

  afterAll(() => {
    project?.remove();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it.skipIf(!availability.available)('a traced run of tsc leaves a CURRENT traced receipt that read the sources and the installed types', async () => {
    await expectCurrent('typecheck', 'the run');
    const inputs = await vouch.json(['explain', 'typecheck', '--inputs', '--all']);
    const text = JSON.stringify(inputs);
    expect(text).toContain('packages/a/src/index.ts');
    expect(text).toContain('packages/b/src/index.ts');
    expect(text).toContain('node_modules/.pnpm/dep@1.0.0/node_modules/dep/index.d.ts');
  });

  it.skipIf(!availability.available)('editing README.md leaves it CURRENT', async () => {
    await freshReceipt();
    writeFileSync(join(project.root, 'README.md'), '# workspace\n\nNow with more words.\n');
    await expectCurrent('typecheck', 'README.md edited');
  });

  it.skipIf(!availability.available)('editing CLAUDE.md leaves it CURRENT', async () => {
    await freshReceipt();
    writeFileSync(join(project.root, 'CLAUDE.md'), '# notes for agents\n\nRun vouch first.\n');
    await expectCurrent('typecheck', 'CLAUDE.md edited');
  });

  // tsc lists the project's root (strace shows it, include notwithstanding), and setup adds
  // .claude/ and .mcp.json there: names tsc cannot include (core/listingNames.ts).
  it.skipIf(!availability.available)('running `vouch agent setup claude` leaves it CURRENT', async () => {
    await freshReceipt();
    const before = readFileSync(join(project.root, 'CLAUDE.md'), 'utf8');
    const setup = project.vouch(['agent', 'setup', 'claude', '--apply'], { env: cleanEnv({ HOME: home, SHELL: shell }) });
    expect(setup.code, `${setup.stdout}\n${setup.stderr}`).toBe(0);
    // Setup wrote the project's agent files: the case the issue names.
    expect(readFileSync(join(project.root, 'CLAUDE.md'), 'utf8')).not.toBe(before);
    await expectCurrent('typecheck', 'vouch agent setup claude');
  });

  it.skipIf(!availability.available)('a new .ts file in a directory tsc listed makes it STALE, naming the listing; a dot file or a Markdown file there does not', async () => {
    await freshReceipt();
    const src = join(project.root, 'packages/a/src');
    writeFileSync(join(src, '.notes'), 'scratch\n');
    writeFileSync(join(src, 'NOTES.md'), '# notes\n');
    mkdirSync(join(project.root, '.cache'));
    await expectCurrent('typecheck', 'a dot file, a Markdown file and a dot directory added');
    writeFileSync(join(src, 'extra.ts'), 'export const extra = 1;\n');
    const found = await status();
    expect(found.freshness, JSON.stringify(found.reasons)).toBe('STALE');
    expect(found.reasons.map((r: Json) => r.message).join('\n')).toContain('packages/a/src: entries TypeScript can include added, removed or changed kind');
    for (const name of ['extra.ts', '.notes', 'NOTES.md']) rmSync(join(src, name));
    rmSync(join(project.root, '.cache'), { recursive: true });
    await expectCurrent('typecheck', 'the new files removed');
  });

  it.skipIf(!availability.available)('a check whose include can match a dot name keeps that name: a new .generated/ makes it STALE, and tsc does compile it; .idea/ does not', async () => {
    await freshReceipt('typecheck-dots');
    mkdirSync(join(project.root, '.idea'));
    try {
      await expectCurrent('typecheck-dots', 'a .idea/ its include cannot match');
    } finally {
      rmSync(join(project.root, '.idea'), { recursive: true, force: true });
    }
    const generated = join(project.root, '.generated');
    mkdirSync(generated);
    writeFileSync(join(generated, 'wrong.ts'), "export const wrong: number = 'not a number';\n");
    try {
      const found = await status('typecheck-dots');
      expect(found.freshness, JSON.stringify(found.reasons)).toBe('STALE');
      // The ground truth: the compiler reads the new directory, and fails on it.
      const rerun = await runIn(['run', 'typecheck-dots']);
      expect(rerun.code, rerun.stdout).not.toBe(0);
      expect(rerun.stdout + rerun.stderr).toContain('wrong.ts');
      // The other check's include cannot reach it.
      await expectCurrent('typecheck', 'a .generated/ its include cannot match');
    } finally {
      rmSync(generated, { recursive: true, force: true });
    }
  });

  it.skipIf(!availability.available)('a check whose include is `**/*.ts` keeps only the dot name `.ts`: a file named .ts makes it STALE, and tsc does compile it; other dot names do not', async () => {
    await freshReceipt('typecheck-star');
    const src = join(project.root, 'packages/a/src');
    mkdirSync(join(project.root, '.idea'));
    writeFileSync(join(project.root, '.prettierrc.json'), '{}\n');
    writeFileSync(join(src, '.notes.ts.bak'), 'scratch\n');
    try {
      await expectCurrent('typecheck-star', 'dot names its include cannot match');
      writeFileSync(join(src, '.ts'), "export const wrong: number = 'not a number';\n");
      const found = await status('typecheck-star');
      expect(found.freshness, JSON.stringify(found.reasons)).toBe('STALE');
      expect(found.reasons.map((r: Json) => r.message).join('\n')).toContain('packages/a/src: entries TypeScript can include added, removed or changed kind');
      // The ground truth: the compiler takes the file in, and fails on it.
      const rerun = await runIn(['run', 'typecheck-star']);
      expect(rerun.code, rerun.stdout).not.toBe(0);
      expect(rerun.stdout + rerun.stderr).toContain('src/.ts');
    } finally {
      for (const name of ['.ts', '.notes.ts.bak']) rmSync(join(src, name), { force: true });
      rmSync(join(project.root, '.idea'), { recursive: true, force: true });
      rmSync(join(project.root, '.prettierrc.json'), { force: true });
    }
    await run('typecheck-star');
    await expectCurrent('typecheck-star', 'the file named .ts removed, and a run');
  });

  it.skipIf(!availability.available)('with a preload in NODE_OPTIONS (code that ran before tsc in its process), its listings keep every name', async () => {
    const preload = join(scratch, 'preload.cjs');
    writeFileSync(preload, "require('node:fs').readdirSync(process.cwd());\n");
    const env = cleanEnv({ NODE_OPTIONS: `--require ${preload}` });
    const ran = await runIn(['run', 'typecheck'], { env });
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
    expect((await statusIn(vouch, 'typecheck', env)).freshness).toBe('CURRENT');
    const seen = join(project.root, '.seen-by-the-preload');
    mkdirSync(seen);
    try {
      const found = await statusIn(vouch, 'typecheck', env);
      expect(found.freshness, JSON.stringify(found.reasons)).toBe('STALE');
      expect(found.reasons.map((r: Json) => r.message).join('\n')).toContain('.: entries added, removed or changed kind');
    } finally {
      rmSync(seen, { recursive: true, force: true });
    }
  });

  it.skipIf(!availability.available)('a second traced check writing its own cache under node_modules/ leaves it CURRENT, and itself CURRENT', async () => {
    await freshReceipt();
    await run('cache');
    await expectCurrent('cache', 'its own run');
    await expectCurrent('typecheck', "the cache check's run");
    await run('cache');
    await expectCurrent('cache', 'its second run');
    await expectCurrent('typecheck', "the cache check's second run");
  });

  it.skipIf(!availability.available)('installing another project from the same store (link counts and change times of the installed files) leaves it CURRENT', async () => {
    await freshReceipt();
    await freshReceipt('cache');
    const other = join(scratch, 'other-project');
    installPackage(other, store, DEP);
    installPackage(join(scratch, 'third-project'), store, DEP);
    await expectCurrent('typecheck', 'two other projects installed from the same store');
    await expectCurrent('cache', 'two other projects installed from the same store');
  });

  it.skipIf(!availability.available)('an edit to a source it read makes it STALE, naming the file; the revert makes it CURRENT again', async () => {
    await freshReceipt();
    await freshReceipt('cache');
    const path = join(project.root, 'packages/a/src/index.ts');
    writeFileSync(path, A_SOURCE.replace('double(2)', 'double(3)'));
    const found = await status();
    expect(found.freshness, JSON.stringify(found.reasons)).toBe('STALE');
    const reasons = found.reasons.map((r: Json) => `${r.code}: ${r.message}`).join('\n');
    expect(reasons).toContain('inputs-changed');
    expect(reasons).toContain('packages/a/src/index.ts');
    await expectCurrent('cache', 'an edit to a source only typecheck read');
    writeFileSync(path, A_SOURCE);
    await expectCurrent('typecheck', 'the edit reverted');
  });

  it.skipIf(!availability.available)('a file created next to the project while a check runs (in a directory the check only looked up) leaves its receipt CURRENT', async () => {
    // Every Node program resolves its working directory's real path, looking up each directory
    // above the root: a file created in one of them (a shell's history in the home directory, a
    // sibling checkout) changes no answer the check got.
    const marker = join(scratch, 'slow-started');
    rmSync(marker, { force: true });
    // The run in this process: the traced check is its child, and this test waits alongside.
    await settled();
    const ran = vouch.vouch(['run', 'slow']);
    let ended = false;
    const end = () => (ended = true);
    void ran.then(end, end);
    while (!existsSync(marker) && !ended) await new Promise((resolve) => setTimeout(resolve, 10));
    if (!existsSync(marker)) {
      const early = await ran;
      expect.fail(`the run ended (exit ${early.code}) before its check said it started:\n${early.stdout}\n${early.stderr}`);
    }
    const sibling = mkdtempSync(join(dirname(project.root), 'traced-precision-sibling-'));
    try {
      const result = await ran;
      expect(result.code, result.stdout + result.stderr).toBe(0);
      await expectCurrent('slow', 'a sibling of the root created while it ran');
    } finally {
      rmSync(sibling, { recursive: true, force: true });
    }
  });

  it.skipIf(!availability.available)('a new version of the installed dependency makes it STALE', async () => {
    await freshReceipt();
    const dir = installPackage(project.root, store, DEP_2, { dependents: ['packages/a'] });
    const found = await status();
    expect(found.freshness, JSON.stringify(found.reasons)).toBe('STALE');
    expect(found.reasons.map((r: Json) => r.message).join('\n')).toContain('packages/a/node_modules/dep');
    // The new version's types fail the check: the receipt's PASS was about the old one.
    const rerun = await runIn(['run', 'typecheck']);
    expect(rerun.code, rerun.stdout).not.toBe(0);
    expect(dir).toBe(join(project.root, virtualStorePath(DEP_2)));
    relativeLink(join(project.root, 'packages/a/node_modules/dep'), join(project.root, virtualStorePath(DEP)));
  });
});
