import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceAvailability } from '../../src/exec/trace/tracer.js';
import { configText, statusOf } from '../helpers/answers.js';
import { ContentStore, installPackage, relativeLink, virtualStorePath, type StorePackage } from '../helpers/pnpmStore.js';
import { cleanEnv, REPO, spawnVouch, tempProject, type TempProject } from '../helpers/project.js';

/*
 * Traced receipts and changes made while the check runs (issue 17: "a path the run did not write
 * that changed while it ran makes the receipt not reusable"). A traced run is fingerprinted after
 * the check exits, so what it read must still be there then, or the receipt must say it cannot
 * tell. Each test lets the check read its inputs, changes one of them while the check still runs,
 * and then holds the receipt to the ground truth: a CURRENT receipt must be one whose check, run
 * again, prints what the traced run printed. Not CURRENT is always allowed.
 *
 * The changes are the ones that leave the change time of what the path now names in the past:
 * a link retargeted at an older file, a directory swapped for an older one by two renames, as an
 * installer or a `git checkout` of a directory does; and, for contrast, edits in place.
 */

const availability = traceAvailability();
const TITLE = availability.available ? 'traced receipts and changes while the check runs' : `traced receipts and changes while the check runs (SKIPPED: tracing cannot run here: ${availability.code}: ${availability.message})`;

const pkg = (version: string, value: string): StorePackage => ({
  name: 'pkg',
  version,
  files: {
    'package.json': `{ "name": "pkg", "version": "${version}", "main": "index.js" }\n`,
    'index.js': `module.exports = '${value}';\n`,
  },
});
const PKG_1 = pkg('1.0.0', 'one');
const PKG_2 = pkg('2.0.0', 'two');

/** Reads its inputs, says so at `marker` (outside the root: an output, not an input), then works on for a while unless told not to. */
const program = (marker: string) => `import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const seen = [
  readFileSync('src/file.txt', 'utf8'),
  readFileSync('data/active.txt', 'utf8'),
  readFileSync('cfg/app.json', 'utf8'),
  readFileSync(${JSON.stringify(marker.replace(/marker$/, 'outside/settings.json'))}, 'utf8'),
  require('pkg'),
];
if (!process.env.CAMPAIGN_NO_WAIT) {
  // Works on until the test has made its change next to it and says so with SIGUSR2: a signal,
  // not a file, so that the wait reads nothing.
  let timer;
  const told = new Promise((resolve) => {
    process.once('SIGUSR2', resolve);
    timer = setTimeout(resolve, 30_000);
  });
  writeFileSync(${JSON.stringify(marker)}, String(process.pid));
  await told;
  clearTimeout(timer);
}
process.stdout.write(JSON.stringify({ digest: createHash('sha256').update(JSON.stringify(seen)).digest('hex') }) + '\\n');
`;

interface Scenario {
  name: string;
  /** Made before the run: the older things a change swaps in. */
  prepare?(root: string, scratch: string): void;
  change(root: string, scratch: string): void;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'a read file edited in place',
    change: (root) => writeFileSync(join(root, 'src/file.txt'), 'edited while the check ran\n'),
  },
  {
    name: 'a read file replaced by renaming an older file onto it',
    prepare: (root) => writeFileSync(join(root, 'variants/replacement.txt'), 'an older file\n'),
    change: (root) => renameSync(join(root, 'variants/replacement.txt'), join(root, 'src/file.txt')),
  },
  {
    name: 'a followed link retargeted at an older file with other bytes',
    change: (root) => relativeLink(join(root, 'data/active.txt'), join(root, 'variants/two.txt')),
  },
  {
    name: 'the directory holding a read file swapped for an older one (two renames)',
    prepare(root) {
      mkdirSync(join(root, 'cfg-next'));
      writeFileSync(join(root, 'cfg-next/app.json'), '{ "app": "next" }\n');
    },
    change(root) {
      renameSync(join(root, 'cfg'), join(root, 'cfg-previous'));
      renameSync(join(root, 'cfg-next'), join(root, 'cfg'));
    },
  },
  {
    name: 'a package link retargeted at another installed version',
    prepare: (root, scratch) => installPackage(root, new ContentStore(join(scratch, 'store')), PKG_2, { dependents: [] }),
    change: (root) => relativeLink(join(root, 'node_modules/pkg'), join(root, virtualStorePath(PKG_2))),
  },
  {
    name: 'node_modules swapped for an older install (two renames)',
    prepare(root, scratch) {
      // Installed elsewhere first: the links inside node_modules are relative, so it moves whole.
      const staging = join(root, 'next-install');
      installPackage(staging, new ContentStore(join(scratch, 'store')), PKG_2);
      renameSync(join(staging, 'node_modules'), join(root, 'node_modules-next'));
      rmSync(staging, { recursive: true, force: true });
    },
    change(root) {
      renameSync(join(root, 'node_modules'), join(root, 'node_modules-previous'));
      renameSync(join(root, 'node_modules-next'), join(root, 'node_modules'));
    },
  },
  {
    name: 'a file read outside the root edited in place',
    change: (_root, scratch) => writeFileSync(join(scratch, 'outside/settings.json'), '{ "edited": true }\n'),
  },
];

describe(TITLE, () => {
  const made: { project: TempProject; scratch: string }[] = [];

  beforeAll(() => {
    mkdirSync(join(REPO, '.tmp'), { recursive: true });
  });

  afterAll(() => {
    for (const { project, scratch } of made) {
      project.remove();
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  for (const scenario of SCENARIOS) {
    it.skipIf(!availability.available)(`${scenario.name}: the receipt is not CURRENT, or its check prints the same again`, async () => {
      const scratch = mkdtempSync(join(REPO, '.tmp', 'traced-during-outside-'));
      const marker = join(scratch, 'marker');
      mkdirSync(join(scratch, 'outside'));
      writeFileSync(join(scratch, 'outside/settings.json'), '{ "outside": 1 }\n');
      const project = tempProject('traced-during', {
        'check.mjs': program(marker),
        'vouch.config.json': configText([{ name: 'check', kind: 'custom', command: ['node', 'check.mjs'], mode: 'traced' }]),
        '.gitignore': 'node_modules/\n',
        'src/file.txt': 'the source\n',
        'variants/one.txt': 'variant one\n',
        'variants/two.txt': 'variant two\n',
        'cfg/app.json': '{ "app": "first" }\n',
      });
      made.push({ project, scratch });
      const root = project.root;
      mkdirSync(join(root, 'data'));
      symlinkSync('../variants/one.txt', join(root, 'data/active.txt'));
      installPackage(root, new ContentStore(join(scratch, 'store')), PKG_1);
      scenario.prepare?.(root, scratch);
      // The state dir made first, and everything above left behind the run's clock slack.
      expect(project.vouch(['status']).code).not.toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 150));

      const child = spawnVouch(root, ['run', 'check']);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      const deadline = Date.now() + 60_000;
      const pid = async () => {
        for (;;) {
          const said = existsSync(marker) ? Number(readFileSync(marker, 'utf8')) : 0;
          if (said > 0 || Date.now() > deadline) return said;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      };
      const check = await pid();
      scenario.change(root, scratch);
      if (check > 0) process.kill(check, 'SIGUSR2');
      expect(await exited, `${stdout}\n${stderr}`).toBe(0);
      const printed = JSON.parse(stdout.split('\n').find((line) => line.startsWith('{"digest"')) ?? '{}').digest;
      expect(printed, stdout).toMatch(/^[0-9a-f]{64}$/);

      const found = statusOf(project, 'check');
      if (found.freshness !== 'CURRENT') return;
      const again = spawnSync(process.execPath, ['check.mjs'], { cwd: root, env: cleanEnv({ CAMPAIGN_NO_WAIT: '1' }), encoding: 'utf8' });
      const now = JSON.parse(again.stdout.trim() || '{}').digest;
      expect(now, `CURRENT, but the check now prints another digest than its traced run did: a false CURRENT (${scenario.name}); status: ${JSON.stringify(found)}`).toBe(printed);
    });
  }
});
