import { spawnSync } from 'node:child_process';
import { chmodSync, linkSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { importPackage, installPackage, relativeLink, removeImported, virtualStorePath, type ImportMethod, type StorePackage } from './pnpmStore.js';
import { lockfileFor, PKG_100, PREV_CACHE, type TracedFixture } from './tracedFixture.js';

/**
 * The traced campaign's mutations, by category. Each category is either relevant (it changes
 * something the check read, listed, probed or followed: the receipt must not stay CURRENT) or
 * irrelevant (the check never touched it, or the change leaves every byte, name and answer the
 * check saw as it was: the receipt should stay CURRENT, and a STALE there is a precision miss).
 *
 * A mutation is drawn from a seeded sequence, applied, and undone by `revert`, which puts the
 * tree back as the receipt's run found it (the same bytes, names and link targets; not always the
 * same inodes or times, which no answer may depend on).
 */

/** A whole number below `below`, a choice, a short random word: all from one seeded sequence. */
export class Draw {
  constructor(private readonly next: () => number) {}

  int(below: number): number {
    return Math.floor(this.next() * below);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  word(length = 6): string {
    let out = '';
    for (let index = 0; index < length; index++) out += 'abcdefghijklmnopqrstuvwxyz0123456789'[this.int(36)];
    return out;
  }
}

export interface Applied {
  /** The variant's name: counted apart in the report. */
  variant: string;
  /** What exactly was done, for a failure's message. */
  detail: string;
  revert(): void;
}

export interface Category {
  name: string;
  /** 'stale': must not be CURRENT. 'current': should stay CURRENT. */
  expect: 'stale' | 'current';
  /**
   * Relevant by the fingerprint rule rather than by what the check prints: the run's own cache,
   * changed by someone else, makes the receipt STALE although the next run would rewrite it first.
   */
  byRule?: true;
  weight: number;
  apply(fx: TracedFixture, draw: Draw): Applied;
}

// ---------------------------------------------------------------- file edits

/** A file's bytes as the receipt's run found them, to put back. */
interface Saved {
  abs: string;
  bytes: Buffer;
}

function save(abs: string): Saved {
  return { abs, bytes: readFileSync(abs) };
}

/**
 * Puts a file's bytes back. In place when a file is there, so a hard link into the store stays
 * one; `relink` recreates a deleted installed file as a link to the store's copy again.
 */
function restore(saved: Saved, relink?: (abs: string, bytes: Buffer) => void): void {
  const stats = lstatSync(saved.abs, { throwIfNoEntry: false });
  if (stats !== undefined && !stats.isFile()) rmSync(saved.abs, { recursive: true, force: true });
  if (stats === undefined || !stats.isFile()) {
    mkdirSync(dirname(saved.abs), { recursive: true });
    if (relink) relink(saved.abs, saved.bytes);
    else writeFileSync(saved.abs, saved.bytes);
    return;
  }
  if (!readFileSync(saved.abs).equals(saved.bytes)) writeFileSync(saved.abs, saved.bytes);
}

/** Other bytes of the same length: one byte changed, so size and (within a clock tick) times can match the old file's. */
function sameSizeOther(bytes: Buffer, draw: Draw): Buffer {
  const out = Buffer.from(bytes);
  if (out.length === 0) return Buffer.from('x');
  const at = draw.int(out.length);
  const old = out[at]!;
  let now = 0x61 + draw.int(26);
  if (now === old) now = now === 0x7a ? 0x61 : now + 1;
  out[at] = now;
  return out;
}

const EDITS = ['rewrite', 'same size, one byte', 'same size, one byte, mtime put back', 'append a line', 'empty it', 'delete it'] as const;

/** Sets a file's mtime to the nanosecond (Date-based utimes would round it): only its ctime then tells the rewrite. */
function setMtimeNs(abs: string, mtimeNs: bigint): void {
  const at = `@${mtimeNs / 1_000_000_000n}.${(mtimeNs % 1_000_000_000n).toString().padStart(9, '0')}`;
  const touched = spawnSync('touch', ['-m', '-d', at, abs], { encoding: 'utf8' });
  if (touched.status !== 0) throw new Error(`touch ${abs}: ${touched.stderr}`);
}

/** Changes a file's bytes (or removes it) so that whoever reads it sees something else. */
function editFile(abs: string, draw: Draw, relink?: (abs: string, bytes: Buffer) => void): { edit: string; revert(): void } {
  const saved = save(abs);
  let edit: string = draw.pick(EDITS);
  if (edit === 'empty it' && saved.bytes.length === 0) edit = 'rewrite';
  switch (edit) {
    case 'rewrite':
      writeFileSync(abs, `rewritten ${draw.word(10)}\n`);
      break;
    case 'same size, one byte':
      writeFileSync(abs, sameSizeOther(saved.bytes, draw));
      break;
    case 'same size, one byte, mtime put back': {
      const before = statSync(abs, { bigint: true }).mtimeNs;
      writeFileSync(abs, sameSizeOther(saved.bytes, draw));
      setMtimeNs(abs, before);
      break;
    }
    case 'append a line':
      writeFileSync(abs, Buffer.concat([saved.bytes, Buffer.from(`appended ${draw.word()}\n`)]));
      break;
    case 'empty it':
      writeFileSync(abs, '');
      break;
    default:
      unlinkSync(abs);
  }
  return { edit, revert: () => restore(saved, relink) };
}

function removePath(abs: string): void {
  rmSync(abs, { recursive: true, force: true });
}

function writeNew(abs: string, content: string): void {
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, content);
}

// ---------------------------------------------------------------- the package

const pkgDir = (fx: TracedFixture, pkg: StorePackage = PKG_100) => join(fx.root, virtualStorePath(pkg));

/** Recreates an installed file of pkg@1.0.0 as pnpm would: a hard link to the store's copy. */
const relinkFromStore = (fx: TracedFixture) => (abs: string, bytes: Buffer) => linkSync(fx.store.add(bytes), abs);

/** Puts pkg@1.0.0 back as the receipt's run found it: its files (hard links into the store) and node_modules/pkg pointing at them. */
function reinstallBaseline(fx: TracedFixture, method: ImportMethod = 'hardlink'): void {
  removeImported(fx.root, PKG_100);
  installPackage(fx.root, fx.store, PKG_100, { method });
}

// ---------------------------------------------------------------- the categories

/** Files the check reads, by content, that no other category replaces wholesale: touched or rewritten with the same bytes. */
const READ_FILES = [
  'bin/helper.sh',
  'src/main.txt',
  '.env',
  'config.local.json',
  'plugins/a.txt',
  'lib/helper.js',
  'lib/mod.json',
  'package.json',
  'variants/one.txt',
  'node_modules/.cache/mine/prev',
  'node_modules/.cache/mine/x',
  `${virtualStorePath(PKG_100)}/util.js`,
  `${virtualStorePath(PKG_100)}/index.js`,
];

const fileIn = (fx: TracedFixture, path: string) => (path.startsWith('OUTSIDE/') ? join(fx.outside, path.slice('OUTSIDE/'.length)) : join(fx.root, path));

export const CATEGORIES: Category[] = [
  // ------------------------------------------------------------ relevant
  {
    name: 'a tracked source the check reads',
    expect: 'stale',
    weight: 1,
    apply(fx, draw) {
      const { edit, revert } = editFile(join(fx.root, 'src/main.txt'), draw);
      return { variant: edit, detail: `src/main.txt: ${edit}`, revert };
    },
  },
  {
    // No event names the file read: the write goes through the other name (the observer's kept looks, src/observer/keptEvidence.ts).
    name: 'a file the check reads, written through a hard link made in a directory it never listed',
    expect: 'stale',
    weight: 1,
    apply(fx, draw) {
      const path = draw.pick(['src/main.txt', '.env', 'lib/helper.js']);
      const saved = save(join(fx.root, path));
      const link = join(fx.root, 'docs', `linked-${draw.word()}`);
      linkSync(saved.abs, link);
      writeFileSync(link, draw.chance(0.5) ? sameSizeOther(saved.bytes, draw) : Buffer.concat([saved.bytes, Buffer.from('through a link\n')]));
      const kept = draw.chance(0.5);
      if (!kept) unlinkSync(link);
      return {
        variant: kept ? 'link kept' : 'link removed',
        detail: `${path} written through ${link}${kept ? '' : ', then the link removed'}`,
        revert() {
          removePath(link);
          restore(saved);
        },
      };
    },
  },
  {
    name: 'an ignored file the check reads',
    expect: 'stale',
    weight: 1,
    apply(fx, draw) {
      const path = draw.pick(['.env', 'config.local.json']);
      const { edit, revert } = editFile(join(fx.root, path), draw);
      return { variant: edit, detail: `${path} (git-ignored): ${edit}`, revert };
    },
  },
  {
    name: 'a file outside the root the check reads',
    expect: 'stale',
    weight: 1,
    apply(fx, draw) {
      const abs = join(fx.outside, 'settings.json');
      const { edit, revert } = editFile(abs, draw);
      return { variant: edit, detail: `${abs}: ${edit}`, revert };
    },
  },
  {
    name: 'a listed directory: an entry added, removed, renamed or changed in type',
    expect: 'stale',
    weight: 1,
    apply(fx, draw) {
      const dir = join(fx.root, 'plugins');
      const variant = draw.pick(['new file', 'new directory', 'file removed', 'file renamed', 'read file in it edited', 'an entry became a directory (same name)', 'an entry became a link (same name, same bytes)']);
      const name = `${draw.word()}.txt`;
      const b = save(join(dir, 'b.txt'));
      const a = save(join(dir, 'a.txt'));
      switch (variant) {
        case 'new file':
          writeNew(join(dir, name), 'new plugin\n');
          break;
        case 'new directory':
          mkdirSync(join(dir, name));
          break;
        case 'file removed':
          unlinkSync(b.abs);
          break;
        case 'file renamed':
          renameSync(b.abs, join(dir, name));
          break;
        case 'an entry became a directory (same name)':
          unlinkSync(b.abs);
          mkdirSync(b.abs);
          break;
        case 'an entry became a link (same name, same bytes)':
          writeNew(join(fx.root, 'variants', `b-${name}`), b.bytes.toString());
          unlinkSync(b.abs);
          symlinkSync(`../variants/b-${name}`, b.abs);
          break;
        default:
          writeFileSync(a.abs, sameSizeOther(a.bytes, draw));
      }
      return {
        variant,
        detail: `plugins/: ${variant} (${name})`,
        revert() {
          removePath(join(dir, name));
          removePath(join(fx.root, 'variants', `b-${name}`));
          restore(b);
          restore(a);
        },
      };
    },
  },
  {
    name: 'a file appearing at a path the resolver probed',
    expect: 'stale',
    weight: 1,
    apply(fx, draw) {
      const probes: [string, string][] = [
        ['lib/helper.ts', 'export const helper = "ts";\n'],
        ['lib/helper.mjs', 'export const helper = "mjs";\n'],
        ['lib/mod', 'module.exports = "no extension";\n'],
        ['lib/mod.js', 'module.exports = "js";\n'],
        [`${virtualStorePath(PKG_100)}/util`, "exports.value = 'shadow';\n"],
        ['node_modules/pkg.js', "module.exports = { version: 'shadow', value: 'js' };\n"],
        ['node_modules/pkg.json', '{ "version": "shadow", "value": "json" }\n'],
      ];
      const [path, content] = draw.pick(probes);
      const asDirectory = path.startsWith('lib/helper') && draw.chance(0.25);
      const abs = join(fx.root, path);
      if (asDirectory) mkdirSync(abs);
      else writeNew(abs, content);
      return { variant: `${path}${asDirectory ? '/ (a directory)' : ''}`, detail: `${asDirectory ? 'directory' : 'file'} created at probed path ${path}`, revert: () => removePath(abs) };
    },
  },
  {
    name: 'a link retargeted',
    expect: 'stale',
    weight: 1,
    apply(fx, draw) {
      const variant = draw.pick(['followed link to other bytes', 'followed link to the same bytes', 'followed link replaced by a copy', 'read link retargeted', 'package link retargeted to a same-bytes copy']);
      const active = join(fx.root, 'data/active.txt');
      const pointer = join(fx.root, 'data/pointer');
      const copyDir = join(fx.root, 'node_modules/.pnpm/pkg@1.0.0-copy/node_modules/pkg');
      switch (variant) {
        case 'followed link to other bytes':
          relativeLink(active, join(fx.root, 'variants/two.txt'));
          break;
        case 'followed link to the same bytes':
          relativeLink(active, join(fx.root, 'variants/same.txt'));
          break;
        case 'followed link replaced by a copy':
          unlinkSync(active);
          writeFileSync(active, readFileSync(join(fx.root, 'variants/one.txt')));
          break;
        case 'read link retargeted':
          unlinkSync(pointer);
          symlinkSync(`beta-${draw.word()}`, pointer);
          break;
        default:
          for (const [path, content] of Object.entries(PKG_100.files)) writeNew(join(copyDir, path), content);
          relativeLink(join(fx.root, 'node_modules/pkg'), copyDir);
      }
      return {
        variant,
        detail: variant,
        revert() {
          relativeLink(active, join(fx.root, 'variants/one.txt'));
          unlinkSync(pointer);
          symlinkSync('alpha', pointer);
          relativeLink(join(fx.root, 'node_modules/pkg'), pkgDir(fx));
          removePath(join(fx.root, 'node_modules/.pnpm/pkg@1.0.0-copy'));
        },
      };
    },
  },
  {
    name: 'a file the check only stats: its size changed',
    expect: 'stale',
    weight: 1,
    apply(fx, draw) {
      const abs = join(fx.root, 'data/sized.txt');
      const saved = save(abs);
      const mtimeNs = statSync(abs, { bigint: true }).mtimeNs;
      const variant = draw.pick(['grown', 'truncated']);
      writeFileSync(abs, variant === 'grown' ? Buffer.concat([saved.bytes, Buffer.from(draw.word())]) : saved.bytes.subarray(0, draw.int(saved.bytes.length)));
      return {
        variant,
        detail: `data/sized.txt (stat-ed, never read): ${variant}`,
        revert() {
          // Its size and mtime are what a stat-trusting tool sees: both go back.
          restore(saved);
          setMtimeNs(abs, mtimeNs);
        },
      };
    },
  },
  {
    name: 'a file the check executes',
    expect: 'stale',
    weight: 1,
    apply(fx, draw) {
      const abs = join(fx.root, 'bin/helper.sh');
      const saved = save(abs);
      const variant = draw.pick(['execute bit removed', 'script edited', 'same size, one byte']);
      if (variant === 'execute bit removed') chmodSync(abs, 0o644);
      else if (variant === 'script edited') writeFileSync(abs, `#!/bin/sh\necho helper ${draw.word()}\n`);
      else writeFileSync(abs, saved.bytes.toString().replace('one', sameSizeOther(Buffer.from('one'), draw).toString()));
      return {
        variant,
        detail: `bin/helper.sh: ${variant}`,
        revert() {
          restore(saved);
          chmodSync(abs, 0o755);
        },
      };
    },
  },
  {
    name: 'a cache the check writes, then reads (changed by someone else)',
    expect: 'stale',
    byRule: true,
    weight: 1,
    apply(fx, draw) {
      const abs = join(fx.root, 'node_modules/.cache/mine/x');
      const { edit, revert } = editFile(abs, draw);
      return { variant: edit, detail: `node_modules/.cache/mine/x (the run's own): ${edit}`, revert };
    },
  },
  {
    name: 'a cache the check reads before it writes it',
    expect: 'stale',
    weight: 1,
    apply(fx, draw) {
      const dir = join(fx.root, 'node_modules/.cache/mine');
      if (draw.chance(0.2)) {
        const x = save(join(dir, 'x'));
        removePath(dir);
        return {
          variant: 'the cache directory removed',
          detail: 'node_modules/.cache/mine removed',
          revert() {
            writeNew(join(dir, 'prev'), PREV_CACHE);
            restore(x);
          },
        };
      }
      const { edit } = editFile(join(dir, 'prev'), draw);
      return { variant: edit, detail: `node_modules/.cache/mine/prev (left by an earlier run): ${edit}`, revert: () => writeNew(join(dir, 'prev'), PREV_CACHE) };
    },
  },
  {
    name: 'a package version change',
    expect: 'stale',
    weight: 1,
    apply(fx, draw) {
      const variant = draw.pick(['new version, new code', 'new version, same code', 'installed file patched in place', "store file patched through another checkout's link"]);
      if (variant === 'installed file patched in place') {
        const abs = join(pkgDir(fx), 'util.js');
        const saved = save(abs);
        writeFileSync(abs, `exports.value = '${draw.word()}';\n`);
        return { variant, detail: `${virtualStorePath(PKG_100)}/util.js patched (the store's file with it)`, revert: () => restore(saved, relinkFromStore(fx)) };
      }
      if (variant === "store file patched through another checkout's link") {
        // The same inode as the project's file, when the project's is still a link into the store.
        const other = join(fx.otherCheckout, 'patcher');
        const abs = join(importPackage(other, fx.store, PKG_100), 'util.js');
        const mine = join(pkgDir(fx), 'util.js');
        const shared = statSync(abs).ino === statSync(mine).ino;
        const saved = save(mine);
        writeFileSync(abs, `exports.value = '${draw.word()}';\n`);
        if (!shared) writeFileSync(mine, readFileSync(abs));
        return {
          variant,
          detail: `util.js patched through ${abs}${shared ? '' : ' (and the project copy, not a link)'}`,
          revert() {
            writeFileSync(abs, saved.bytes);
            restore(saved, relinkFromStore(fx));
            removePath(fx.otherCheckout);
          },
        };
      }
      const version = `1.${1 + draw.int(9)}.${draw.int(10)}`;
      const method = draw.pick(['hardlink', 'copy'] as const);
      const pkg: StorePackage = {
        name: 'pkg',
        version,
        files: {
          ...PKG_100.files,
          'package.json': `{ "name": "pkg", "version": "${version}", "main": "index.js" }\n`,
          ...(variant === 'new version, new code' ? { 'util.js': `exports.value = '${draw.word()}';\n` } : {}),
        },
      };
      const dir = importPackage(fx.root, fx.store, pkg, method);
      relativeLink(join(fx.root, 'node_modules/pkg'), dir);
      const lock = save(join(fx.root, 'pnpm-lock.yaml'));
      writeFileSync(lock.abs, lockfileFor(pkg));
      return {
        variant: `${variant} (${method})`,
        detail: `pkg 1.0.0 -> ${version} (${method})`,
        revert() {
          relativeLink(join(fx.root, 'node_modules/pkg'), pkgDir(fx));
          removeImported(fx.root, pkg);
          restore(lock);
        },
      };
    },
  },
  // ------------------------------------------------------------ irrelevant
  {
    name: 'README.md edited',
    expect: 'current',
    weight: 1,
    apply(fx, draw) {
      const { edit, revert } = editFile(join(fx.root, 'README.md'), draw);
      return { variant: edit, detail: `README.md: ${edit}`, revert };
    },
  },
  {
    name: 'CLAUDE.md, AGENTS.md or .claude/ written',
    expect: 'current',
    weight: 1,
    apply(fx, draw) {
      const path = draw.pick(['CLAUDE.md', 'AGENTS.md', '.claude/settings.json']);
      const abs = join(fx.root, path);
      writeNew(abs, `# ${draw.word()}\n`);
      return { variant: path, detail: `${path} written`, revert: () => removePath(path === '.claude/settings.json' ? dirname(abs) : abs) };
    },
  },
  {
    name: 'a file in a directory the check never listed',
    expect: 'current',
    weight: 1,
    apply(fx, draw) {
      const variant = draw.pick(['docs/ new file', 'docs/ file edited', 'lib/ new unprobed file', 'variants/ new file', 'new top-level directory']);
      const name = draw.word();
      const guide = save(join(fx.root, 'docs/guide.md'));
      const abs = join(
        fx.root,
        variant === 'docs/ new file' ? `docs/${name}.md` : variant === 'lib/ new unprobed file' ? `lib/${name}.js` : variant === 'variants/ new file' ? `variants/${name}.txt` : `scratch-${name}/notes.md`,
      );
      if (variant === 'docs/ file edited') writeFileSync(guide.abs, `# guide ${name}\n`);
      else writeNew(abs, `${name}\n`);
      return {
        variant,
        detail: `${variant}: ${variant === 'docs/ file edited' ? 'docs/guide.md' : abs}`,
        revert() {
          restore(guide);
          if (variant === 'new top-level directory') removePath(dirname(abs));
          else if (variant !== 'docs/ file edited') removePath(abs);
        },
      };
    },
  },
  {
    name: 'a file outside the root the check never read',
    expect: 'current',
    weight: 1,
    apply(fx, draw) {
      const variant = draw.pick(['edited', 'new sibling file']);
      const unread = save(join(fx.outside, 'unread.txt'));
      const created = join(fx.outside, `new-${draw.word()}.txt`);
      if (variant === 'edited') writeFileSync(unread.abs, `edited ${draw.word()}\n`);
      else writeNew(created, 'new\n');
      return {
        variant,
        detail: `outside: ${variant}`,
        revert() {
          restore(unread);
          removePath(created);
        },
      };
    },
  },
  {
    name: 'another checkout installs from the same store (link counts change)',
    expect: 'current',
    weight: 1,
    apply(fx, draw) {
      const other = join(fx.otherCheckout, `co-${draw.word()}`);
      installPackage(other, fx.store, PKG_100);
      const twice = draw.chance(0.3);
      // A second importer of the same files: link counts go up by two.
      if (twice) importPackage(join(other, 'packages', 'b'), fx.store, PKG_100);
      return { variant: twice ? 'two importers' : 'one importer', detail: `installed pkg@1.0.0 into ${other}`, revert: () => removePath(fx.otherCheckout) };
    },
  },
  {
    name: 'a reinstall with the same lock file',
    expect: 'current',
    weight: 1,
    apply(fx, draw) {
      const method = draw.pick(['hardlink', 'copy'] as const);
      const whole = draw.chance(0.5);
      const lock = save(join(fx.root, 'pnpm-lock.yaml'));
      if (whole) {
        // pnpm install --force: the virtual store and the top-level links rebuilt; caches stay.
        removePath(join(fx.root, 'node_modules/.pnpm'));
        unlinkSync(join(fx.root, 'node_modules/pkg'));
        installPackage(fx.root, fx.store, PKG_100, { method });
      } else reinstallBaseline(fx, method);
      writeFileSync(lock.abs, lock.bytes);
      writeNew(join(fx.root, 'node_modules/.modules.yaml'), `prunedAt: ${draw.word()}\n`);
      return {
        variant: `${whole ? 'whole virtual store' : 'one package'} (${method})`,
        detail: `reinstalled pkg@1.0.0 by ${method}${whole ? ', node_modules/.pnpm rebuilt' : ''}`,
        revert() {
          if (method === 'copy') reinstallBaseline(fx);
          removePath(join(fx.root, 'node_modules/.modules.yaml'));
        },
      };
    },
  },
  {
    name: "another check's cache under node_modules/",
    expect: 'current',
    weight: 1,
    apply(fx, draw) {
      const path = draw.pick(['node_modules/.cache/other', 'node_modules/.cache/prettier', 'node_modules/.tsslint', `node_modules/.cache/${draw.word()}`]);
      const file = join(fx.root, path, `${draw.word()}.json`);
      writeNew(file, `{"entry":"${draw.word(12)}"}\n`);
      return { variant: path.startsWith('node_modules/.cache/') && !['other', 'prettier'].includes(path.slice(20)) ? 'node_modules/.cache/(random)' : path, detail: `wrote ${file}`, revert: () => removePath(join(fx.root, path)) };
    },
  },
  {
    name: 'a file the check reads: touched, rewritten with the same bytes, or made executable',
    expect: 'current',
    weight: 1,
    apply(fx, draw) {
      const path = draw.pick([...READ_FILES, 'OUTSIDE/settings.json']);
      const abs = fileIn(fx, path);
      const variant = draw.pick(['touched', 'same bytes rewritten', 'replaced by a copy (new inode)', 'made executable (a file it only reads)']);
      const bytes = readFileSync(abs);
      const mode = statSync(abs).mode;
      if (variant === 'made executable (a file it only reads)') {
        if (path === 'bin/helper.sh') chmodSync(abs, 0o755);
        else chmodSync(abs, mode | 0o111);
      } else if (variant === 'touched') {
        const when = new Date(Date.now() - draw.int(1e9));
        utimesSync(abs, when, when);
      } else if (variant === 'same bytes rewritten') writeFileSync(abs, bytes);
      else {
        unlinkSync(abs);
        writeFileSync(abs, bytes, { mode });
      }
      return {
        variant,
        detail: `${path}: ${variant}`,
        revert() {
          chmodSync(abs, mode & 0o7777);
          // A package file copied out of the store goes back to being a link to the store's.
          if (variant === 'replaced by a copy (new inode)' && path.startsWith('node_modules/.pnpm/')) {
            unlinkSync(abs);
            relinkFromStore(fx)(abs, bytes);
          }
        },
      };
    },
  },
  {
    name: 'another run of the check (its caches rewritten with the same bytes)',
    expect: 'current',
    weight: 0.2,
    apply(fx) {
      const run = fx.runProgram();
      if (run.code !== 0) throw new Error(`check.mjs failed on the unmutated fixture:\n${run.stderr}`);
      return { variant: 'untraced rerun', detail: 'check.mjs run again', revert() {} };
    },
  },
];

/** Picks a category by weight. */
export function drawCategory(draw: Draw, categories: readonly Category[] = CATEGORIES): Category {
  const total = categories.reduce((sum, category) => sum + category.weight, 0);
  let at = draw.int(1e9) / 1e9 * total;
  for (const category of categories) {
    at -= category.weight;
    if (at < 0) return category;
  }
  return categories[categories.length - 1]!;
}

