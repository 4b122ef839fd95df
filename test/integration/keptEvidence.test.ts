import { appendFileSync, linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { evidenceOf, type EvidenceEntry } from '../../src/core/evidence.js';
import { MemoryStatCache } from '../../src/core/statCache.js';
import { verifyEvidence } from '../../src/fs/verifyEvidence.js';
import { ChangeLog } from '../../src/observer/changeLog.js';
import { KeptEvidence } from '../../src/observer/keptEvidence.js';
import { tempProject, type TempProject } from '../helpers/project.js';

/*
 * The observer's kept looks at a traced receipt's evidence (src/observer/keptEvidence.ts), on real
 * files, with the change log fed by hand as the watch session would feed it. What an event under
 * the root tells is looked at again only when an event names it; everything else on every answer.
 */

const made: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const item of made.splice(0)) item.remove();
});

interface Rig {
  project: TempProject;
  outside: string;
  changes: ChangeLog;
  looks: KeptEvidence;
  recorded: EvidenceEntry[];
  digest: string;
  answer(): { changed: string[]; problems: string[] };
}

/** A root whose receipt read, listed and probed in every way the kept looks tell apart. */
async function rig(): Promise<Rig> {
  const project = tempProject('kept-evidence', {
    'src/a.ts': 'a\n',
    'src/b.ts': 'b\n',
    'real/x.js': 'x\n',
    'caf\u00e9.txt': 'accent\n',
    'deep/er/file.txt': 'deep\n',
  });
  const outside = mkdtempSync(join(tmpdir(), 'vouch-kept-outside-'));
  made.push(project, { remove: () => rmSync(outside, { recursive: true, force: true }) });
  writeFileSync(join(outside, 'config.json'), '{}\n');
  writeFileSync(join(outside, 'store-file.js'), 'store\n');
  linkSync(join(outside, 'store-file.js'), join(project.root, 'installed.js'));
  symlinkSync('real', join(project.root, 'lnk'));
  // Past the racy window, so the stat cache keeps every file's identity (and its link count).
  await delay(80);
  const stubs: EvidenceEntry[] = [
    { path: '.', use: 'listed', type: 'directory' },
    { path: 'caf\u00e9.txt', use: 'read', type: 'file' },
    { path: 'deep/er/file.txt', use: 'read', type: 'file' },
    { path: 'installed.js', use: 'read', type: 'file' },
    { path: 'lnk/x.js', use: 'read', type: 'file' },
    { path: 'src', use: 'listed', type: 'directory' },
    { path: 'src/a.ts', use: 'read', type: 'file' },
    { path: 'src/b.ts', use: 'read', type: 'file' },
    { path: 'src/c.ts', use: 'lookup', type: 'absent' },
    { path: join(outside, 'config.json'), use: 'read', type: 'file' },
  ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)) as EvidenceEntry[];
  const statCache = new MemoryStatCache();
  const recorded = verifyEvidence(project.root, stubs, statCache).entries;
  const digest = evidenceOf(recorded).digest;
  const changes = new ChangeLog();
  changes.trust(true);
  const looks = new KeptEvidence(project.root, statCache, changes);
  const answer = () => {
    const verified = looks.verify(recorded, digest);
    return { changed: verified.changes.map((change) => change.path), problems: verified.problems.map((problem) => problem.code) };
  };
  return { project, outside, changes, looks, recorded, digest, answer };
}

describe('kept looks at a traced receipt', () => {
  it('looks at everything first, then only at what no event under the root can tell', async () => {
    const { looks, answer } = await rig();
    expect(answer()).toEqual({ changed: [], problems: [] });
    expect(looks.counts).toMatchObject({ full: 1, partial: 0, looked: 10 });
    expect(answer()).toEqual({ changed: [], problems: [] });
    // The accented name, the hard-linked file, the path through a link, the file outside the root.
    expect(looks.counts).toMatchObject({ full: 1, partial: 1, looked: 14 });
  });

  it('trusts events for the rest: a write no event named is not looked for, one named is found', async () => {
    const { project, changes, answer } = await rig();
    answer();
    project.write('src/a.ts', 'A\n');
    expect(answer().changed, 'no event named src/a.ts').toEqual([]);
    changes.record([{ path: 'src/a.ts', created: false }]);
    expect(answer().changed).toEqual(['src/a.ts']);
  });

  it('finds a new file at a probed path, and in a listed directory, from its event', async () => {
    const { project, changes, answer } = await rig();
    answer();
    project.write('src/c.ts', 'c\n');
    changes.record([{ path: 'src/c.ts', created: true }]);
    expect(answer().changed).toEqual(['src', 'src/c.ts']);
  });

  it('finds, with no event at all, a change outside the root, through another hard link, through a link inside the root, and to an accented name', async () => {
    const { project, outside, answer } = await rig();
    answer();
    appendFileSync(join(outside, 'config.json'), ' ');
    expect(answer().changed).toEqual([join(outside, 'config.json')]);
    appendFileSync(join(outside, 'store-file.js'), ' ');
    // In the evidence's order: by path, so the absolute one first.
    expect(answer().changed).toEqual([join(outside, 'config.json'), 'installed.js']);
    project.write('real/x.js', 'y\n');
    expect(answer().changed).toEqual([join(outside, 'config.json'), 'installed.js', 'lnk/x.js']);
    project.write('caf\u00e9.txt', 'other\n');
    expect(answer().changed).toEqual([join(outside, 'config.json'), 'caf\u00e9.txt', 'installed.js', 'lnk/x.js']);
  });

  it('looks again at every file read after a path is made that may be a new hard link to one: its own path raises no event', async () => {
    const { project, changes, looks, answer } = await rig();
    answer();
    const looked = () => looks.counts.looked;
    // The link asked about before it is written through: the file read is then looked at on every answer.
    mkdirSync(join(project.root, 'other'));
    linkSync(join(project.root, 'src/a.ts'), join(project.root, 'other/b.ts'));
    changes.record([{ path: 'other', created: true }, { path: 'other/b.ts', created: true }]);
    let before = looked();
    expect(answer().changed).toEqual(['.']);
    // The 7 files read, and the root's listing.
    expect(looked() - before).toBe(8);
    appendFileSync(join(project.root, 'other/b.ts'), 'through the other link\n');
    changes.record([{ path: 'other/b.ts', created: false }]);
    expect(answer().changed).toEqual(['.', 'src/a.ts']);
    // Made, written through and removed between two answers: only the made path's event is left to tell.
    linkSync(join(project.root, 'src/b.ts'), join(project.root, 'other/c.ts'));
    appendFileSync(join(project.root, 'other/c.ts'), 'through a link gone since\n');
    rmSync(join(project.root, 'other/c.ts'));
    changes.record([{ path: 'other/c.ts', created: true }, { path: 'other/c.ts', created: false }, { path: 'other/c.ts', created: false }]);
    expect(answer().changed).toEqual(['.', 'src/a.ts', 'src/b.ts']);
    // A file made with one link is no such path: only its directory's listing is looked at again, with what always is.
    project.write('src/new.ts', 'new\n');
    changes.record([{ path: 'src/new.ts', created: true }]);
    before = looked();
    expect(answer().changed).toEqual(['.', 'src', 'src/a.ts', 'src/b.ts']);
    // The 4 always looked at, the listing of src, and the two files just written if still within their racy window.
    expect(looked() - before).toBeGreaterThanOrEqual(5);
    expect(looked() - before).toBeLessThanOrEqual(7);
    expect(looks.counts.full).toBe(1);
  });

  it("takes git's lock files, made and gone under .git/, for no hard link; a link left there still counts", async () => {
    const { project, changes, looks, answer } = await rig();
    answer();
    mkdirSync(join(project.root, '.git'), { recursive: true });
    changes.record([{ path: '.git/index.lock', created: true }, { path: '.git/index.lock', created: false }, { path: '.git/index', created: true }]);
    writeFileSync(join(project.root, '.git/index'), 'index\n');
    let before = looks.counts.looked;
    expect(answer().changed).toEqual([]);
    // The 4 always looked at, not the 7 files read.
    expect(looks.counts.looked - before).toBe(4);
    linkSync(join(project.root, 'src/a.ts'), join(project.root, '.git/kept-link'));
    changes.record([{ path: '.git/kept-link', created: true }]);
    before = looks.counts.looked;
    answer();
    // The 7 files read.
    expect(looks.counts.looked - before).toBe(7);
  });

  it('looks at everything again when an event names a directory above an entry, or the root', async () => {
    const { project, changes, looks, answer } = await rig();
    answer();
    // A directory above an entry replaced by a link to a changed copy: events name only the directory.
    mkdirSync(join(project.root, 'copy/er'), { recursive: true });
    writeFileSync(join(project.root, 'copy/er/file.txt'), 'changed\n');
    rmSync(join(project.root, 'deep'), { recursive: true });
    symlinkSync('copy', join(project.root, 'deep'));
    changes.record([{ path: 'deep', created: false }]);
    expect(answer().changed).toEqual(['.', 'deep/er/file.txt']);
    expect(looks.counts.full).toBe(2);
    changes.record([{ path: '', created: false }]);
    answer();
    expect(looks.counts.full).toBe(3);
  });

  it('looks at everything again once events may have been missed, or cannot be trusted', async () => {
    const { project, changes, looks, answer } = await rig();
    answer();
    project.write('src/b.ts', 'B\n');
    changes.lose();
    expect(answer().changed).toEqual(['src/b.ts']);
    expect(looks.counts.full).toBe(2);
    changes.trust(false);
    project.write('src/a.ts', 'A\n');
    expect(answer().changed).toEqual(['src/a.ts', 'src/b.ts']);
    expect(answer().changed).toEqual(['src/a.ts', 'src/b.ts']);
    expect(looks.counts).toMatchObject({ full: 4, partial: 0 });
  });

  it('looks at evidence stored out of order whole, every time', async () => {
    const { project, recorded, digest, changes } = await rig();
    const looks = new KeptEvidence(project.root, new MemoryStatCache(), changes);
    const reversed = recorded.slice().reverse();
    looks.verify(reversed, digest);
    looks.verify(reversed, digest);
    expect(looks.counts).toMatchObject({ full: 2, partial: 0 });
  });

  it("looks at everything again past the change log's length", async () => {
    const { project, changes, looks, answer } = await rig();
    answer();
    project.write('src/b.ts', 'B\n');
    changes.record(Array.from({ length: 5_000 }, (_, index) => ({ path: `elsewhere/${index}`, created: false })));
    expect(answer().changed).toEqual(['src/b.ts']);
    expect(looks.counts.full).toBe(2);
  });
});
