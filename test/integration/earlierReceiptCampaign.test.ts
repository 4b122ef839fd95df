import { afterEach, describe, expect, it } from 'vitest';
import type { Json } from '../helpers/answers.js';
import { inProcess } from '../helpers/inProcess.js';
import { ObserverTracker, PATIENT } from '../helpers/observer.js';
import { cleanEnv, tempProject, type TempProject } from '../helpers/project.js';
import { mulberry32, testSeed, withSeed } from '../helpers/seed.js';
import { A, EDITED, VERDICT, FILES } from '../helpers/verdictProject.js';

/*
 * After an edit and its revert, the newest receipt made on the same inputs answers, and never
 * another: a random campaign of edits, reverts, context and definition changes, runs and reruns,
 * each step asked of a direct scan and of a running observer. vouch runs in process
 * (test/helpers/inProcess.ts); the observer is a process of its own. The other paths that answer
 * (explain, run --if-due, the hook, MCP) are in test/e2e/earlierReceipt.test.ts.
 */

const projects: TempProject[] = [];
const observers = new ObserverTracker();
afterEach(async () => {
  expect(await observers.cleanup(), 'observers that would not stop').toEqual([]);
  for (const project of projects.splice(0)) project.remove();
});

const SEED = testSeed(import.meta.url, 1919);
const STEPS = 20;

/** What a receipt is bound to: the inputs' contents, the context (MY_SETTING) and the definition (config variant). */
interface State {
  a: string;
  b: string;
  setting: string;
  config: number;
}
const keyOf = (s: State) => JSON.stringify(s);
// Same-size variants too: only the bytes tell them apart.
const A_VARIANTS = [A, 'export const a = 3;\n', EDITED, 'export const a = "bad";\n'];
const B_VARIANTS = ['export const b = 1;\n', 'export const b = 2;\n'];
const CONFIGS = [VERDICT, { ...VERDICT, env: ['MY_SETTING', 'OTHER_SETTING'] }];
const configFile = (variant: number) => JSON.stringify({ schema: 1, packageManager: 'npm', checks: [CONFIGS[variant]] }, null, 2) + '\n';

describe('edit-revert campaign: a CURRENT answer is always the newest run on exactly this state', () => {
  it(`random edits, reverts, context and definition changes, runs and reruns (seed ${SEED.value})`, { timeout: 240_000 }, async () => {
    const base = tempProject('earlier-campaign', FILES);
    projects.push(base);
    const p = inProcess(base);
    const random = mulberry32(SEED.value);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const state: State = { a: A, b: B_VARIANTS[0]!, setting: '1', config: 0 };
    const ranOn = new Map<string, string>();
    /** Run ids in the order they ran. */
    const runs: string[] = [];
    const history: string[] = [];
    let fromEarlier = 0;
    let current = 0;
    observers.start(base);
    await withSeed(SEED, async () => {
      const envNow = (extra: NodeJS.ProcessEnv = {}) => cleanEnv({ MY_SETTING: state.setting, ...extra });
      const runNow = async (args: string[]) => {
        const before = runs.length;
        const result = await p.vouch(['run', 'verdict', ...args, '--no-observer'], { env: envNow() });
        expect([0, 1], `${history.join('\n')}\n${result.stdout}\n${result.stderr}`).toContain(result.code);
        const receipts = (await p.json(['log', 'verdict'])).receipts as Json[];
        if (receipts.length > before) {
          expect(receipts.length).toBe(before + 1);
          runs.push(receipts[0].run_id);
          ranOn.set(receipts[0].run_id, keyOf(state));
          history.push(`run ${args.join(' ')} -> ${receipts[0].run_id} ${receipts[0].result}`);
        } else {
          history.push(`run ${args.join(' ')} -> skipped`);
        }
      };
      await runNow([]);
      for (let step = 0; step < STEPS; step++) {
        const roll = random();
        if (roll < 0.45) {
          state.a = pick(A_VARIANTS);
          p.write('src/a.js', state.a);
        } else if (roll < 0.6) {
          state.b = pick(B_VARIANTS);
          p.write('src/b.js', state.b);
        } else if (roll < 0.72) {
          state.setting = state.setting === '1' ? '2' : '1';
        } else if (roll < 0.82) {
          state.config = 1 - state.config;
          p.write('vouch.config.json', configFile(state.config));
        } else {
          // Not an input: a rerun on the same state may now differ, as a flaky test's does.
          p.write('outcome.txt', random() < 0.5 ? 'fail\n' : 'pass\n');
        }
        history.push(`step ${step}: ${keyOf(state)}`);
        if (random() < 0.4) await runNow(random() < 0.5 ? ['--if-due'] : []);

        const scanned = (await p.json(['status', 'verdict', '--no-observer'], { env: envNow() })).checks[0];
        const asked = await p.json(['status', 'verdict', '--sync'], { env: envNow({ VOUCH_OBSERVER_TIMEOUT_MS: PATIENT }) });
        expect(asked.observation.source).toBe('observer');
        const observed = asked.checks[0];
        const what = `${history.slice(-8).join('\n')}\nscan: ${JSON.stringify(scanned)}\nobserver: ${JSON.stringify(observed)}`;
        expect([observed.freshness, observed.result, observed.reuse_eligible, observed.receipt?.run_id], what).toEqual([scanned.freshness, scanned.result, scanned.reuse_eligible, scanned.receipt?.run_id]);
        if (scanned.freshness !== 'CURRENT') continue;
        current++;
        const answering = scanned.receipt.run_id as string;
        // The ground truth: the receipt ran on exactly this state, and no run on it is newer.
        expect(ranOn.get(answering), what).toBe(keyOf(state));
        const newest = runs.filter((id) => ranOn.get(id) === keyOf(state)).at(-1);
        expect(answering, what).toBe(newest);
        if (answering !== runs.at(-1)) fromEarlier++;
      }
    });
    console.log(`[edit-revert campaign] ${SEED.replay()}: ${runs.length} runs, ${current} CURRENT answers, ${fromEarlier} from an earlier receipt`);
    expect(current).toBeGreaterThan(0);
    expect(fromEarlier).toBeGreaterThan(0);
  });
});
