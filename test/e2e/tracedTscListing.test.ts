import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceAvailability } from '../../src/exec/trace/tracer.js';
import { configText, type Json } from '../helpers/answers.js';
import { inProcess, statusIn } from '../helpers/inProcess.js';
import { until } from '../helpers/observer.js';
import { cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';
import { newestChangeMs, SETTLE_MS } from '../helpers/settle.js';

/*
 * False CURRENT answers of traced tsc receipts whose listings were bound only to the names tsc
 * can include (src/core/listingNames.ts), each made deterministic: a dot file appears in a
 * directory tsc listed, and the rerun acts on it.
 * - A config read by tsc is a config whatever its name: `extends: "./base.ts"` and
 *   `-p tsconfig.app.ts` are read as JSON, and an include of theirs can match dot names (found by
 *   test/integration/tscListingCampaign.test.ts).
 * - A preload in NODE_OPTIONS that reads no file (a data: URL) runs before tsc in its process and
 *   can act on any name, whether vouch's environment has it or the check's command sets it for
 *   the process it starts (seen in the exec's environment, which the tracer prints whole).
 *
 * The runs and the questions run in this process (test/helpers/inProcess.ts), each with the
 * command's env, NODE_OPTIONS included: vouch hands its check the command's env, as a process
 * hands on its own, and the preload only acts in tsc's process. A traced run waits first until
 * the last edit is settled (runIn says why).
 */

const availability = traceAvailability();
const TITLE = availability.available ? 'traced tsc: configs whatever their names' : `traced tsc: configs whatever their names (SKIPPED: tracing cannot run here: ${availability.code}: ${availability.message})`;

const TSC = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
const OPTIONS = { noLib: true, types: [], strict: true, noEmit: true };
const GLOBALS = 'interface Array<T> {}\ninterface Boolean {}\ninterface CallableFunction {}\ninterface Function {}\ninterface IArguments {}\ninterface NewableFunction {}\ninterface Number {}\ninterface Object {}\ninterface RegExp {}\ninterface String {}\n';
const json = (value: unknown) => JSON.stringify(value, null, 2) + '\n';

const CHECKS = {
  // A config extending one named like a program file, whose include matches dot names.
  extends: ['--noEmit', '-p', 'tsconfig.json'],
  // The project named directly by a config named like a program file.
  project: ['--noEmit', '-p', 'tsconfig.app.ts'],
  // A plain config, run with the preload below.
  preload: ['--noEmit', '-p', 'tsconfig.plain.json'],
  // The same preload, set by the check's own command for the process it starts.
  'inner-preload': ['--noEmit', '-p', 'tsconfig.plain.json'],
};

/** In tsc's process only (vouch's own runs it too), before tsc: fails when the root holds `.late.ts`, a name it found by listing. */
const PRELOAD = `import { readdirSync } from 'node:fs'; if (process.argv[1].endsWith('tsc') && readdirSync('src').includes('.late.ts')) process.exit(3);`;
const ENVS: Record<string, NodeJS.ProcessEnv> = {
  preload: { NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(PRELOAD)}` },
};
const envOf = (name: string) => cleanEnv(ENVS[name] ?? (name === 'inner-preload' ? ENVS.preload : {}));
/** The check's command: tsc itself, or a shell that sets NODE_OPTIONS for the tsc it starts (vouch's own environment has none). */
const commandOf = (name: string, args: string[]) =>
  name === 'inner-preload' ? ['sh', '-c', `NODE_OPTIONS=${JSON.stringify(ENVS.preload!.NODE_OPTIONS)} exec node ${JSON.stringify(TSC)} ${args.join(' ')}`] : ['node', TSC, ...args];
/** What vouch runs with: the inner preload's is set by its command alone. */
const vouchEnvOf = (name: string) => (name === 'inner-preload' ? cleanEnv() : envOf(name));

/**
 * A traced run takes a file it read whose ctime is not before its start, less a clock slack of
 * 20 ms (fs/runEvidence.ts), for one changed while it ran. A run through the CLI starts long after
 * the test's last write (a Node start and vouch's loading); one in this process may start a few
 * milliseconds after it. So it first waits until nothing in the project changed within SETTLE_MS.
 */


async function runIn(p: TempProject, args: string[], env: NodeJS.ProcessEnv) {
  const newest = newestChangeMs(p.root);
  await until(() => Date.now() > newest + SETTLE_MS, `the last edit to be ${SETTLE_MS} ms old`, 5_000, 5);
  return await inProcess(p).vouch(args, { env });
}

/** A status question, in this process. */
const statusOf = (p: TempProject, check: string, env: NodeJS.ProcessEnv) => statusIn(inProcess(p), check, env);

describe(TITLE, () => {
  let project: TempProject;

  const tsc = (name: string, args: string[]) => spawnSync('node', [TSC, ...args], { cwd: project.root, env: envOf(name), encoding: 'utf8' });

  beforeAll(async () => {
    if (!availability.available) return;
    project = tempProject('traced-tsc-listing', {
      'tsconfig.json': json({ extends: './base.ts' }),
      'base.ts': json({ compilerOptions: OPTIONS, include: ['src/*.*'] }),
      'tsconfig.app.ts': json({ compilerOptions: OPTIONS, include: ['src/*.*'] }),
      'tsconfig.plain.json': json({ compilerOptions: OPTIONS, include: ['src'] }),
      'src/index.ts': 'export const a = 1;\n',
      'src/globals.d.ts': GLOBALS,
      'vouch.config.json': configText(Object.entries(CHECKS).map(([name, args]) => ({ name, kind: 'typecheck', command: commandOf(name, args), mode: 'traced' }))),
    });
    expect((await inProcess(project).vouch(['status'])).code).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 150));
    for (const name of Object.keys(CHECKS)) {
      const ran = await runIn(project, ['run', name], vouchEnvOf(name));
      expect(ran.code, `vouch run ${name}:\n${ran.stdout}\n${ran.stderr}`).toBe(0);
    }
  });

  afterAll(() => project?.remove());

  it.each(Object.entries(CHECKS))('%s: a new dot file in a directory tsc listed makes it STALE (the rerun fails on it)', async (name, args) => {
    expect((await statusOf(project, name, vouchEnvOf(name))).freshness).toBe('CURRENT');
    const dotted = join(project.root, 'src', '.late.ts');
    writeFileSync(dotted, 'export const late: number = "not a number";\n');
    try {
      const rerun = tsc(name, args);
      expect(rerun.status, 'the rerun acts on the dot file').not.toBe(0);
      const found: Json = await statusOf(project, name, vouchEnvOf(name));
      expect(found.freshness, JSON.stringify(found.reasons)).toBe('STALE');
    } finally {
      rmSync(dotted);
    }
    expect((await statusOf(project, name, vouchEnvOf(name))).freshness).toBe('CURRENT');
  });
});
