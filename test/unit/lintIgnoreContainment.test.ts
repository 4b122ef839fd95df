import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LinterInputs, oxlintIgnored, oxlintInputs } from '../../src/prove/lintIgnore.js';

/*
 * A repository is untrusted: the files the lint stage reads to decide what a linter ignores and
 * when it must restart are read only inside the workspace. A link or an `extends` that leads
 * elsewhere is not read; it is still watched, by its size, time and inode.
 */
describe('the lint stage reads nothing outside the workspace', () => {
  let base: string;
  let workspace: string;
  let outside: string;

  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'vouch-lint-contained-'));
    workspace = join(base, 'ws');
    outside = join(base, 'elsewhere');
    mkdirSync(join(workspace, 'src'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(workspace, 'src', 'a.ts'), 'export const a = 1;\n');
    expect(spawnSync('git', ['init', '-q'], { cwd: workspace }).status).toBe(0);
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('an ignore file or a config that is a link to a file elsewhere is not read', async () => {
    writeFileSync(join(outside, 'ignore'), 'src/a.ts\n');
    writeFileSync(join(outside, 'config.json'), JSON.stringify({ ignorePatterns: ['src/a.ts'] }));
    symlinkSync(join(outside, 'ignore'), join(workspace, '.eslintignore'));
    symlinkSync(join(outside, 'config.json'), join(workspace, '.oxlintrc.json'));
    expect((await oxlintIgnored(workspace, ['src/a.ts'])).has('src/a.ts')).toBe(false);
    // The same files inside the workspace are read, and ignore the path.
    rmSync(join(workspace, '.eslintignore'));
    writeFileSync(join(workspace, '.eslintignore'), 'src/a.ts\n');
    expect((await oxlintIgnored(workspace, ['src/a.ts'])).get('src/a.ts')).toBe('.eslintignore');
  });

  it("a config that is a link elsewhere is not read for what it extends, and a file elsewhere is watched by its stat", () => {
    writeFileSync(join(outside, 'linked.json'), JSON.stringify({ extends: ['./deeper.json'] }));
    symlinkSync(join(outside, 'linked.json'), join(workspace, '.oxlintrc.json'));
    // Its `extends` would only be known by reading it.
    expect(oxlintInputs(workspace, ['src/a.ts'])).not.toContain(join(workspace, 'deeper.json'));
    rmSync(join(workspace, '.oxlintrc.json'));

    writeFileSync(join(outside, 'shared.json'), JSON.stringify({ extends: [] }));
    writeFileSync(join(workspace, '.oxlintrc.json'), JSON.stringify({ extends: ['../elsewhere/shared.json'] }));
    const inputs = oxlintInputs(workspace, ['src/a.ts']);
    expect(inputs).toContain(join(outside, 'shared.json'));

    const watched = new LinterInputs(workspace);
    watched.reset(inputs);
    expect(watched.changed(inputs)).toBe(false);
    writeFileSync(join(outside, 'shared.json'), JSON.stringify({ extends: [] }) + '\n'.repeat(10));
    utimesSync(join(outside, 'shared.json'), new Date(), new Date(Date.now() + 5_000));
    expect(watched.changed(inputs)).toBe(true);
  });
});
