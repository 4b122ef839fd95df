import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configText } from './answers.js';
import { ContentStore, installPackage, lockfileText, type StorePackage } from './pnpmStore.js';
import { cleanEnv, REPO, tempProject, type TempProject } from './project.js';

/**
 * The traced campaign's project: a git repository whose one check, `node check.mjs`, touches
 * what it depends on in every way a real check does, and prints a digest of all it saw. Two
 * runs that print the same digest saw the same things: the ground truth a CURRENT is held to.
 *
 * What check.mjs does, in order (each line of its `seen` list names one):
 * - reads a tracked source (src/main.txt);
 * - reads two files git ignores (.env, config.local.json);
 * - reads a file outside the root (OUTSIDE/settings.json, a sibling directory);
 * - lists a directory (plugins/), names and types, and reads one file in it;
 * - probes lib/helper.ts, lib/helper.mjs, lib/helper.js with existsSync and reads the first found;
 * - resolves require('./lib/mod'), which stats lib/mod and lib/mod.js (absent) before lib/mod.json;
 * - follows a symbolic link (realpathSync of data/active.txt) and reads it; reads another link's
 *   target (readlinkSync of data/pointer, which dangles);
 * - stats data/sized.txt and notes its size, without reading it;
 * - executes bin/helper.sh (a shell script: its mode matters as much as its bytes);
 * - reads its cache node_modules/.cache/mine/prev, which an earlier run left, then rewrites it;
 * - writes node_modules/.cache/mine/x, then reads it back (its own cache);
 * - requires `pkg`, installed as pnpm installs it: node_modules/pkg a link into
 *   node_modules/.pnpm/pkg@1.0.0/node_modules/pkg, whose files are hard links into a store outside
 *   the root; pkg's index.js requires './util' (stat util, then util.js).
 */

export const CHECK_NAME = 'check';

export const PKG_100: StorePackage = {
  name: 'pkg',
  version: '1.0.0',
  files: {
    'package.json': '{ "name": "pkg", "version": "1.0.0", "main": "index.js" }\n',
    'index.js': "const util = require('./util');\nmodule.exports = { version: require('./package.json').version, value: util.value };\n",
    'util.js': "exports.value = 'one';\n",
  },
};

export const PKG_110: StorePackage = {
  name: 'pkg',
  version: '1.1.0',
  files: {
    'package.json': '{ "name": "pkg", "version": "1.1.0", "main": "index.js" }\n',
    'index.js': PKG_100.files['index.js']!,
    'util.js': "exports.value = 'two';\n",
  },
};

/** What the check leaves in its read-before-write cache: an earlier run's, read by the next. */
export const PREV_CACHE = 'cache v1\n';

export function checkProgram(outside: string): string {
  return `// The traced campaign's check (test/helpers/tracedFixture.ts says what it touches and why).
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { relative } from 'node:path';

const require = createRequire(import.meta.url);
const OUTSIDE = ${JSON.stringify(outside)};
const seen = [];
const hash = (text) => createHash('sha256').update(text).digest('hex').slice(0, 16);
const read = (path) => {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    return '<' + error.code + '>';
  }
};
const here = (path) => relative(process.cwd(), path);
const note = (label, value) => seen.push(label + ' ' + value);

note('source', hash(read('src/main.txt')));
note('env', hash(read('.env')));
note('local', hash(read('config.local.json')));
note('outside', hash(read(OUTSIDE + '/settings.json')));
// Names and types, as a glob that keeps only files (or skips links) decides from the listing alone.
const kind = (entry) => (entry.isDirectory() ? '/' : entry.isSymbolicLink() ? '@' : '');
for (const entry of readdirSync('plugins', { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) note('plugin', entry.name + kind(entry));
note('plugin-a', hash(read('plugins/a.txt')));
const helper = ['.ts', '.mjs', '.js'].map((ext) => 'lib/helper' + ext).find((path) => existsSync(path));
note('helper', helper + ' ' + hash(read(helper ?? 'lib/none')));
let mod = 'unresolved';
try {
  mod = here(require.resolve('./lib/mod'));
} catch {}
note('mod', mod + ' ' + hash(read(mod)));
note('active', here(realpathSync('data/active.txt')) + ' ' + hash(read('data/active.txt')));
note('pointer', readlinkSync('data/pointer'));
// Its size alone, never its bytes: as a cache of sizes and mtimes decides (eslint --cache, make).
note('sized', statSync('data/sized.txt').size);
let helped;
try {
  helped = execFileSync('./bin/helper.sh', { encoding: 'utf8' }).trim();
} catch (error) {
  helped = '<' + (error.code ?? error.status) + '>';
}
note('exec', helped);
mkdirSync('node_modules/.cache/mine', { recursive: true });
note('prev', hash(read('node_modules/.cache/mine/prev')));
writeFileSync('node_modules/.cache/mine/prev', ${JSON.stringify(PREV_CACHE)});
writeFileSync('node_modules/.cache/mine/x', 'derived ' + hash(seen.join('\\n')) + '\\n');
note('own', hash(read('node_modules/.cache/mine/x')));
const pkg = require('pkg');
note('pkg', pkg.version + ' ' + pkg.value + ' ' + here(realpathSync(require.resolve('pkg'))));
process.stdout.write(JSON.stringify({ digest: hash(seen.join('\\n')), seen }) + '\\n');
`;
}

export const OWN_CACHES = ['node_modules/.cache/mine/prev', 'node_modules/.cache/mine/x'];

export const HELPER_SCRIPT = '#!/bin/sh\necho helper one\n';

/** The files of the project, the check aside. */
export const PROJECT_FILES: Record<string, string> = {
  '.gitignore': 'node_modules/\n.env\nconfig.local.json\n',
  'package.json': JSON.stringify({ name: 'campaign', private: true, dependencies: { pkg: '^1.0.0' } }, null, 2) + '\n',
  'README.md': '# campaign fixture\n',
  'src/main.txt': 'the tracked source\n',
  '.env': 'SECRET_TOKEN=one\n',
  'config.local.json': '{ "local": true }\n',
  'plugins/a.txt': 'plugin a\n',
  'plugins/b.txt': 'plugin b\n',
  'lib/helper.js': 'export const helper = 1;\n',
  'lib/mod.json': '{ "mod": 1 }\n',
  'variants/one.txt': 'variant one\n',
  // The same bytes as one.txt: a link retargeted here changes no content, only the path it resolves to.
  'variants/same.txt': 'variant one\n',
  'variants/two.txt': 'variant two\n',
  'docs/guide.md': '# guide\n',
  'bin/helper.sh': HELPER_SCRIPT,
  'data/sized.txt': 'twenty-one bytes ...\n',
};

export const OUTSIDE_FILES: Record<string, string> = {
  'settings.json': '{ "outside": 1 }\n',
  'unread.txt': 'nobody reads this\n',
};

export interface ProgramRun {
  code: number | null;
  digest: string;
  seen: string[];
  stderr: string;
}

export interface TracedFixture {
  project: TempProject;
  root: string;
  /** A sibling directory the check reads a file from. */
  outside: string;
  /** The pnpm store, outside the root. */
  store: ContentStore;
  /** Where another checkout installs from the same store. */
  otherCheckout: string;
  /** The check's own caches, root-relative: what a run rewrites from what it read. */
  ownCaches: readonly string[];
  /** Runs check.mjs as the check runs it, untraced: the ground truth. */
  runProgram(): ProgramRun;
  remove(): void;
}

export function lockfileFor(pkg: StorePackage): string {
  return lockfileText({ '.': [pkg.name] }, [pkg]);
}

export function writeOutside(outside: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(outside, path, '..'), { recursive: true });
    writeFileSync(join(outside, path), content);
  }
}

/** Builds the campaign's project, store and outside directory, and runs the check once untraced so that its read-before-write cache is an earlier run's. */
export function tracedFixture(name = 'traced-campaign'): TracedFixture {
  // A fresh clone has no .tmp/ until some test makes it.
  mkdirSync(join(REPO, '.tmp'), { recursive: true });
  const scratch = mkdtempSync(join(REPO, '.tmp', `${name}-outside-`));
  const outside = join(scratch, 'outside');
  const store = new ContentStore(join(scratch, 'pnpm-store'));
  const otherCheckout = join(scratch, 'other-checkout');
  writeOutside(outside, OUTSIDE_FILES);
  const project = tempProject(name, {
    ...PROJECT_FILES,
    'check.mjs': checkProgram(outside),
    'pnpm-lock.yaml': lockfileFor(PKG_100),
    'vouch.config.json': configText([{ name: CHECK_NAME, kind: 'custom', command: ['node', 'check.mjs'], mode: 'traced' }]),
  });
  const root = project.root;
  mkdirSync(join(root, 'data'), { recursive: true });
  symlinkSync('../variants/one.txt', join(root, 'data', 'active.txt'));
  symlinkSync('alpha', join(root, 'data', 'pointer'));
  chmodSync(join(root, 'bin', 'helper.sh'), 0o755);
  // Committed as git would see them (the links and the lock file), not the ignored files.
  project.git('add', '-A');
  project.git('commit', '-qm', 'links and lock file');
  installPackage(root, store, PKG_100);
  const runProgram = (): ProgramRun => {
    const result = spawnSync(process.execPath, ['check.mjs'], { cwd: root, env: cleanEnv(), encoding: 'utf8', timeout: 60_000 });
    if (result.error) throw result.error;
    let parsed: { digest: string; seen: string[] } = { digest: `<exit ${result.status}>`, seen: [] };
    try {
      parsed = JSON.parse(result.stdout);
    } catch {
      // A crash prints no digest: the exit code stands in for it.
    }
    return { code: result.status, digest: parsed.digest, seen: parsed.seen, stderr: result.stderr };
  };
  const warm = runProgram();
  if (warm.code !== 0) throw new Error(`check.mjs failed on the fresh fixture:\n${warm.stderr}`);
  return {
    project,
    root,
    outside,
    store,
    otherCheckout,
    ownCaches: OWN_CACHES,
    runProgram,
    remove() {
      project.remove();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
