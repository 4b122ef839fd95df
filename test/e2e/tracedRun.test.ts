import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configText, expectCurrent, statusOf, type Json } from '../helpers/answers.js';
import { claudeBash } from '../helpers/hookInput.js';
import { CLI, cleanEnv, tempProject, type TempProject } from '../helpers/project.js';

/*
 * A traced check through the CLI: vouch run records what the check read, and status, --if-due
 * and the observer answer from that, not from the declared globs. Skipped where strace is
 * missing (CI installs it), except the fallback, which needs no strace.
 */

const STRACE = process.platform === 'linux' && spawnSync('strace', ['-V']).status === 0;
const TITLE = STRACE ? 'a traced check through the CLI' : 'a traced check through the CLI (SKIPPED: strace is not on PATH; apt-get install strace)';

let outsideDir: string;
let outside: string;
const projects: TempProject[] = [];

beforeAll(() => {
  outsideDir = realpathSync(mkdtempSync(join(tmpdir(), 'vouch-traced-outside-')));
  outside = join(outsideDir, 'shared.json');
});

afterAll(() => rmSync(outsideDir, { recursive: true, force: true }));

afterEach(() => {
  for (const project of projects.splice(0)) {
    project.vouch(['stop']);
    project.remove();
  }
});

/** A check that reads a tracked source, an ignored .env, a file outside the root, lists a directory and probes a path. */
function tracedProject(): TempProject {
  writeFileSync(outside, '{"shared":1}');
  const project = tempProject('traced', {
    '.gitignore': '.vouch/\n.env\n',
    '.env': 'SECRET=1\n',
    'README.md': '# readme\n',
    'src/a.ts': 'export const a = 1;\n',
    'fixtures/one.json': '{}',
    'check.mjs': `import fs from 'node:fs';
fs.readFileSync('src/a.ts'); fs.readFileSync('.env'); fs.readFileSync(${JSON.stringify(outside)});
fs.readdirSync('fixtures'); fs.existsSync('src/a.local.ts');
`,
    'vouch.config.json': configText([{ name: 'check', kind: 'test', command: ['node', 'check.mjs'], mode: 'traced' }]),
  });
  projects.push(project);
  return project;
}

function run(project: TempProject, env?: NodeJS.ProcessEnv): Json {
  const result = project.vouch(['run', 'check', '--json'], env ? { env } : {});
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

const reasonText = (status: Json) => status.reasons.map((r: Json) => `${r.code}: ${r.message}`).join('\n');

describe.skipIf(!STRACE)(TITLE, () => {
  it('is CURRENT through edits to files it never read, and STALE, naming the file, on each it did', () => {
    const p = tracedProject();
    expect(run(p).runs[0].receipt.evidence).toEqual({ mode: 'traced', notes: [{ code: 'read-outside-inputs', message: expect.stringContaining('.env') }] });
    expectCurrent(p, 'check');
    p.write('README.md', '# edited\n');
    p.write('CLAUDE.md', '# agents\n');
    p.write('docs/new.md', 'new');
    expectCurrent(p, 'check');
    for (const [path, edit, restore, named] of [
      ['.env', 'SECRET=2\n', 'SECRET=1\n', /\.env: content changed/],
      ['src/a.ts', 'export const a = 2;\n', 'export const a = 1;\n', /src\/a\.ts: content changed/],
      ['fixtures/two.json', '{}', null, /fixtures: entries added, removed or changed kind/],
      ['src/a.local.ts', '', null, /src\/a\.local\.ts: absent → a file/],
    ] as const) {
      p.write(path, edit);
      const stale = statusOf(p, 'check');
      expect(stale.freshness, path).toBe('STALE');
      expect(reasonText(stale)).toMatch(named);
      if (restore === null) rmSync(join(p.root, path));
      else p.write(path, restore);
      expectCurrent(p, 'check');
    }
    writeFileSync(outside, '{"shared":2}');
    expect(reasonText(statusOf(p, 'check'))).toContain(`${outside}: content changed`);
    writeFileSync(outside, '{"shared":1}');
    expectCurrent(p, 'check');
  });

  it('skips with --if-due only while what it read is unchanged', () => {
    const p = tracedProject();
    run(p);
    p.write('README.md', '# edited\n');
    const skipped = p.vouch(['run', 'check', '--if-due']);
    expect(skipped.code).toBe(0);
    expect(skipped.stdout + skipped.stderr).toMatch(/skipped check/);
    p.write('.env', 'SECRET=3\n');
    const ran = p.vouch(['run', 'check', '--if-due']);
    expect(ran.stdout + ran.stderr).toMatch(/running check/);
  });

  it('after an edit and its revert, the earlier receipt whose own evidence is unchanged answers: status, the observer, --if-due, explain and the hook', () => {
    const p = tracedProject();
    p.write('package.json', JSON.stringify({ name: 'x', private: true, scripts: { test: 'node check.mjs' } }));
    p.write('vouch.config.json', configText([{ name: 'check', kind: 'test', script: 'test', mode: 'traced' }]));
    const first = run(p).runs[0].receipt.run_id;
    p.write('.env', 'SECRET=2\n');
    const second = run(p).runs[0].receipt.run_id;
    p.write('.env', 'SECRET=1\n');
    const answeredBy = (env?: NodeJS.ProcessEnv) => expectCurrent(p, 'check', env).receipt.run_id;
    expect(answeredBy()).toBe(first);
    expect(p.json(['status', 'check', '--no-observer']).checks[0].receipt.run_id).toBe(first);
    expect(p.json(['explain', 'check']).check).toMatchObject({ freshness: 'CURRENT', receipt: { run_id: first } });
    const hook = () => {
      const result = spawnSync(process.execPath, [CLI, 'hook', 'claude'], { cwd: p.root, input: JSON.stringify(claudeBash(p.root, 'npm test')), env: cleanEnv(), encoding: 'utf8' });
      expect(result.status, result.stderr).toBe(0);
      return result.stdout === '' ? null : JSON.parse(result.stdout).hookSpecificOutput;
    };
    const denied = hook();
    expect(denied?.permissionDecision).toBe('deny');
    expect(denied?.permissionDecisionReason).toContain(first);
    // The edit again: the second receipt's evidence is as its run left it.
    p.write('.env', 'SECRET=2\n');
    expect(p.json(['status', 'check', '--no-observer']).checks[0].receipt.run_id).toBe(second);
    // The observer answers the same, after its barrier.
    expect(p.vouch(['start']).code).toBe(0);
    const viaObserver = () => {
      const out = p.json(['status', 'check']);
      expect(out.observation.source).toBe('observer');
      return out.checks[0];
    };
    expect(viaObserver()).toMatchObject({ freshness: 'CURRENT', receipt: { run_id: second } });
    p.write('.env', 'SECRET=1\n');
    expect(viaObserver()).toMatchObject({ freshness: 'CURRENT', receipt: { run_id: first } });
    const skipped = p.vouch(['run', 'check', '--if-due']);
    expect(skipped.stdout + skipped.stderr).toMatch(/skipped check/);
    // A state no receipt was made on: STALE everywhere, and --if-due runs it.
    p.write('.env', 'SECRET=3\n');
    expect(viaObserver().freshness).toBe('STALE');
    expect(p.json(['status', 'check', '--no-observer']).checks[0].freshness).toBe('STALE');
    expect(hook()?.permissionDecision).not.toBe('deny');
    const ran = p.vouch(['run', 'check', '--if-due']);
    expect(ran.stdout + ran.stderr).toMatch(/running check/);
  });

  it('is answered by the observer as by a direct look, ignored files and paths outside the root included', () => {
    const p = tracedProject();
    run(p);
    expect(p.vouch(['start']).code).toBe(0);
    const viaObserver = () => {
      const out = p.json(['status', 'check']);
      expect(out.observation.source).toBe('observer');
      return out.checks[0];
    };
    expect(viaObserver().freshness).toBe('CURRENT');
    p.write('.env', 'SECRET=9\n');
    expect(viaObserver().freshness).toBe('STALE');
    p.write('.env', 'SECRET=1\n');
    expect(viaObserver().freshness).toBe('CURRENT');
    writeFileSync(outside, '{"shared":3}');
    const stale = viaObserver();
    expect(stale.freshness).toBe('STALE');
    expect(reasonText(stale)).toContain(outside);
    // The observer looked again only where its events said something may have changed.
    const looks = p.json(['observer', '--json']).evidence_looks;
    expect(looks.partial, JSON.stringify(looks)).toBeGreaterThan(0);
    writeFileSync(outside, '{"shared":1}');
    expect(viaObserver().freshness).toBe('CURRENT');
  });

  it("lets the agent's rerun through once an ignored file the check read changed, and denies it while nothing it read did", () => {
    const p = tracedProject();
    p.write('package.json', JSON.stringify({ name: 'x', private: true, scripts: { test: 'node check.mjs' } }));
    p.write('vouch.config.json', configText([{ name: 'test', kind: 'test', script: 'test', mode: 'traced' }]));
    expect(p.vouch(['run', 'test']).code).toBe(0);
    const hook = () => {
      const result = spawnSync(process.execPath, [CLI, 'hook', 'claude'], { cwd: p.root, input: JSON.stringify(claudeBash(p.root, 'npm test')), env: cleanEnv(), encoding: 'utf8' });
      expect(result.status, result.stderr).toBe(0);
      return result.stdout === '' ? null : JSON.parse(result.stdout).hookSpecificOutput;
    };
    p.write('README.md', '# edited by the agent\n');
    expect(hook()?.permissionDecision).toBe('deny');
    p.write('.env', 'SECRET=5\n');
    expect(hook()?.permissionDecision).not.toBe('deny');
  });

  it('ends, with the check, what the check left running in the background (a traced process cannot outlive its trace), and says so in the log', () => {
    const p = tracedProject();
    const marker = `vouch-leftover-${process.pid}-${Date.now()}`;
    p.write('bg.mjs', `import { spawn } from 'node:child_process';
spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', ${JSON.stringify(marker)}], { detached: true, stdio: 'ignore' }).unref();
`);
    p.write('vouch.config.json', configText([{ name: 'bg', kind: 'test', command: ['node', 'bg.mjs'], mode: 'traced' }]));
    const started = Date.now();
    const result = p.vouch(['run', 'bg', '--json']);
    expect(result.code, result.stderr).toBe(0);
    // The check itself ends at once; its leftover would live a minute. The grace is 2 s.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(spawnSync('pgrep', ['-f', marker]).status).not.toBe(0);
    const receipt = JSON.parse(result.stdout).runs[0].receipt;
    expect(receipt.result).toBe('PASS');
    expect(readFileSync(receipt.log_path, 'utf8')).toContain('vouch: ended 1 process the check left running');
  });

  it('follows a check run through a package manager script into the tool it runs', () => {
    const p = tracedProject();
    p.write('package.json', JSON.stringify({ name: 'x', private: true, scripts: { test: 'node check.mjs' } }));
    p.write('vouch.config.json', configText([{ name: 'test', kind: 'test', script: 'test', mode: 'traced' }]));
    const result = p.vouch(['run', 'test']);
    expect(result.code, result.stderr).toBe(0);
    expectCurrent(p, 'test');
    p.write('.env', 'SECRET=4\n');
    expect(reasonText(statusOf(p, 'test'))).toMatch(/\.env: content changed/);
  });
});

describe('a traced check where tracing cannot run', () => {
  it('falls back to its declared inputs, and the receipt says why', () => {
    const p = tracedProject();
    // A PATH with node and git but no strace: the tracer is missing, as on a machine without it.
    const bin = join(p.root, '..', `bin-${Date.now()}`);
    mkdirSync(bin);
    for (const tool of ['git', 'node']) {
      const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      symlinkSync(found, join(bin, tool));
    }
    const env = cleanEnv({ PATH: bin });
    try {
      const receipt = run(p, env).runs[0].receipt;
      expect(receipt.evidence).toEqual({ mode: 'declared', notes: [{ code: 'trace-unavailable', message: expect.stringMatching(/strace is not installed: install strace/) }] });
      expect(receipt.reuse_eligible).toBe(true);
      expectCurrent(p, 'check', env);
      // Declared inputs: an ignored file is not one of them, so the fallback cannot see it.
      p.write('README.md', '# edited\n');
      expect(statusOf(p, 'check', env).freshness).toBe('STALE');
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
