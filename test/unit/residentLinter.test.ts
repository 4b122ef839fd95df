import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Draft, Issue } from '../../src/core/claim.js';
import { ClaimError } from '../../src/core/claimError.js';
import { ignoreProbe, parseProbe } from '../../src/prove/lintProbe.js';
import { createOverlay } from '../../src/prove/overlay.js';
import { type Finding, type IgnoredBy, type LintFailure, type LinterOptions, ResidentLinter } from '../../src/prove/residentLinter.js';
import type { Inspection } from '../../src/prove/stage.js';
import { rejection } from '../helpers/rejection.js';

// The skeleton every lint stage shares, judged with a scripted linter: no process, no real linter, so each rule is seen alone.

const root = mkdtempSync(join(tmpdir(), 'vouch-resident-linter-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** What the scripted linter answers; `lint` may throw to stand for a linter that failed on a text. */
interface Script {
  lint?: (path: string, text: string) => Finding[];
  ignored?: Record<string, string>;
  silentIgnores?: string | null;
  survives?: boolean;
  configErrors?: string | null;
  start?: () => Promise<void>;
}

class ScriptedLinter extends ResidentLinter {
  protected readonly tool = 'scripted';
  protected readonly label = 'Scripted';
  protected readonly silentIgnores: string | null;
  readonly calls: string[] = [];
  readonly asked: Array<[string, string]> = [];
  #running = false;
  readonly #script: Script;

  constructor(script: Script, options: LinterOptions = {}) {
    super(root, options);
    this.#script = script;
    this.silentIgnores = script.silentIgnores ?? null;
  }

  protected inputs(): string[] {
    return [join(root, 'scripted.json')];
  }
  protected get running(): boolean {
    return this.#running;
  }
  protected async start(): Promise<string> {
    this.calls.push('start');
    await this.#script.start?.();
    this.#running = true;
    return '1.2.3';
  }
  protected async stop(): Promise<void> {
    this.calls.push('stop');
    this.#running = false;
  }
  protected async halt(): Promise<void> {
    this.calls.push('halt');
    this.#running = false;
  }
  protected async ignores(): Promise<IgnoredBy> {
    return async (path) => this.#script.ignored?.[path] ?? null;
  }
  protected async lint(path: string, text: string): Promise<Finding[]> {
    this.asked.push([path, text]);
    return (this.#script.lint ?? (() => []))(path, text);
  }
  protected async failed(path: string, error: Error): Promise<LintFailure> {
    this.calls.push('failed');
    return { message: `Scripted failed on ${path}: ${error.message}`, survived: this.#script.survives ?? true };
  }
  protected override configErrors(): string | null {
    return this.#script.configErrors ?? null;
  }
}

const TEST: Draft = { path: 'src/a.test.ts', text: 'test\n' };

function inspection(drafts: Draft[], test: Draft = TEST): Inspection {
  return { phase: 'case', drafts, test, overlay: createOverlay(root, [...drafts, test]), project: join(root, 'tsconfig.json') };
}

const error = (message: string, extra: Partial<Finding> = {}): Finding => ({ level: 'error', message, ...extra });

describe('resident linter skeleton', () => {
  it('lints only lint targets, reports ignored paths as unjudged workspace issues without linting them, and counts progress per linted draft', async () => {
    const linter = new ScriptedLinter({ ignored: { 'gen/out.ts': 'git (.gitignore:1: gen/)' } });
    expect(await linter.warm()).toEqual({ name: 'scripted', version: '1.2.3' });
    const issues = await linter.inspect(inspection([{ path: 'README.md', text: 'x' }, { path: 'gen/out.ts', text: 'x' }, { path: 'src/a.ts', text: 'a' }]));
    expect(issues).toEqual([
      { origin: 'workspace', stage: 'lint', path: 'gen/out.ts', message: expect.stringContaining('ignored by git (.gitignore:1: gen/)'), unjudged: true },
    ]);
    expect(linter.asked.map(([path]) => path)).toEqual(['src/a.ts', 'src/a.test.ts']);
    expect(linter.progress()).toBe(2);
  });

  it('makes errors claimant issues, and warnings only when the lint script fails on them', async () => {
    const lint = (): Finding[] => [error('boom', { line: 3, code: 'no-boom' }), { level: 'warning', message: 'meh', line: 4 }, { level: 'other', message: 'hint' }];
    const loose = new ScriptedLinter({ lint });
    expect(await loose.inspect(inspection([], { path: 'src/b.ts', text: 'b' }))).toEqual([{ origin: 'claimant', stage: 'lint', path: 'src/b.ts', message: 'boom', line: 3, code: 'no-boom' }]);
    const strict = new ScriptedLinter({ lint }, { warningsFail: true });
    const issues = await strict.inspect(inspection([], { path: 'src/b.ts', text: 'b' }));
    expect(issues.map((issue) => [issue.message, issue.line, issue.code])).toEqual([
      ['boom', 3, 'no-boom'],
      ['meh', 4, undefined],
    ]);
  });

  it('trusts silence only after the ignore probe draws a finding, for a linter whose ignore rules are not all readable', async () => {
    const draft: Draft = { path: 'src/c.ts', text: 'c' };
    // Silent on everything, the probe included: the linter skipped the path.
    const deaf = new ScriptedLinter({ silentIgnores: "scripted's own rules" });
    expect(await deaf.inspect(inspection([], draft))).toEqual([{ origin: 'workspace', stage: 'lint', path: 'src/c.ts', message: expect.stringContaining("ignored by scripted's own rules"), unjudged: true }]);
    expect(deaf.asked).toEqual([
      ['src/c.ts', 'c'],
      ['src/c.ts', ignoreProbe('src/c.ts')],
    ]);
    // The probe draws a finding: the draft's silence is a pass.
    const hearing = new ScriptedLinter({ silentIgnores: "scripted's own rules", lint: (_path, text) => (text === ignoreProbe('src/c.ts') ? [error('syntax')] : []) });
    expect(await hearing.inspect(inspection([], draft))).toEqual([]);
    // A linter whose ignore answer is complete is not probed.
    const trusted = new ScriptedLinter({});
    expect(await trusted.inspect(inspection([], draft))).toEqual([]);
    expect(trusted.asked).toEqual([['src/c.ts', 'c']]);
  });

  it('blames a parse failure on the workspace when the parse probe fails too, else on the claimant', async () => {
    const draft: Draft = { path: 'src/d.ts', text: 'let = ;' };
    const fatal = error('Parsing error', { line: 1, fatal: true });
    const noParser = new ScriptedLinter({ lint: () => [fatal] });
    expect(await noParser.inspect(inspection([], draft))).toEqual([
      { origin: 'workspace', stage: 'lint', path: 'src/d.ts', message: expect.stringContaining("Scripted's config cannot parse .ts files such as src/d.ts"), unjudged: true },
    ]);
    expect(noParser.asked.at(-1)).toEqual(['src/d.ts', parseProbe('src/d.ts')]);
    const parses = new ScriptedLinter({ lint: (_path, text) => (text === parseProbe('src/d.ts') ? [] : [{ ...fatal, code: 'parser' }]) });
    expect(await parses.inspect(inspection([], draft))).toEqual([{ origin: 'claimant', stage: 'lint', path: 'src/d.ts', message: 'Parsing error', line: 1 }]);
  });

  it('answers a failed lint with an instrument issue, going on only while the linter survives', async () => {
    const lint = (path: string): Finding[] => {
      if (path === 'src/e.ts') throw new Error('rule crashed');
      return [error(`bad ${path}`)];
    };
    const drafts = [{ path: 'src/e.ts', text: 'e' }];
    const survivor = new ScriptedLinter({ lint, survives: true, configErrors: 'bad config' });
    // The inspection went on, so the config errors it collected refuse it.
    const refused = await rejection(survivor.inspect(inspection(drafts)));
    expect([refused.origin, refused.code, refused.detail]).toEqual(['workspace', 'malformed', 'bad config']);
    const kept = new ScriptedLinter({ lint, survives: true });
    expect(await kept.inspect(inspection(drafts))).toEqual([
      { origin: 'instrument', stage: 'lint', path: 'src/e.ts', message: 'Scripted failed on src/e.ts: rule crashed' },
      expect.objectContaining({ origin: 'claimant', path: 'src/a.test.ts' }),
    ]);
    const lost = new ScriptedLinter({ lint, survives: false, configErrors: 'bad config' });
    expect(await lost.inspect(inspection(drafts))).toEqual([{ origin: 'instrument', stage: 'lint', path: 'src/e.ts', message: 'Scripted failed on src/e.ts: rule crashed' }]);
    expect(lost.asked.map(([path]) => path)).toEqual(['src/e.ts']);
  });

  it('restarts the linter when a file it read at start changes or appears, and keeps it otherwise', async () => {
    const linter = new ScriptedLinter({});
    await linter.warm();
    await linter.inspect(inspection([]));
    expect(linter.calls).toEqual(['start']);
    writeFileSync(join(root, 'scripted.json'), '{}');
    await linter.inspect(inspection([]));
    expect(linter.calls).toEqual(['start', 'stop', 'start']);
    await linter.inspect(inspection([]));
    expect(linter.calls).toEqual(['start', 'stop', 'start']);
    rmSync(join(root, 'scripted.json'));
  });

  it('answers a linter that would not start with an instrument issue, and passes a ClaimError through', async () => {
    const crashing = new ScriptedLinter({ start: () => Promise.reject(new Error('spawn failed')) });
    expect(await crashing.inspect(inspection([]))).toEqual([{ origin: 'instrument', stage: 'lint', message: 'Scripted did not start: spawn failed' }]);
    const missing = new ScriptedLinter({ start: () => Promise.reject(new ClaimError('workspace', 'missing', 'not installed')) });
    expect((await rejection(missing.inspect(inspection([])))).code).toBe('missing');
  });

  it('refuses every step once destroyed, and stops a linter that finished starting after destroy()', async () => {
    let release = (): void => {};
    const slow = new ScriptedLinter({ start: () => new Promise<void>((resolve) => (release = resolve)) });
    const warming = slow.warm();
    await Promise.resolve();
    await slow.destroy();
    release();
    expect((await rejection(warming)).code).toBe('destroyed');
    expect(slow.calls).toEqual(['start', 'halt', 'halt']);
    const issues: Promise<Issue[]> = slow.inspect(inspection([]));
    expect((await rejection(issues)).code).toBe('destroyed');
  });
});

describe('the baseline of a drafted file on disk', () => {
  /** Flags each line holding BAD (an error) or LOOSE (a warning); a line holding FATAL makes the text unparsable. */
  const lint = (_path: string, text: string): Finding[] => {
    const lines = text.split('\n');
    if (lines.some((line) => line.includes('FATAL'))) return [error('Parsing error', { line: 1, fatal: true })];
    return lines.flatMap((line, index): Finding[] => {
      if (line.includes('BAD')) return [error('bad', { line: index + 1, code: 'no-bad' })];
      return line.includes('LOOSE') ? [{ level: 'warning', message: 'loose', line: index + 1, code: 'no-loose' }] : [];
    });
  };
  const onDisk = (path: string, text: string): void => {
    mkdirSync(join(root, 'base'), { recursive: true });
    writeFileSync(join(root, path), text);
  };

  it('makes a finding the disk already had the workspace\'s, listed after the claimant\'s, and lints the disk text once per content', async () => {
    onDisk('base/old.ts', 'one\nBAD here\n');
    const linter = new ScriptedLinter({ lint });
    const drafts: Draft[] = [{ path: 'base/old.ts', text: 'zero\none\nBAD here\nBAD there\n' }];
    expect(await linter.inspect(inspection(drafts))).toEqual([
      { origin: 'claimant', stage: 'lint', path: 'base/old.ts', message: 'bad', line: 4, code: 'no-bad' },
      { origin: 'workspace', stage: 'lint', path: 'base/old.ts', message: 'bad', line: 3, code: 'no-bad' },
    ]);
    expect(linter.asked.filter(([path]) => path === 'base/old.ts').map(([, text]) => text)).toEqual(['zero\none\nBAD here\nBAD there\n', 'one\nBAD here\n']);
    // Warm: the same disk content is not linted again.
    await linter.inspect(inspection(drafts));
    expect(linter.asked.filter(([path]) => path === 'base/old.ts')).toHaveLength(3);
    // A disk change is a new baseline.
    onDisk('base/old.ts', 'one\nBAD here\nBAD there\n');
    expect((await linter.inspect(inspection(drafts))).map((issue) => [issue.origin, issue.line])).toEqual([
      ['workspace', 3],
      ['workspace', 4],
    ]);
    expect(linter.asked.filter(([path]) => path === 'base/old.ts')).toHaveLength(5);
    // A config change restarts the linter, which takes the baseline again.
    writeFileSync(join(root, 'scripted.json'), '{"changed":true}');
    await linter.inspect(inspection(drafts));
    rmSync(join(root, 'scripted.json'));
    expect(linter.calls).toEqual(['start', 'stop', 'start']);
    expect(linter.asked.filter(([path]) => path === 'base/old.ts')).toHaveLength(7);
  });

  it('takes no baseline for a clean draft, a new file, the test, or a draft equal to the disk text', async () => {
    onDisk('base/same.ts', 'BAD\n');
    onDisk('base/a.test.ts', 'BAD\n');
    const linter = new ScriptedLinter({ lint });
    expect(await linter.inspect(inspection([{ path: 'base/same.ts', text: 'fine\n' }, { path: 'base/new.ts', text: 'BAD\n' }], { path: 'base/a.test.ts', text: 'BAD\n' }))).toEqual([
      expect.objectContaining({ origin: 'claimant', path: 'base/new.ts' }),
      expect.objectContaining({ origin: 'claimant', path: 'base/a.test.ts' }),
    ]);
    expect(linter.asked.map(([path]) => path)).toEqual(['base/same.ts', 'base/new.ts', 'base/a.test.ts']);
    expect(await linter.inspect(inspection([{ path: 'base/same.ts', text: 'BAD\n' }]))).toEqual([expect.objectContaining({ origin: 'workspace', path: 'base/same.ts' })]);
    expect(linter.asked.filter(([path]) => path === 'base/same.ts')).toHaveLength(2);
  });

  it('counts warnings in the baseline only where they count on the draft', async () => {
    onDisk('base/loose.ts', 'LOOSE\n');
    const draft: Draft = { path: 'base/loose.ts', text: 'top\nLOOSE\n' };
    expect(await new ScriptedLinter({ lint }).inspect(inspection([draft]))).toEqual([]);
    expect(await new ScriptedLinter({ lint }, { warningsFail: true }).inspect(inspection([draft]))).toEqual([expect.objectContaining({ origin: 'workspace', code: 'no-loose', line: 2 })]);
  });

  it('excuses nothing when the disk text did not parse', async () => {
    onDisk('base/broken.ts', 'FATAL\nBAD\n');
    const linter = new ScriptedLinter({ lint });
    expect(await linter.inspect(inspection([{ path: 'base/broken.ts', text: 'fixed\nBAD\n' }]))).toEqual([expect.objectContaining({ origin: 'claimant', line: 2 })]);
  });

  it('answers a baseline lint that failed as the draft\'s failed lint', async () => {
    onDisk('base/hang.ts', 'old\nBAD\n');
    const linter = new ScriptedLinter({
      lint: (path, text) => {
        if (text === 'old\nBAD\n') throw new Error('no answer');
        return lint(path, text);
      },
    });
    expect(await linter.inspect(inspection([{ path: 'base/hang.ts', text: 'BAD\n' }]))).toEqual([{ origin: 'instrument', stage: 'lint', path: 'base/hang.ts', message: 'Scripted failed on base/hang.ts: no answer' }]);
  });
});
