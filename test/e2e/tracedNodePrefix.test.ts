import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceAvailability } from '../../src/exec/trace/tracer.js';
import { configText } from '../helpers/answers.js';
import { CLI, cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';

/*
 * A global tool in a Node installation of the user's own (nvm, n, asdf: PREFIX/bin/node, and
 * `npm install -g` puts packages in PREFIX/lib/node_modules). The issue names "a global tool" among
 * the reads outside the root a traced receipt must see: leaving the Node installation out (its
 * version is in the context) must not leave out what `npm install -g` put there.
 *
 * The installation is a copy of the running node in a directory of the test's own, so that vouch
 * and the check both run from it as they would from ~/.nvm/versions/node/vX.
 */

const availability = traceAvailability();
const TITLE = availability.available ? 'traced receipts and a Node installation of the user’s own' : `traced receipts and a Node installation of the user’s own (SKIPPED: tracing cannot run here: ${availability.code}: ${availability.message})`;

describe(TITLE, () => {
  let prefix: string;
  let project: TempProject;
  let env: NodeJS.ProcessEnv;
  const tool = () => join(prefix, 'lib', 'node_modules', 'gtool');

  const vouch = (args: string[]) => {
    const result = spawnSync(join(prefix, 'bin', 'node'), [CLI, ...args], { cwd: project.root, env, encoding: 'utf8', timeout: 120_000 });
    if (result.error) throw result.error;
    return result;
  };
  const freshness = () => {
    const out = JSON.parse(vouch(['status', 'check', '--json']).stdout);
    return out.checks[0];
  };
  const printed = (stdout: string) => JSON.parse(stdout.split('\n').find((line) => line.startsWith('{"tool"')) ?? '{}').tool;

  beforeAll(async () => {
    if (!availability.available) return;
    mkdirSync(join(REPO, '.tmp'), { recursive: true });
    prefix = mkdtempSync(join(REPO, '.tmp', 'node-prefix-'));
    mkdirSync(join(prefix, 'bin'));
    copyFileSync(process.execPath, join(prefix, 'bin', 'node'));
    chmodSync(join(prefix, 'bin', 'node'), 0o755);
    mkdirSync(tool(), { recursive: true });
    writeFileSync(join(tool(), 'package.json'), '{ "name": "gtool", "version": "1.0.0", "main": "index.js" }\n');
    writeFileSync(join(tool(), 'index.js'), "module.exports = 'global tool 1';\n");
    env = cleanEnv({ PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH ?? ''}` });
    project = tempProject('traced-node-prefix', {
      'check.mjs': `import { createRequire } from 'node:module';\nconst tool = createRequire(import.meta.url)(${JSON.stringify(tool())});\nprocess.stdout.write(JSON.stringify({ tool }) + '\\n');\n`,
      'vouch.config.json': configText([{ name: 'check', kind: 'custom', command: ['node', 'check.mjs'], mode: 'traced' }]),
    });
    // The state dir made first, outside the run's clock slack.
    vouch(['status']);
    await new Promise((resolve) => setTimeout(resolve, 150));
  });

  afterAll(() => {
    project?.remove();
    if (prefix) rmSync(prefix, { recursive: true, force: true });
  });

  it.skipIf(!availability.available)('a package installed globally (PREFIX/lib/node_modules) that the check requires is in its evidence: changing it is not CURRENT', () => {
    const run = vouch(['run', 'check']);
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(printed(run.stdout)).toBe('global tool 1');
    expect(freshness().freshness).toBe('CURRENT');

    writeFileSync(join(tool(), 'index.js'), "module.exports = 'global tool 2';\n");
    const again = spawnSync(join(prefix, 'bin', 'node'), ['check.mjs'], { cwd: project.root, env, encoding: 'utf8' });
    expect(printed(again.stdout), 'the check now prints something else').toBe('global tool 2');
    const found = freshness();
    expect(found.freshness, `a false CURRENT: the global tool changed; ${JSON.stringify(found.reasons)}`).not.toBe('CURRENT');
  });
});
