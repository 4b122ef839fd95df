import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Claim, Issue, Stage } from '../../src/core/claim.js';
import { ClaimError } from '../../src/core/claimError.js';
import { parseClaim } from '../../src/core/claimInput.js';
import { processAlive } from '../../src/fs/processStart.js';
import { Prover, type StageFactories } from '../../src/prove/prover.js';
import type { Inspection, StageInstance, Tool } from '../../src/prove/stage.js';
import { REPO } from '../helpers/project.js';

/*
 * The coordinator against scripted stages: how it orders phases, owns
 * deadlines, replaces a stage, and refuses before any stage runs. The real
 * tools are exercised in the stage tests and test/prove.test.ts.
 */

let workspace: string;
beforeAll(() => {
  mkdirSync(join(REPO, '.tmp'), { recursive: true });
  workspace = mkdtempSync(join(REPO, '.tmp', 'prover-'));
  writeFileSync(join(workspace, 'tsconfig.json'), '{}\n');
});
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

type Script = (inspection: Inspection, stage: ScriptedStage) => Promise<Issue[]>;

class ScriptedStage implements StageInstance {
  inspections: Inspection[] = [];
  destroyed = false;
  /** Set by a test: the tool was upgraded since this stage warmed. */
  upgraded = false;
  stale(): boolean {
    return this.upgraded;
  }
  moved = 0;
  constructor(
    readonly stage: Stage,
    private readonly script: Script,
  ) {}
  async warm(): Promise<Tool> {
    return { name: this.stage === 'lint' ? 'oxlint' : this.stage, version: '1.0.0' };
  }
  inspect(inspection: Inspection): Promise<Issue[]> {
    this.inspections.push(inspection);
    return this.script(inspection, this);
  }
  progress(): number {
    return this.moved;
  }
  /** What destroy() ends: a real stage rejects its pending inspection when it is destroyed. */
  readonly pending = new Set<(error: Error) => void>();
  async destroy(): Promise<void> {
    this.destroyed = true;
    for (const reject of this.pending) reject(new ClaimError('instrument', 'destroyed', 'destroyed'));
  }
  optionsDigest(): Promise<string> {
    return Promise.resolve('0123456789abcdef');
  }
}

const clean: Script = async () => [];
/** Breaks exactly where a control of this claim says it breaks: a claimant issue at `stage` for the control only. */
const breaksAt =
  (stage: Stage): Script =>
  async (inspection, self) =>
    inspection.phase === 'control' && self.stage === stage ? [{ origin: 'claimant', stage, message: 'broken', path: 'src/a.ts', line: 1 }] : [];
const never: Script = (_inspection, self) => new Promise((_resolve, reject) => self.pending.add(reject));

function harness(scripts: Partial<Record<Stage, Script>>, deadlineMs = 5_000, runtimeLanes: 1 | 2 = 2) {
  const made: ScriptedStage[] = [];
  const make = (stage: Stage) => (ws: string) => {
    expect(ws).toBe(workspace);
    const instance = new ScriptedStage(stage, scripts[stage] ?? clean);
    made.push(instance);
    return instance;
  };
  const factories: StageFactories = { type: make('type') as StageFactories['type'], lint: make('lint'), runtime: make('runtime') };
  const prover = new Prover(workspace, { factories, deadlines: { inspectMs: deadlineMs }, runtimeLanes, processAlive: (pid) => processAlive(pid, null) });
  return { prover, made, of: (stage: Stage) => made.filter((instance) => instance.stage === stage) };
}

function claim(overrides: Partial<Claim> = {}): Claim {
  return parseClaim({
    case: { drafts: [{ path: 'src/a.ts', text: 'export const a = 1;\n' }], test: { path: 'test/a.test.ts', text: 'test\n' } },
    control: { drafts: [{ path: 'src/a.ts', text: 'export const a = 2;\n' }], stage: 'runtime', reason: 'a must be 1' },
    ...overrides,
  });
}

describe('the prover', () => {
  it('a warming and a prove both waiting on a stage stuck in warming replace it once', async () => {
    const made: ScriptedStage[] = [];
    let release = () => {};
    const make = (stage: Stage) => () => {
      const instance = new ScriptedStage(stage, clean);
      // The first runtime stage does not finish warming until the test is done with it.
      if (stage === 'runtime' && !made.some((other) => other.stage === 'runtime')) {
        instance.warm = () => new Promise<Tool>((resolve) => (release = () => resolve({ name: 'vitest', version: '1.0.0' })));
      }
      made.push(instance);
      return instance;
    };
    const factories: StageFactories = { type: make('type') as StageFactories['type'], lint: make('lint'), runtime: make('runtime') };
    const prover = new Prover(workspace, { factories, deadlines: { warmMs: 300 }, runtimeLanes: 1, processAlive: (pid) => processAlive(pid, null) });
    const warming = prover.warm(undefined, 'first').then(() => null, (error: unknown) => error as ClaimError);
    const proving = prover.prove(claim()).then(() => null, (error: unknown) => error as ClaimError);
    expect((await warming)?.code).toBe('deadline');
    expect((await proving)?.code).toBe('deadline');
    // The stuck stage was replaced by one fresh stage, not twice over.
    expect(made.filter((instance) => instance.stage === 'runtime')).toHaveLength(2);
    expect(made.filter((instance) => instance.stage === 'runtime')[0]!.destroyed).toBe(true);
    release();
    await prover.close();
  });

  it("warm(project, 'first') leaves the spare runtime lane for after the first prove; a prove queued behind the warming says it was cold", async () => {
    const { prover, of } = harness({ runtime: breaksAt('runtime') });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const spare = of('runtime')[1]!;
    const warmed: string[] = [];
    for (const instance of [...of('type'), ...of('lint'), ...of('runtime')]) {
      const warm = instance.warm.bind(instance);
      instance.warm = async (project?: string) => {
        await gate;
        warmed.push(instance === spare ? 'spare runtime' : project === undefined ? instance.stage : `${instance.stage} baseline`);
        return warm();
      };
    }
    const warming = prover.warm(join(workspace, 'tsconfig.json'), 'first');
    const proving = prover.prove(claim());
    open();
    await warming;
    // The compiler loads, then the baseline is built: once, though the prove needed it too.
    expect(warmed.sort()).toEqual(['lint', 'runtime', 'type', 'type baseline']);
    const first = await proving;
    expect(first.receipt.receipt).not.toBeNull();
    expect(warmed.filter((what) => what === 'type baseline')).toHaveLength(1);
    // Every lane was ready when it was judged, but it waited for the warming: cold all the same.
    expect(first.cold).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(warmed).toContain('spare runtime');
    expect((await prover.prove(claim())).cold).toBe(false);
    await prover.close();
  });

  it('judges the case, then the control, at every stage, and mints a receipt when the control breaks where declared', async () => {
    const { prover, of } = harness({ runtime: breaksAt('runtime') });
    const result = await prover.prove(claim());
    // The second runtime lane is not waited for when cold: the first takes both phases, and the second warms afterwards.
    const phases = () => of('runtime').map((instance) => instance.inspections.map((inspection) => inspection.phase));
    expect(phases()).toEqual([['case', 'control'], []]);
    await new Promise((resolve) => setTimeout(resolve, 0));
    await prover.prove(claim());
    expect(phases()).toEqual([['case', 'control', 'case'], ['control']]);
    expect(result.verdict.checks.map((check) => `${check.phase}/${check.stage}`)).toEqual([
      'case/type',
      'case/lint',
      'case/runtime',
      'control/type',
      'control/lint',
      'control/runtime',
    ]);
    expect(result.receipt.receipt).toMatch(/^vouch-claim:[0-9a-f]{64}:runtime:typescript@1\.0\.0:oxlint@1\.0\.0:vitest@1\.0\.0:config@[0-9a-f]{32}:tsconfig\.json@0123456789abcdef$/);
    const runtime = of('lint')[0]!;
    // Each phase sees its own drafts plus the case's test, under absolute paths and a fresh revision.
    expect(runtime.inspections.slice(0, 2).map((inspection) => [...inspection.overlay.files.values()][0])).toEqual(['export const a = 1;\n', 'export const a = 2;\n']);
    expect([...runtime.inspections[1]!.overlay.files.keys()]).toEqual([join(workspace, 'src/a.ts'), join(workspace, 'test/a.test.ts')]);
    expect(runtime.inspections[0]!.overlay.revision).not.toBe(runtime.inspections[1]!.overlay.revision);
    expect(runtime.inspections[0]!.project).toBe(join(workspace, 'tsconfig.json'));
    expect(result.cold).toBe(true);
    expect((await prover.prove(claim())).cold).toBe(false);
    expect(of('runtime').every((instance) => !instance.destroyed)).toBe(true);
    await prover.close();
  });

  it('mints no receipt when the control breaks at another stage, and says why', async () => {
    const { prover } = harness({ type: breaksAt('type') });
    const result = await prover.prove(claim());
    expect(result.receipt.receipt).toBeNull();
    expect(result.receipt.receipt === null && result.receipt.why.join('\n')).toMatch(/did not break at its declared runtime stage[\s\S]*also breaks at the type stage/);
    await prover.close();
  });

  it('the token names the judges\' config: a lint rule turned on between two proves changes it; the same config gives the same token', async () => {
    const { prover } = harness({ runtime: breaksAt('runtime') });
    const config = join(workspace, '.oxlintrc.json');
    try {
      writeFileSync(config, '{ "rules": {} }\n');
      const before = await prover.prove(claim());
      const again = await prover.prove(claim());
      writeFileSync(config, '{ "rules": { "no-debugger": "error" } }\n');
      const after = await prover.prove(claim());
      expect(before.receipt.receipt).not.toBeNull();
      expect(again.receipt.receipt).toBe(before.receipt.receipt);
      expect(after.receipt.receipt).not.toBeNull();
      expect(after.receipt.receipt).not.toBe(before.receipt.receipt);
      expect(after.verdict.digest).toBe(before.verdict.digest);
      expect(after.verdict.config.files).toContain('.oxlintrc.json');
    } finally {
      rmSync(config, { force: true });
      await prover.close();
    }
  });

  it('a baseline workspace issue does not block a receipt; a draft the tool did not judge leaves the check incomplete, and blocks it', async () => {
    const baseline: Script = async (inspection, self) => [
      { origin: 'workspace', stage: self.stage, path: 'src/old.ts', message: 'already broken on disk' },
      ...(await breaksAt('runtime')(inspection, self)),
    ];
    const judged = harness({ lint: baseline, runtime: breaksAt('runtime') });
    const minted = await judged.prover.prove(claim());
    expect(minted.receipt.receipt).not.toBeNull();
    expect(minted.verdict.checks.every((check) => check.completed)).toBe(true);
    await judged.prover.close();

    const ignored: Script = async (_inspection, self) => [{ origin: 'workspace', stage: self.stage, path: 'src/a.ts', message: 'ignored', unjudged: true }];
    const blind = harness({ lint: ignored, runtime: breaksAt('runtime') });
    const refused = await blind.prover.prove(claim());
    expect(refused.receipt.receipt).toBeNull();
    expect(refused.verdict.checks.filter((check) => !check.completed).map((check) => `${check.phase}/${check.stage}`)).toEqual(['case/lint', 'control/lint']);
    expect(refused.receipt.receipt === null && refused.receipt.why).toContain('the case inspection at the lint stage did not complete');
    await blind.prover.close();
  });

  it('blames the claimant when a stage runs past its deadline after it began on the drafts, and replaces the stage', async () => {
    const { prover, of } = harness(
      {
        runtime: (inspection, self) => {
          if (inspection.phase === 'case') return Promise.resolve([]);
          self.moved += 1;
          return never(inspection, self);
        },
      },
      300,
    );
    const error = await prover.prove(claim()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ClaimError);
    expect((error as ClaimError).origin).toBe('claimant');
    expect((error as ClaimError).code).toBe('deadline');
    // The claimant's runaway code is a refusal like any other, not a timeout worth retrying.
    expect((error as ClaimError).exitCode).toBe(2);
    expect((error as ClaimError).message).toMatch(/^\[claimant\] deadline: the runtime stage's inspection of the control did not finish within 300 ms/);
    // Cold, the first runtime lane judged both phases; it was replaced, and the spare lane was left alone.
    expect(of('runtime')).toHaveLength(3);
    expect(of('runtime').map((instance) => instance.destroyed)).toEqual([true, false, false]);
    // The other stages are untouched and the replacement is warmed on the next prove.
    expect(of('type')).toHaveLength(1);
    await prover.close();
  });

  it('blames the instrument when a stage runs past its deadline without progress', async () => {
    const { prover } = harness({ type: never }, 300);
    const error = (await prover.prove(claim()).catch((caught: unknown) => caught)) as ClaimError;
    expect([error.origin, error.code]).toEqual(['instrument', 'deadline']);
    // Nobody's bug and nobody's claim: a slow tool or a loaded machine, worth another try (EX_TEMPFAIL).
    expect(error.exitCode).toBe(75);
    expect(error.message).toMatch(/the type stage's inspection of the case/);
    await prover.close();
  });

  it('refuses a control identical to its case before any stage inspects it', async () => {
    const { prover, made } = harness({});
    const same = claim({ control: { drafts: [{ path: './src/a.ts', text: 'export const a = 1;\n' }], stage: 'type', reason: 'x' } });
    await expect(prover.prove(same)).rejects.toThrow(/^\[claimant\] refused: control\.drafts are byte-identical/);
    expect(made.every((instance) => instance.inspections.length === 0)).toBe(true);
    await prover.close();
  });

  it.each([
    ['/etc/passwd', /case\.drafts\[0\]\.path is absolute/],
    ['../outside.ts', /case\.drafts\[0\]\.path leaves the workspace/],
    ['src/\0.ts', /case\.drafts\[0\]\.path holds a NUL byte/],
  ])('refuses the hostile draft path %j before any stage inspects it', async (path, message) => {
    const { prover, made } = harness({});
    const hostile = claim({ case: { drafts: [{ path, text: 'x' }], test: { path: 'test/a.test.ts', text: 't' } } });
    await expect(prover.prove(hostile)).rejects.toThrow(message);
    expect(made.every((instance) => instance.inspections.length === 0)).toBe(true);
    await prover.close();
  });

  it('sweeps what a dead prover left beside the claim\'s files, and nothing else', async () => {
    mkdirSync(join(workspace, 'test'), { recursive: true });
    // pid 2^22 + 1 is above Linux's pid_max, so no process has it.
    const dead = join(workspace, 'test', 'a.vouch-4194305-abcdefabcdef.test.ts');
    const live = join(workspace, 'test', `a.vouch-${process.pid}-abcdefabcdef.test.ts`);
    const mine = join(workspace, 'test', 'a.test.ts');
    for (const path of [dead, live, mine]) writeFileSync(path, 'x');
    const { prover } = harness({});
    await prover.prove(claim());
    expect([existsSync(dead), existsSync(live), existsSync(mine)]).toEqual([false, true, true]);
    await prover.close();
  });

  it('replaces a stage whose tool was upgraded since it warmed, before it judges again', async () => {
    const { prover, of } = harness({});
    await prover.prove(claim());
    of('lint')[0]!.upgraded = true;
    const result = await prover.prove(claim());
    expect(of('lint').map((instance) => [instance.destroyed, instance.inspections.length])).toEqual([
      [true, 2],
      [false, 2],
    ]);
    expect(result.cold).toBe(true);
    await prover.close();
  });

  it('says the project is missing, naming it', async () => {
    const { prover } = harness({});
    await expect(prover.prove(claim({ project: 'tsconfig.app.json' }))).rejects.toThrow(/^\[claimant\] missing: project "tsconfig\.app\.json" is not a file/);
    await prover.close();
  });

  it('passes a stage error through with its origin and code, after the other stages settle', async () => {
    let settled = 0;
    const { prover } = harness({
      lint: async () => {
        throw new ClaimError('workspace', 'missing', 'no linter');
      },
      runtime: async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        settled += 1;
        return [];
      },
    });
    await expect(prover.prove(claim())).rejects.toThrow('[workspace] missing: no linter');
    // The runtime stage finished both its phases before the error was thrown.
    expect(settled).toBe(2);
    await prover.close();
  });

  it('each stage judges the case before the control, without waiting for the other stages', async () => {
    const events: string[] = [];
    const { prover } = harness({
      type: async (inspection) => {
        events.push(`type ${inspection.phase}`);
        return [];
      },
      runtime: async (inspection) => {
        await new Promise((resolve) => setTimeout(resolve, 100));
        events.push(`runtime ${inspection.phase}`);
        return [];
      },
    }, 5_000, 1);
    await prover.prove(claim());
    expect(events).toEqual(['type case', 'type control', 'runtime case', 'runtime control']);
    await prover.close();
  });

  it('with two runtime lanes, the case and the control run at the same time; with one, in order', async () => {
    for (const lanes of [2, 1] as const) {
      let active = 0;
      let most = 0;
      const { prover, of } = harness(
        {
          runtime: async () => {
            active += 1;
            most = Math.max(most, active);
            await new Promise((resolve) => setTimeout(resolve, 50));
            active -= 1;
            return [];
          },
        },
        5_000,
        lanes,
      );
      await prover.warm();
      await prover.prove(claim());
      expect(of('runtime')).toHaveLength(lanes);
      expect(most).toBe(lanes);
      await prover.close();
    }
  });

  it('runs one prove at a time: the stages are stateful', async () => {
    let active = 0;
    let most = 0;
    const slow: Script = async () => {
      active += 1;
      most = Math.max(most, active);
      await new Promise((resolve) => setTimeout(resolve, 20));
      active -= 1;
      return [];
    };
    const { prover } = harness({ type: slow });
    await Promise.all([prover.prove(claim()), prover.prove(claim()), prover.prove(claim())]);
    expect(most).toBe(1);
    await prover.close();
  });
});

describe('claim input', () => {
  it('names every member it refuses', () => {
    expect(() => parseClaim({ case: { drafts: [{ path: 1, text: 'x' }] }, control: { drafts: [], stage: 'compile', reason: 'r' }, extra: 1 })).toThrow(
      /^\[claimant\] malformed: .*case\.drafts\[0\]\.path must be string.*case\.test is missing.*control\.stage must be one of "type", "lint", "runtime"/,
    );
    expect(() => parseClaim({ case: { drafts: [], test: { path: 't', text: 't' } }, control: { drafts: [], stage: 'type', reason: 'r' }, extra: 1 })).toThrow(
      /the claim has unknown member "extra"/,
    );
  });

  it('defaults the project to tsconfig.json', () => {
    expect(claim().project).toBe('tsconfig.json');
  });
});
