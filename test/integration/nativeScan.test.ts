import { spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { identityOf } from '../../src/core/identity.js';
import type { Json } from '../helpers/answers.js';
import { expectCurrentIn, inProcess, statusIn, type AsyncProject } from '../helpers/inProcess.js';
import { hostileInstallTree } from '../helpers/installTree.js';
import { cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';
import { testSeed } from '../helpers/seed.js';

/*
 * vouch runs in process here (test/helpers/inProcess.ts), each command with the scan its env
 * asks for; e2e/nativeScan.test.ts runs the CLI as another user.
 *
 * The native tree scan (native/) and the JavaScript walk must give the same
 * answer on every tree: a receipt made by one is CURRENT to the other, and
 * every change is seen by both. The directory listings the native scan keeps
 * between runs must never hide a change, even when damaged or foreign.
 */

const NATIVE = cleanEnv();
const PORTABLE = cleanEnv({ VOUCH_NATIVE: '0' });
const BOTH = [NATIVE, PORTABLE];

const projects: (TempProject | AsyncProject)[] = [];
afterEach(() => {
  for (const project of projects.splice(0)) project.remove();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function hostile(name: string): AsyncProject {
  const p = inProcess(hostileInstallTree(name));
  projects.push(p);
  return p;
}

async function run(p: AsyncProject, env: NodeJS.ProcessEnv) {
  const result = await p.vouch(['run', 'check'], { env });
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
}

/** A passing run, then two looks: the first keeps the directory listings, the second answers from them. */
async function runAndKeepListings(p: AsyncProject) {
  await run(p, NATIVE);
  await expectCurrentIn(p, 'check', NATIVE);
  await sleep(60);
  await expectCurrentIn(p, 'check', NATIVE);
}

async function changesOf(p: AsyncProject, env: NodeJS.ProcessEnv): Promise<string[]> {
  const out = await p.json(['explain', 'check'], { env });
  return out.input_changes.map((c: Json) => `${c.change} ${c.path}`).sort();
}

function cacheFiles(p: AsyncProject): string[] {
  const dir = join(p.root, '.vouch');
  return readdirSync(dir).filter((name) => /^tree-.*\.cache$/.test(name)).map((name) => join(dir, name));
}

describe('the native scan', () => {
  it.skipIf(process.platform === 'win32')('is built and loads (npm install builds it; "npm run build:native" rebuilds it)', () => {
    const path = join(REPO, 'build', 'Release', 'vouch_scan.node');
    expect(existsSync(path), `${path} is missing: run "npm run build:native"`).toBe(true);
    const addon = createRequire(import.meta.url)(path);
    expect(['start', 'finish', 'startStats', 'finishStats'].map((name) => typeof addon[name])).toEqual(Array(4).fill('function'));
  });

  it('each command takes the scan its env asks for: the JavaScript walk keeps no listings, the native scan does', async () => {
    const p = hostile('native-choice');
    await run(p, PORTABLE);
    await expectCurrentIn(p, 'check', PORTABLE);
    expect(cacheFiles(p)).toEqual([]);
    await expectCurrentIn(p, 'check', NATIVE);
    expect(cacheFiles(p)).toHaveLength(2);
  });

  it('and the JavaScript walk agree: a receipt made by either is CURRENT to both', async () => {
    const p = hostile('native-agree');
    for (const maker of BOTH) {
      await run(p, maker);
      for (const env of BOTH) {
        await expectCurrentIn(p, 'check', env);
        expect(await changesOf(p, env)).toEqual([]);
      }
    }
    const [native, portable] = (await p.json(['log', 'check'])).receipts;
    expect(native.input_count).toBe(portable.input_count);
    // The source, the installed files and links of both roots; the pruned cache and the empty directory are not inputs.
    expect(native.input_count).toBeGreaterThanOrEqual(18);
  });

  it('sees every change to a tree whose listings it keeps, as the JavaScript walk does', async () => {
    const p = hostile('native-mutations');
    const abs = (path: string) => join(p.root, path);
    const mutations: { name: string; mutate(): void; expected: string[] }[] = [
      { name: 'a file added to a listed directory', mutate: () => writeFileSync(abs('node_modules/dep/added.js'), 'x\n'), expected: ['added node_modules/dep/added.js'] },
      { name: 'a file deleted', mutate: () => unlinkSync(abs('node_modules/dep/lib/deep/er/file.js')), expected: ['removed node_modules/dep/lib/deep/er/file.js'] },
      {
        name: 'a file renamed within its directory',
        mutate: () => renameSync(abs('node_modules/dep/name with spaces.js'), abs('node_modules/dep/renamed.js')),
        expected: ['added node_modules/dep/renamed.js', 'removed node_modules/dep/name with spaces.js'],
      },
      {
        name: 'a file rewritten in place with its own bytes',
        mutate: () => writeFileSync(abs('node_modules/dep/index.js'), readFileSync(abs('node_modules/dep/index.js'))),
        expected: ['identity node_modules/dep/index.js'],
      },
      { name: 'a file appended to in place', mutate: () => appendFileSync(abs('node_modules/a0.js'), 'more\n'), expected: ['identity node_modules/a0.js'] },
      {
        name: 'a new directory deep in a listed one',
        mutate: () => {
          mkdirSync(abs('node_modules/dep/lib/fresh/er'), { recursive: true });
          writeFileSync(abs('node_modules/dep/lib/fresh/er/x.js'), 'x\n');
        },
        expected: ['added node_modules/dep/lib/fresh/er/x.js'],
      },
      {
        name: 'a directory replaced by a link to another',
        mutate: () => {
          rmSync(abs('node_modules/a'), { recursive: true });
          symlinkSync('dep', abs('node_modules/a'));
        },
        expected: ['added node_modules/a', 'removed node_modules/a/b.js'],
      },
      {
        name: 'a link pointed elsewhere',
        mutate: () => {
          unlinkSync(abs('node_modules/.bin/tool'));
          symlinkSync('../dep/package.json', abs('node_modules/.bin/tool'));
        },
        expected: ['modified node_modules/.bin/tool'],
      },
      { name: 'a hard-linked file written through its other name', mutate: () => writeFileSync(abs('node_modules/hard/two.js'), 'HARD\n'), expected: ['modified node_modules/hard/one.js', 'modified node_modules/hard/two.js'] },
      { name: 'a file in the second install root', mutate: () => appendFileSync(abs('packages/a/node_modules/x/index.js'), '//\n'), expected: ['identity packages/a/node_modules/x/index.js'] },
      { name: 'a file whose name is not ASCII (the native scan leaves the walk to JavaScript)', mutate: () => writeFileSync(abs('node_modules/dep/caf\u00e9.js'), 'x\n'), expected: ['added node_modules/dep/caf\u00e9.js'] },
      {
        name: 'a whole package removed',
        mutate: () => rmSync(abs('node_modules/a-b'), { recursive: true }),
        expected: ['removed node_modules/a-b/x.js'],
      },
    ];
    for (const mutation of mutations) {
      await runAndKeepListings(p);
      expect(cacheFiles(p).length, 'the listings are kept in the state dir').toBe(2);
      mutation.mutate();
      for (const env of BOTH) {
        const status = await statusIn(p, 'check', env);
        expect(status.freshness, `${mutation.name}: ${JSON.stringify(status.reasons)}`).toBe('STALE');
        expect(await changesOf(p, env), mutation.name).toEqual(mutation.expected.sort());
      }
    }
  });

  it('writes to the pruned tool cache change nothing', async () => {
    const p = hostile('native-pruned');
    await run(p, NATIVE);
    await expectCurrentIn(p, 'check', NATIVE);
    await sleep(60);
    writeFileSync(join(p.root, 'node_modules/.vite/vitest/results.json'), '{"changed":true}\n');
    writeFileSync(join(p.root, 'node_modules/.vite/vitest/more.json'), '{}\n');
    mkdirSync(join(p.root, 'node_modules/.vite-temp'));
    writeFileSync(join(p.root, 'node_modules/.vite-temp/vite.config.mjs'), 'x\n');
    for (const env of BOTH) await expectCurrentIn(p, 'check', env);
  });

  it('changes made right after a look, within a timestamp tick, are seen by the next look', async () => {
    const p = hostile('native-racy');
    await run(p, NATIVE);
    const dir = join(p.root, 'node_modules/dep');
    const added: string[] = [];
    for (let round = 0; round < 12; round++) {
      // No pause anywhere: each write lands within a tick of the look before it.
      const name = `racy${round}.js`;
      writeFileSync(join(dir, name), 'x\n');
      added.push(`added node_modules/dep/${name}`);
      expect(await changesOf(p, NATIVE), `round ${round}`).toEqual(added.slice().sort());
    }
    for (const name of added.map((line) => line.slice('added '.length))) unlinkSync(join(p.root, name));
    expect(await changesOf(p, NATIVE)).toEqual([]);
    await expectCurrentIn(p, 'check', NATIVE);
  });

  it('damaged, emptied or foreign listings are ignored and rewritten, never trusted', async () => {
    const p = hostile('native-damaged');
    const other = hostile('native-other');
    await run(other, NATIVE);
    await expectCurrentIn(other, 'check', NATIVE);
    await runAndKeepListings(p);
    const files = cacheFiles(p).sort();
    const good = files.map((file) => readFileSync(file));
    const foreign = cacheFiles(other).sort();
    const damage: { name: string; apply(file: string, index: number): void }[] = [
      { name: 'random bytes', apply: (file) => writeFileSync(file, Buffer.from(Array.from({ length: 4096 }, (_, n) => (n * 7919) & 0xff))) },
      { name: 'truncated', apply: (file) => truncateSync(file, Math.floor(readFileSync(file).length / 2)) },
      { name: 'empty', apply: (file) => writeFileSync(file, '') },
      {
        name: 'one byte flipped',
        apply: (file) => {
          const bytes = readFileSync(file);
          const middle = Math.floor(bytes.length / 2);
          bytes.writeUInt8(bytes.readUInt8(middle) ^ 0x20, middle);
          writeFileSync(file, bytes);
        },
      },
      { name: "another project's", apply: (file, index) => copyFileSync(foreign[index] as string, file) },
      {
        name: 'a directory in its place',
        apply: (file) => {
          rmSync(file);
          mkdirSync(file);
        },
      },
    ];
    for (const [step, { name, apply }] of damage.entries()) {
      files.forEach((file, index) => {
        rmSync(file, { recursive: true, force: true });
        writeFileSync(file, good[index] as Buffer);
        apply(file, index);
      });
      // A change hidden behind the damaged listing would show here as CURRENT.
      const added = `node_modules/dep/after-damage-${step}.js`;
      writeFileSync(join(p.root, added), 'x\n');
      expect((await statusIn(p, 'check', NATIVE)).freshness, name).toBe('STALE');
      expect(await changesOf(p, NATIVE), name).toEqual([`added ${added}`]);
      unlinkSync(join(p.root, added));
      await expectCurrentIn(p, 'check', NATIVE);
    }
  });

  it('listings damaged at random but with a valid checksum crash nothing and hide no change', async () => {
    const p = hostile('native-fuzzed');
    await runAndKeepListings(p);
    // The listing of node_modules/ (the larger of the two files).
    const [file] = cacheFiles(p).sort((a, b) => readFileSync(b).length - readFileSync(a).length) as [string];
    const good = readFileSync(file);
    // The damage is drawn from VOUCH_SEED, or a fixed seed (test/helpers/seed.ts).
    const seed = testSeed(import.meta.url, 7);
    const next = (() => {
      let state = seed.value;
      return (below: number) => {
        state = (state * 1103515245 + 12345) % 2 ** 31;
        return state % below;
      };
    })();
    for (let round = 0; round < 24; round++) {
      const bytes = Buffer.from(good);
      // Past the magic and the count, before the checksum: the structure is what is tried.
      for (let flips = 1 + next(4); flips > 0; flips--) {
        const at = 16 + next(bytes.length - 24);
        bytes.writeUInt8(next(256), at);
      }
      bytes.writeBigUInt64LE(fnv1a(bytes.subarray(0, bytes.length - 8)), bytes.length - 8);
      writeFileSync(file, bytes);
      // A damaged name can only lose a file (STALE); anything the loader cannot parse is dropped (CURRENT).
      expect(['CURRENT', 'STALE'], `${seed.replay()}, round ${round}, unchanged tree`).toContain((await statusIn(p, 'check', NATIVE)).freshness);
      writeFileSync(file, bytes);
      const added = `node_modules/dep/lib/fuzzed-${round}.js`;
      writeFileSync(join(p.root, added), 'x\n');
      const status = await statusIn(p, 'check', NATIVE);
      expect(status.freshness, `${seed.replay()}, round ${round}`).not.toBe('CURRENT');
      unlinkSync(join(p.root, added));
    }
    writeFileSync(file, good);
    await expectCurrentIn(p, 'check', NATIVE);
  });

  it('a kept listing in another order than paths sort (an older build\'s) is read again, not trusted', async () => {
    const p = hostile('native-reordered');
    await runAndKeepListings(p);
    const before = await changesOf(p, NATIVE);
    for (const file of cacheFiles(p)) {
      const bytes = reorderedListings(readFileSync(file));
      writeFileSync(file, bytes);
    }
    // Trusted, the reversed names would put the lines out of order, and the digest with them.
    await expectCurrentIn(p, 'check', NATIVE);
    expect(await changesOf(p, NATIVE)).toEqual(before);
    writeFileSync(join(p.root, 'node_modules/a/c.js'), 'new\n');
    expect(await changesOf(p, NATIVE)).toEqual(['added node_modules/a/c.js']);
  });

  it('a tracked source inside node_modules stays a source, as in the JavaScript walk', async () => {
    const p = hostile('native-tracked');
    p.git('add', '-f', 'node_modules/dep/index.js');
    p.git('commit', '-qm', 'vendor one file');
    for (const maker of BOTH) {
      await run(p, maker);
      for (const env of BOTH) await expectCurrentIn(p, 'check', env);
    }
    writeFileSync(join(p.root, 'node_modules/dep/index.js'), 'module.exports = 43;\n');
    for (const env of BOTH) {
      const out = await p.json(['explain', 'check'], { env });
      expect(out.input_changes.map((c: Json) => [c.change, c.path, c.origin])).toEqual([['modified', 'node_modules/dep/index.js', 'source']]);
    }
  });

  it.skipIf(process.platform === 'win32')('a named pipe in node_modules makes both UNVERIFIED with the same reason', async () => {
    const p = hostile('native-fifo');
    await run(p, NATIVE);
    const made = spawnSync('mkfifo', [join(p.root, 'node_modules/dep/pipe')]);
    expect(made.status, 'mkfifo').toBe(0);
    const answers: Json[] = [];
    for (const env of BOTH) answers.push(await statusIn(p, 'check', env));
    for (const status of answers) {
      expect(status.freshness).toBe('UNVERIFIED');
      expect(status.reasons.map((r: Json) => r.code)).toContain('input-unsupported-type');
    }
    expect(answers[0].reasons).toEqual(answers[1].reasons);
  });

  describe.skipIf(process.platform === 'win32')('the addon itself', () => {
    interface Addon {
      start(root: string, base: string, observedAtNs: bigint, threads: number, cacheFile: string): object;
      finish(handle: object): { failure: string | null; specials?: string[]; dirs?: string[]; lines?: Buffer; offsets?: Uint32Array };
      startSources(root: string, threads: number): object;
      finishSources(handle: object): { spawnError: string | null; status: number | null; stdout: Buffer; stderr: string; identities: (string | null)[]; executable: Uint8Array };
    }
    const addon = () => createRequire(import.meta.url)(join(REPO, 'build', 'Release', 'vouch_scan.node')) as Addon;
    const nowNs = () => BigInt(Date.now()) * 1_000_000n;
    const listings = (file: string) => (existsSync(file) ? readFileSync(file).readBigUInt64LE(8) : null);

    it('a file or directory changed within a tick of the look is left to JavaScript and not remembered', () => {
      const p = hostile('native-addon-racy');
      const settled = join(p.root, 'settled.cache');
      const racy = join(p.root, 'racy.cache');
      // Looked at from a second after the last change, everything is settled; from the moment of the
      // first change, everything is within a tick of it.
      const ctimes = ctimesBelow(join(p.root, 'node_modules'));
      const later = addon().finish(addon().start(p.root, 'node_modules', ctimes.last + 1_000_000_000n, 2, settled));
      expect(later.failure).toBeNull();
      expect(later.specials?.sort()).toEqual(['node_modules/.bin/tool', 'node_modules/dep/dangling.js', 'node_modules/hard/one.js', 'node_modules/hard/two.js']);
      // Each directory below the base, and the base.
      expect(Number(listings(settled))).toBe((later.dirs?.length ?? 0) + 1);
      // A second look, through the kept listings, finds exactly the same.
      const again = addon().finish(addon().start(p.root, 'node_modules', ctimes.last + 1_000_000_000n, 2, settled));
      expect(again.specials?.sort()).toEqual(later.specials);
      expect(again.dirs).toEqual(later.dirs);
      expect(again.lines?.equals(later.lines as Buffer)).toBe(true);

      const now = addon().finish(addon().start(p.root, 'node_modules', ctimes.first, 2, racy));
      expect(now.failure).toBeNull();
      expect(now.offsets?.length, 'no plain lines: every file is racy').toBe(1);
      expect(now.specials).toContain('node_modules/dep/index.js');
      expect(listings(racy), 'no racy directory is remembered').toBe(0n);
    });

    it('a name that is not ASCII, or a base that is a link, hands the whole walk to JavaScript', () => {
      const p = hostile('native-addon-fallback');
      writeFileSync(join(p.root, 'node_modules/dep/\u00e9.js'), 'x\n');
      expect(addon().finish(addon().start(p.root, 'node_modules', nowNs(), 1, '')).failure).toMatch(/node_modules\/dep/);
      symlinkSync('node_modules', join(p.root, 'linked'));
      expect(addon().finish(addon().start(p.root, 'linked', nowNs(), 1, '')).failure).toMatch(/linked/);
      expect(addon().finish(addon().start(p.root, 'absent', nowNs(), 1, '')).failure).toBeNull();
    });

    it("lists the sources with git and lstat's each, as git and Node do", () => {
      const p = hostile('native-addon-sources');
      writeFileSync(join(p.root, 'untracked.js'), 'x\n');
      chmodSync(join(p.root, 'check.js'), 0o755);
      symlinkSync('src/a.js', join(p.root, 'linked.js'));
      const listed = addon().finishSources(addon().startSources(p.root, 2));
      expect([listed.spawnError, listed.status, listed.stderr]).toEqual([null, 0, '']);
      const git = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: p.root });
      expect(listed.stdout.equals(git.stdout)).toBe(true);
      const paths = git.stdout.toString('utf8').split('\0').slice(0, -1);
      expect(paths).toContain('untracked.js');
      expect(listed.identities).toHaveLength(paths.length);
      paths.forEach((path, index) => {
        const stats = lstatSync(join(p.root, path), { bigint: true });
        expect(listed.identities[index], path).toBe(stats.isFile() ? identityOf(stats) : null);
        if (stats.isFile()) expect(listed.executable[index], path).toBe((stats.mode & 0o111n) !== 0n ? 1 : 0);
      });

      // A .git file naming a repository that is not there.
      const broken = tempProject('native-addon-broken-repo', { '.git': 'gitdir: ./missing\n' }, { git: false });
      projects.push(broken);
      const failed = addon().finishSources(addon().startSources(broken.root, 1));
      expect(failed.status).not.toBe(0);
      expect(failed.stderr).toMatch(/not a git repository/);
      expect(failed.identities).toEqual([]);
    });

    it('refuses wrong arguments with a TypeError, and a handle twice', () => {
      expect(() => (addon().start as (...args: unknown[]) => object)('/', 'x')).toThrow(TypeError);
      expect(() => (addon().start as (...args: unknown[]) => object)('/', 'x', 1, 1, '')).toThrow(TypeError);
      const handle = addon().start(REPO, 'no-such-dir', nowNs(), 1, '');
      addon().finish(handle);
      expect(() => addon().finish(handle)).toThrow(TypeError);
      expect(() => addon().finish({})).toThrow(TypeError);
    });
  });

  it.skipIf(process.platform === 'win32')('the install step builds it, and a failed build only warns', () => {
    const copy = tempProject('native-install', {}, { git: false });
    projects.push(copy);
    for (const path of ['binding.gyp', 'native', 'scripts/build-native.mjs']) cpSync(join(REPO, path), join(copy.root, path), { recursive: true });
    const script = join(copy.root, 'scripts', 'build-native.mjs');
    const addon = join(copy.root, 'build', 'Release', 'vouch_scan.node');
    // npm's own environment: it says where node-gyp and the headers are.
    const broken = spawnSync(process.execPath, [script], { cwd: copy.root, encoding: 'utf8', env: { ...process.env, CC: 'false' } });
    expect(broken.status, broken.stderr).toBe(0);
    expect(broken.stderr).toContain('the native scan was not built');
    expect(broken.stderr).toContain('npm run build:native');
    expect(existsSync(addon)).toBe(false);
    const built = spawnSync(process.execPath, [script], { cwd: copy.root, encoding: 'utf8', env: process.env });
    expect(built.status, built.stderr).toBe(0);
    expect(built.stdout).toMatch(process.platform === 'linux' ? /native scan and hook client built/ : /native scan built/);
    expect(existsSync(addon)).toBe(true);
    expect(existsSync(join(copy.root, 'build', 'Release', 'vouch_hook'))).toBe(process.platform === 'linux');
  }, 120_000);
});

/**
 * A listings file (native/dirCache.c) with every listing's children reversed, its checksum made
 * valid again: magic, count, then per listing its path, dev, ino, mtime, ctime and children
 * (is_dir, length, name), and a checksum last.
 */
function reorderedListings(bytes: Buffer): Buffer {
  const out: Buffer[] = [bytes.subarray(0, 16)];
  let at = 16;
  const count = Number(bytes.readBigUInt64LE(8));
  for (let listing = 0; listing < count; listing++) {
    const pathLength = bytes.readUInt32LE(at);
    const head = 4 + pathLength + 32;
    const childCount = bytes.readUInt32LE(at + head);
    out.push(bytes.subarray(at, at + head + 4));
    at += head + 4;
    const children: Buffer[] = [];
    for (let child = 0; child < childCount; child++) {
      const length = bytes.readUInt16LE(at + 1);
      children.push(bytes.subarray(at, at + 3 + length));
      at += 3 + length;
    }
    out.push(...children.reverse());
  }
  expect(at).toBe(bytes.length - 8);
  const body = Buffer.concat(out);
  const sum = Buffer.alloc(8);
  sum.writeBigUInt64LE(fnv1a(body));
  return Buffer.concat([body, sum]);
}

/** The cache files' checksum (native/dirCache.c): 64-bit FNV-1a. */
function fnv1a(bytes: Buffer): bigint {
  let hash = 14695981039346656037n;
  for (const byte of bytes) hash = ((hash ^ BigInt(byte)) * 1099511628211n) & 0xffffffffffffffffn;
  return hash;
}

/** The earliest and latest ctime of anything below dir, itself included. */
function ctimesBelow(dir: string): { first: bigint; last: bigint } {
  let first = lstatSync(dir, { bigint: true }).ctimeNs;
  let last = first;
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const ctime = lstatSync(join(dir, name), { bigint: true }).ctimeNs;
    if (ctime < first) first = ctime;
    if (ctime > last) last = ctime;
  }
  return { first, last };
}
