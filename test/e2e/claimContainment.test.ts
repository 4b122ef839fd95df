import { linkSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseClaim } from '../../src/core/claimInput.js';
import { ClaimError } from '../../src/core/claimError.js';
import { containClaimPaths, containClaimPathsOnDisk, sweepLeftovers } from '../../src/prove/draftPaths.js';
import { processAlive } from '../../src/fs/processStart.js';
import { demoWorkspace, readClaim } from '../helpers/claims.js';
import { REPO, type TempProject } from '../helpers/project.js';

/** The liveness check the api gives the prover. */
const alive = (pid: number) => processAlive(pid, null);

/*
 * A claim path must not lead out of the workspace through a symbolic link,
 * and the sweep of vouch's leftovers must never delete through one: the
 * files outside keep their bytes and their times after every step.
 */

/** Names a dead pid would leave (pids this high are not running on a test machine). */
const LEFTOVERS = ['keep.vouch-99999-abcdefabcdef.ts', 'notes.vouch-99997-aaaaaaaaaaaa.md'];
const PAST = new Date('2020-01-02T03:04:05Z');

interface Outside {
  dir: string;
  files: string[];
  /** Fails the test when any file outside is gone, or its bytes, mtime, ctime or link count changed. */
  expectUntouched(): void;
}

const outsides: string[] = [];
/** A directory under the repo's .tmp/ but outside every workspace, holding leftover-shaped files (in `sub`, when given). */
function outside(sub = ''): Outside {
  const dir = realpathSync(mkdtempSync(join(REPO, '.tmp', 'outside-')));
  outsides.push(dir);
  mkdirSync(join(dir, sub), { recursive: true });
  const files = LEFTOVERS.map((name) => join(dir, sub, name));
  for (const file of files) {
    writeFileSync(file, `precious ${file}\n`);
    utimesSync(file, PAST, PAST);
  }
  const before = files.map((file) => ({ file, stat: statSync(file) }));
  return {
    dir,
    files,
    expectUntouched() {
      for (const { file, stat } of before) {
        expect(readFileSync(file, 'utf8')).toBe(`precious ${file}\n`);
        const now = statSync(file);
        expect([now.mtimeMs, now.ctimeMs, now.nlink, now.ino], file).toEqual([stat.mtimeMs, stat.ctimeMs, stat.nlink, stat.ino]);
      }
    },
  };
}

afterAll(() => {
  for (const dir of outsides) rmSync(dir, { recursive: true, force: true });
});

function refusal(fn: () => unknown): ClaimError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ClaimError);
    return error as ClaimError;
  }
  throw new Error('expected a refusal');
}

describe('vouch prove: a claim path through a symbolic link that leads outside', () => {
  let app: TempProject;
  beforeAll(() => {
    app = demoWorkspace('containment');
  });
  afterAll(() => app?.remove());
  afterEach(() => {
    for (const link of ['linkdir', 'a']) rmSync(join(app.root, link), { force: true });
  });

  /** Proves `claim` with the real CLI; the refusal must name the member and the link, and leave everything outside as it was. */
  function expectRefused(claim: unknown, member: string, link: string, target: string, place: Outside): void {
    app.write('hostile.json', JSON.stringify(claim));
    const result = app.vouch(['prove', 'hostile.json', '--json']);
    place.expectUntouched();
    expect(result.code, result.stderr).toBe(2);
    const error = JSON.parse(result.stdout).error;
    expect(error).toMatchObject({ origin: 'workspace', code: 'refused' });
    expect(error.message).toContain(`${member} `);
    expect(error.message).toContain(join(app.root, link));
    expect(error.message).toContain(target);
    expect(result.stderr).toMatch(/^vouch: \[workspace\] refused: /);
  }

  it('a draft under a linked directory: refused, naming the member and the link; the files outside keep their bytes and times', () => {
    const place = outside();
    symlinkSync(place.dir, join(app.root, 'linkdir'));
    const claim = readClaim(app, 'discount-cap');
    claim.case.drafts.unshift({ path: 'linkdir/evil.ts', text: 'export const evil = 1;\n' });
    expectRefused(claim, 'case.drafts[0].path', 'linkdir', place.dir, place);
  });

  it('the test under a linked directory: refused the same way', () => {
    const place = outside();
    symlinkSync(place.dir, join(app.root, 'linkdir'));
    const claim = readClaim(app, 'discount-cap');
    claim.case.test.path = 'linkdir/evil.test.ts';
    expectRefused(claim, 'case.test.path', 'linkdir', place.dir, place);
  });

  it('a linked parent of a parent (a/b/evil.ts, where a is the link): refused, naming a', () => {
    const place = outside('b');
    symlinkSync(place.dir, join(app.root, 'a'));
    const claim = readClaim(app, 'discount-cap');
    claim.control.drafts.push({ path: 'a/b/evil.ts', text: 'export const evil = 2;\n' });
    expectRefused(claim, 'control.drafts[1].path', 'a', place.dir, place);
  });
});

describe('containment on disk', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(REPO, '.tmp', 'contain-'));
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'tsconfig.json'), '{}\n');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const claim = (overrides: Record<string, unknown> = {}) =>
    containClaimPaths(
      parseClaim({
        case: { drafts: [{ path: 'src/a.ts', text: 'a' }], test: { path: 'test/a.test.ts', text: 't' } },
        control: { drafts: [{ path: 'src/a.ts', text: 'b' }], stage: 'runtime', reason: 'r' },
        ...overrides,
      }),
    );

  it('accepts real directories, missing ones, and links that stay inside the workspace', () => {
    symlinkSync('src', join(root, 'inner'));
    try {
      expect(() => containClaimPathsOnDisk(root, claim())).not.toThrow();
      expect(() => containClaimPathsOnDisk(root, claim({ case: { drafts: [{ path: 'inner/deep/new.ts', text: 'a' }], test: { path: 'test/a.test.ts', text: 't' } } }))).not.toThrow();
    } finally {
      rmSync(join(root, 'inner'));
    }
  });

  it('refuses the project, a drafted file that is itself a link out, and a dangling link, each by member', () => {
    const place = outside();
    symlinkSync(place.dir, join(root, 'out'));
    symlinkSync(place.files[0]!, join(root, 'src', 'linked.ts'));
    symlinkSync(join(place.dir, 'gone'), join(root, 'dangling'));
    try {
      const project = refusal(() => containClaimPathsOnDisk(root, claim({ project: 'out/tsconfig.json' })));
      expect(project.detail).toMatch(/^project "out\/tsconfig\.json" crosses the symbolic link /);
      expect(project.detail).toContain(join(root, 'out'));
      const file = refusal(() => containClaimPathsOnDisk(root, claim({ control: { drafts: [{ path: 'src/linked.ts', text: 'x' }], stage: 'runtime', reason: 'r' } })));
      expect(file.detail).toMatch(/^control\.drafts\[0\]\.path /);
      expect(file.detail).toContain(place.files[0]!);
      const dangling = refusal(() => containClaimPathsOnDisk(root, claim({ case: { drafts: [{ path: 'dangling/x.ts', text: 'a' }], test: { path: 'test/a.test.ts', text: 't' } } })));
      expect(dangling.detail).toMatch(/^case\.drafts\[0\]\.path /);
      expect(dangling.detail).toContain(join(root, 'dangling'));
    } finally {
      for (const link of ['out', 'src/linked.ts', 'dangling']) rmSync(join(root, link));
    }
    place.expectUntouched();
  });
});

describe('the sweep never deletes through a link', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(REPO, '.tmp', 'sweep-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('a link swapped in for a parent after containment: nothing outside is touched', () => {
    const place = outside('b');
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    const contained = claimOf('a/b/evil.ts');
    expect(() => containClaimPathsOnDisk(root, contained)).not.toThrow();
    // The race: between the check and the sweep, a/ becomes a link to the outside directory.
    renameSync(join(root, 'a'), join(root, 'a-real'));
    symlinkSync(place.dir, join(root, 'a'));
    expect(sweepLeftovers(join(root, 'a', 'b'), root, alive)).toEqual([]);
    place.expectUntouched();
    // The last component swapped as well: still nothing.
    expect(sweepLeftovers(join(root, 'a'), root, alive)).toEqual([]);
    rmSync(join(root, 'a'));
    symlinkSync(join(place.dir, 'b'), join(root, 'a-real', 'c'));
    expect(sweepLeftovers(join(root, 'a-real', 'c'), root, alive)).toEqual([]);
    place.expectUntouched();
  });

  it('a workspace leftover that is a hard link to a file outside is left alone, and so is the file outside', () => {
    const place = outside();
    const inside = join(root, 'hard');
    mkdirSync(inside);
    linkSync(place.files[0]!, join(inside, LEFTOVERS[0]!));
    // Linking raised the outside file's link count and ctime: that is the state the sweep must keep.
    const before = statSync(place.files[0]!);
    writeFileSync(join(inside, LEFTOVERS[1]!), 'a real leftover of a dead prover\n');
    expect(sweepLeftovers(inside, root, alive)).toEqual([LEFTOVERS[1]]);
    const after = statSync(place.files[0]!);
    expect([after.nlink, after.ctimeMs]).toEqual([before.nlink, before.ctimeMs]);
    expect(readFileSync(join(inside, LEFTOVERS[0]!), 'utf8')).toBe(`precious ${place.files[0]}\n`);
  });

  it('a directory outside the workspace is never swept, even when named directly', () => {
    const place = outside();
    expect(() => sweepLeftovers(place.dir, root, alive)).toThrow(/outside the workspace/);
    place.expectUntouched();
  });
});

function claimOf(path: string) {
  return containClaimPaths(
    parseClaim({
      case: { drafts: [{ path, text: 'a' }], test: { path: 'test/a.test.ts', text: 't' } },
      control: { drafts: [{ path, text: 'b' }], stage: 'runtime', reason: 'r' },
    }),
  );
}
