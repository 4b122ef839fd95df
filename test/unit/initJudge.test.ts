import { describe, expect, it } from 'vitest';
import { fanOutScripts } from '../../src/api/initFanOut.js';
import { classify, judgeScript, proposeConfig } from '../../src/api/initProposal.js';

/* How vouch init reads scripts: one that runs the packages' scripts, one it leaves out, one made of other checks. Pure. */

const split = (line: string) => {
  const [program, ...args] = line.split(' ');
  return fanOutScripts(program!, args)?.scripts ?? null;
};

describe('fanOutScripts', () => {
  const cases: Array<[string, string[] | null]> = [
    ['pnpm -r test', ['test']],
    ['pnpm --recursive run lint', ['lint']],
    ['pnpm -r --parallel --filter ./packages/** run build', ['build']],
    ['pnpm --filter @demo/a test', ['test']],
    ['pnpm -r exec tsc --noEmit', null],
    ['pnpm test', null],
    ['npm test --workspaces', ['test']],
    ['npm run lint -ws', ['lint']],
    ['npm run build --workspace packages/a', ['build']],
    ['npm run lint', null],
    ['yarn workspaces run test', ['test']],
    ['yarn workspaces foreach -A --parallel run lint', ['lint']],
    ['yarn workspaces foreach --include @demo/* run test', ['test']],
    ['yarn workspace @demo/a test', ['test']],
    ['yarn test', null],
    ['bun run --filter * test', ['test']],
    ['turbo run lint test --filter=@demo/a', ['lint', 'test']],
    ['turbo test', ['test']],
    ['turbo run @demo/a#build', ['build']],
    ['turbo prune @demo/a', null],
    ['nx run-many -t lint test', ['lint', 'test']],
    ['nx run-many --targets=lint,test', ['lint', 'test']],
    ['nx affected --target test', ['test']],
    ['nx run app:build', ['build']],
    ['lerna run test --stream', ['test']],
  ];
  for (const [line, expected] of cases) {
    it(line, () => expect(split(line)).toEqual(expected));
  }

  it('says turbo watch watches', () => {
    expect(fanOutScripts('turbo', ['watch', 'test'])).toMatchObject({ scripts: ['test'], watch: true });
  });
});

describe('judgeScript', () => {
  it('reads cache-clearing, trace, snapshot-writing and end-to-end forms', () => {
    expect(classify('jest', ['--clearCache'])?.inert).toMatch(/cache/);
    expect(classify('tsc', ['-b', '--clean'])?.inert).toMatch(/outputs/);
    expect(classify('tsc', ['--generateTrace', 'out'])?.inert).toMatch(/trace/);
    expect(classify('vitest', ['run', '-u'])?.writes).toMatch(/snapshots/);
    expect(classify('vitest', ['run', '--browser.enabled'])?.e2e).toMatch(/browser/);
    expect(classify('playwright', ['test'])?.e2e).toMatch(/browser/);
    expect(classify('playwright', ['install'])).toBeNull();
    expect(classify('tsc', ['--noCheck'])).toMatchObject({ kind: 'build', noCheck: true });
    expect(classify('tsc', ['-b'])).toMatchObject({ kind: 'typecheck', tscBuild: true });
  });

  it('tells an aggregator from a script that adds something of its own', () => {
    const scripts = { lint: 'eslint .', test: 'vitest run', check: 'npm run lint && npm run test', more: 'npm run lint && tsc', cov: 'npm run test -- --coverage' };
    expect(judgeScript('check', scripts.check, scripts)).toMatchObject({ delegates: ['lint', 'test'], ownCommands: 0 });
    expect(judgeScript('check', scripts.more, { ...scripts, check: scripts.more })).toMatchObject({ delegates: ['lint'], ownCommands: 1 });
    expect(judgeScript('test:cov', scripts.cov, { ...scripts, 'test:cov': scripts.cov })).toMatchObject({ delegates: [], ownCommands: 1 });
  });

  it('never lets --all propose a lifecycle script or npm\'s placeholder', () => {
    expect(judgeScript('prepare', 'tsc', { prepare: 'tsc' })?.skip).toMatchObject({ overridable: false });
    expect(judgeScript('test', 'echo "Error: no test specified" && exit 1', {})?.skip).toMatchObject({ overridable: false });
    expect(judgeScript('lint:fix', 'eslint --fix .', { 'lint:fix': 'eslint --fix .' })?.skip).toMatchObject({ overridable: true });
  });
});

describe('proposeConfig: scripts made of other checks', () => {
  const propose = (scripts: Record<string, string>) =>
    proposeConfig({ packageJson: { scripts }, packageManager: { name: 'npm', lockfile: null }, hasTsconfig: false, tsc: null });

  it('leaves out an aggregator of an aggregator, and keeps one that adds a step of its own', () => {
    const proposal = propose({ lint: 'eslint .', test: 'vitest run', check: 'npm run lint && npm run test', 'test:all': 'npm run check' });
    expect(proposal.checks.map((p) => p.check.name)).toEqual(['lint', 'test']);
    expect(proposal.skipped.map((s) => s.script).sort()).toEqual(['check', 'test:all']);

    // "test:gen" generates first: more than its parts, so it is proposed, and so "test:all", made of it, is left out.
    const gen = propose({ gen: 'node gen.mjs', test: 'vitest run', 'test:gen': 'npm run gen && npm run test', 'test:all': 'npm run test:gen' });
    expect(gen.checks.map((p) => p.check.name)).toEqual(['test', 'test:gen']);
    expect(gen.skipped).toEqual([expect.objectContaining({ script: 'test:all', reason: expect.stringMatching(/only runs "test:gen"/) })]);
  });

  it('does not loop on scripts that run each other', () => {
    const proposal = propose({ 'test:a': 'npm run test:b', 'test:b': 'npm run test:a' });
    expect(proposal.checks.length + proposal.skipped.length).toBe(2);
  });
});
