import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rpcExchange } from '../helpers/observer.js';
import { inProcess, type AsyncProject } from '../helpers/inProcess.js';
import { cleanEnv, REPO, tempProject, type CliResult, type TempProject } from '../helpers/project.js';

/*
 * A config is untrusted input: a cloned repository's. Each value below used to
 * be accepted silently (a glob that can never match, a root anywhere on the
 * disk), or crashed vouch; each must now be refused with exit 2, naming the
 * JSON member and the fix, before anything is observed or written. The
 * commands run in process through the CLI's dispatch, which prints the same
 * (test/helpers/inProcess.ts). vouch start keeps the CLI (it spawns the
 * observer with the script it runs as); the observer is a process of its own
 * all the same, and the runs, questions and stops of the tests that start one
 * reach it over its socket from this process as from a CLI process.
 */

const PASSING = 'process.exitCode = 0;\n';
const CHECK = { name: 't', kind: 'test', command: ['node', 'check.mjs'] };

function config(checks: unknown, extra: object = {}): string {
  return JSON.stringify({ schema: 1, ...extra, checks }, null, 2);
}

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.reverse()) cleanup();
  cleanups = [];
});
function track<T extends { remove(): void }>(project: T): T {
  cleanups.push(() => project.remove());
  return project;
}
/** A directory beside the project, never inside it: where a hostile root would point. */
function outsideDir(): string {
  mkdirSync(join(REPO, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(REPO, '.tmp', 'outside-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** vouch runs in process (test/helpers/inProcess.ts). */
function configProject(name: string, text: string | Buffer, files: Record<string, string> = {}): AsyncProject {
  return inProcess(observedProject(name, text, files));
}

/** The project itself, whose vouch is the CLI: for vouch start, which spawns the observer. */
function observedProject(name: string, text: string | Buffer, files: Record<string, string> = {}): TempProject {
  const project = track(tempProject(name, { 'check.mjs': PASSING, 'src/a.ts': 'export const a = 1;\n', ...files }));
  project.write('vouch.config.json', text);
  return project;
}

/** Exit 2, the error JSON on stdout, the same message once on stderr, no stack trace; every pattern in the message. */
function expectRefused(result: CliResult, code: string, patterns: (RegExp | string)[]): string {
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(2);
  const parsed = JSON.parse(result.stdout);
  expect(parsed).toEqual({ schema: 1, error: { code, message: expect.any(String) } });
  const message: string = parsed.error.message;
  for (const pattern of patterns) {
    if (typeof pattern === 'string') expect(message).toContain(pattern);
    else expect(message).toMatch(pattern);
  }
  expect(result.stderr).toBe(`vouch: ${message}\n`);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  return message;
}

async function expectConfigInvalid(project: AsyncProject, member: string, patterns: (RegExp | string)[] = []): Promise<string> {
  const message = expectRefused(await project.vouch(['status', '--json']), 'config-invalid', [`${member}: `, /docs\/config\.md/, ...patterns]);
  // Nothing was observed or recorded for a refused config.
  expect(existsSync(join(project.root, '.vouch', 'state.db'))).toBe(false);
  return message;
}

describe('globs that can never match are refused, in inputs and in installed', () => {
  const NEVER: [string, RegExp][] = [
    ['../**', /"\.\." segment.*outside the root/],
    ['src/../../**', /"\.\." segment/],
    ['src/../lib/**', /"\.\." segment/],
    ['/abs/**', /absolute.*write "abs\/\*\*"/],
    ['/**', /absolute.*write "\*\*"/],
    ['src\\**', /backslash.*write "\/" between directories/],
    ['C:\\**', /backslash/],
    ['C:/**', /names a drive/],
    ['~/**', /"~", which is not expanded/],
    ['!', /"!" alone excludes nothing/],
    ['src/', /ends in "\/".*write "src\/\*\*"/],
    ['src//a.ts', /empty or "\." segment/],
    ['.git/**', /git's own directory/],
    ['.git', /git's own directory/],
    ['.vouch/**', /vouch's state dir/],
    ['./.vouch/state.db', /vouch's state dir/],
  ];
  for (const [glob, why] of NEVER) {
    it(`${JSON.stringify(glob)}`, async () => {
      const inInputs = configProject('glob-inputs', config([{ ...CHECK, inputs: ['src/**', glob] }]));
      await expectConfigInvalid(inInputs, '$.checks[0].inputs[1]', [why, JSON.stringify(glob) === '"!"' ? '"!"' : JSON.stringify(glob)]);
      const inInstalled = configProject('glob-installed', config([CHECK, { ...CHECK, name: 'u', installed: ['node_modules/**', glob] }]));
      await expectConfigInvalid(inInstalled, '$.checks[1].installed[1]', [why]);
    });
  }

  it('a custom state dir inside the root is reserved too', async () => {
    const project = configProject('glob-statedir', config([{ ...CHECK, inputs: ['src/**', 'state/**'] }]));
    expectRefused(await project.vouch(['status', '--json', '--state-dir', 'state']), 'config-invalid', ['$.checks[0].inputs[1]: ', /vouch's state dir \(state\/\)/]);
  });

  it('a normal config with exclusions of those directories and a leading "./" still loads', async () => {
    const project = configProject('glob-fine', config([{ ...CHECK, inputs: ['./src/**', '!.git/**', '!.vouch/**', 'check.mjs'] }]));
    const result = await project.vouch(['status', '--json']);
    expect(result.code, result.stderr).toBe(0);
  });
});

describe('"!" alone', () => {
  it('is a config error, not exit 70 with a picomatch stack trace, for every command', async () => {
    const project = configProject('bang', config([{ ...CHECK, inputs: ['!'] }]));
    for (const command of [['status'], ['run'], ['explain', 't'], ['start']]) {
      const message = expectRefused(await project.vouch([...command, '--json']), 'config-invalid', ['$.checks[0].inputs[0]: ', /"!" alone excludes nothing/]);
      expect(message).not.toMatch(/non-empty string/);
    }
  });

  it('sent to a running observer over its socket, where no validator runs, is answered, not -32603', async () => {
    const cli = observedProject('bang-observer', config([CHECK]));
    const project = inProcess(cli);
    const env = cleanEnv();
    try {
      const started = cli.json(['start'], { env });
      expect(started.socket).toEqual(expect.any(String));
      for (const inputs of [['!'], ['src/**', '!'], ['']]) {
        const request = { jsonrpc: '2.0', id: 1, method: 'observe', params: { mode: 'sync', checks: [{ name: 't', inputs, installed: ['!'] }] } };
        const answer = await rpcExchange(started.socket, JSON.stringify(request) + '\n', 30_000);
        expect(answer?.error, JSON.stringify(answer)).toBeUndefined();
        expect(answer?.result).toBeDefined();
      }
      // Still serving.
      expect((await project.json(['status'])).observation.source).toBe('observer');
    } finally {
      await project.vouch(['stop'], { env });
    }
  });

  it('in package.json workspaces, where no validator runs, init and a script check do not crash', async () => {
    const project = track(
      tempProject('bang-workspaces', {
        'package.json': JSON.stringify({ name: 'w', private: true, workspaces: ['packages/*', '!'], scripts: { test: 'node check.mjs' } }),
        'check.mjs': PASSING,
        'packages/a/package.json': '{"name":"a"}',
        'packages/a/node_modules/x/index.js': '1;\n',
      }),
    );
    const init = await project.vouch(['init', '--json']);
    expect(init.code, `${init.stdout}\n${init.stderr}`).toBe(0);
    expect(init.stderr).not.toMatch(/\n\s+at /);
    const status = await project.vouch(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
  });
});

describe('strings no argv, path or glob can hold', () => {
  // JSON escapes, so the file's bytes are plain ASCII and only the parsed value holds the character.
  const raw = (checkJson: string) => `{"schema": 1, "checks": [${checkJson}]}`;
  it('a NUL in a command item', async () => {
    await expectConfigInvalid(configProject('nul-command', raw('{"name":"t","kind":"test","command":["node","check.mjs\\u0000x"]}')), '$.checks[0].command[1]', [/NUL/]);
  });
  it('a NUL in a script', async () => {
    const project = configProject('nul-script', raw('{"name":"t","kind":"test","script":"test\\u0000"}'), { 'package.json': '{"scripts":{"test":"node check.mjs"}}' });
    await expectConfigInvalid(project, '$.checks[0].script', [/NUL/]);
  });
  it('a NUL in a glob', async () => {
    await expectConfigInvalid(configProject('nul-glob', raw('{"name":"t","kind":"test","command":["node"],"inputs":["src/**\\u0000"]}')), '$.checks[0].inputs[0]', [/NUL/]);
  });
  it('a lone surrogate, in a value and in a key', async () => {
    await expectConfigInvalid(configProject('surrogate', raw('{"name":"t","kind":"test","command":["node","\\ud800.mjs"]}')), '$.checks[0].command[1]', [/unpaired UTF-16 surrogate/]);
    await expectConfigInvalid(configProject('surrogate-key', raw('{"name":"t","kind":"test","command":["node"],"\\udc00":1}')), '$.checks[0] key "\\udc00"', [/unpaired UTF-16 surrogate/]);
  });
  it('a paired surrogate (an emoji) is text, and loads', async () => {
    const project = configProject('emoji', raw('{"name":"t","kind":"test","command":["node","check.mjs","\\ud83d\\ude00"]}'));
    expect((await project.vouch(['status', '--json'])).code).toBe(0);
  });
  it('a config that is not valid UTF-8', async () => {
    // "\xff" is never valid UTF-8; a lenient read would see U+FFFD and accept the file.
    const bytes = Buffer.concat([Buffer.from('{"schema":1,"checks":[{"name":"t","kind":"test","command":["node","check.mjs","'), Buffer.from([0xff]), Buffer.from('"]}]}')]);
    const project = configProject('not-utf8', bytes);
    expectRefused(await project.vouch(['status', '--json']), 'config-not-utf8', [join(project.root, 'vouch.config.json'), /not valid UTF-8/, /save it as UTF-8/]);
  });
  it.each([
    ['[""]', ['']],
    ['["", "x"]', ['', 'x']],
    ['["  "]', ['  ']],
  ])('command %s: an empty or blank program name', async (_, command) => {
    await expectConfigInvalid(configProject('empty-program', config([{ ...CHECK, command }])), '$.checks[0].command[0]', [/a program name, not an empty or blank string/]);
  });
});

describe('duplicate keys and names', () => {
  it('a key twice at the top level', async () => {
    const text = `{"schema": 1, "checks": [${JSON.stringify(CHECK)}], "checks": [{"name":"x","kind":"test","command":["node"]}]}`;
    await expectConfigInvalid(configProject('dup-top', text), '$.checks', [/the key "checks" appears twice in one object/, /remove one/]);
  });
  it('a key twice in a check, one written with an escape', async () => {
    // "inputs" and "\u0069nputs" are the same key to JSON.parse, which keeps the second.
    const text = '{"schema":1,"checks":[{"name":"t","kind":"test","command":["node","check.mjs"],"inputs":["src/**"],"\\u0069nputs":["README.md"]}]}';
    await expectConfigInvalid(configProject('dup-escaped', text), '$.checks[0].inputs', [/the key "inputs" appears twice/]);
  });
  it('equal keys in different objects are fine', async () => {
    const project = configProject('dup-fine', config([CHECK, { ...CHECK, name: 'u' }]));
    expect((await project.vouch(['status', '--json'])).code).toBe(0);
  });
  it('check names that differ only by case', async () => {
    await expectConfigInvalid(configProject('dup-case', config([CHECK, { ...CHECK, name: 'T' }])), '$.checks[1].name', [/"T" and "t" differ only by case/]);
  });
});

describe('limits: one beyond each is refused', () => {
  const manyGlobs = (count: number) => Array.from({ length: count }, (_, index) => `src/f${index}.ts`);
  it('257 checks', async () => {
    const checks = Array.from({ length: 257 }, (_, index) => ({ ...CHECK, name: `c${index}` }));
    await expectConfigInvalid(configProject('limit-checks', config(checks)), '$.checks', [/at most 256 checks, not 257/]);
  });
  it('1,001 globs in one list', async () => {
    await expectConfigInvalid(configProject('limit-list', config([{ ...CHECK, inputs: manyGlobs(1001) }])), '$.checks[0].inputs', [/at most 1000 items, not 1001/]);
  });
  it('10,001 globs in the whole config', async () => {
    const checks = Array.from({ length: 11 }, (_, index) => ({ ...CHECK, name: `c${index}`, inputs: manyGlobs(index === 0 ? 1 : 1000) }));
    await expectConfigInvalid(configProject('limit-globs', config(checks)), '$.checks', [/at most 10000 globs in the whole config, not 10001/]);
  });
  it('a glob of 4,097 characters', async () => {
    await expectConfigInvalid(configProject('limit-glob-length', config([{ ...CHECK, inputs: [`src/${'a'.repeat(4093)}`] }])), '$.checks[0].inputs[0]', [/4096/]);
  });
  it('a config file of 1 MiB + 1 byte', async () => {
    const text = config([CHECK]);
    const project = configProject('limit-bytes', text + ' '.repeat(1024 * 1024 + 1 - Buffer.byteLength(text)));
    expectRefused(await project.vouch(['status', '--json']), 'config-too-large', [/1048577 bytes/, /at most 1048576 bytes/]);
  });
  it('nesting beyond 16 levels', async () => {
    const deep = '['.repeat(17) + ']'.repeat(17);
    await expectConfigInvalid(configProject('limit-depth', `{"schema":1,"checks":[${JSON.stringify(CHECK)}],"x":${deep}}`), `$.x${'[0]'.repeat(15)}`, [/at most 16 levels of nesting/]);
  });
  it('a config at each limit loads', async () => {
    // 9 × 1,000 + 754 + 246 × 1 = 10,000 globs; the last is 4,096 characters long.
    const inputs = (index: number) => (index < 9 ? manyGlobs(1000) : index === 9 ? manyGlobs(754) : index === 255 ? [`src/${'a'.repeat(4092)}`] : ['src/**']);
    const checks = Array.from({ length: 256 }, (_, index) => ({ ...CHECK, name: `c${index}`, inputs: inputs(index) }));
    const project = configProject('limit-at', config(checks));
    const result = await project.vouch(['status', '--json', '--no-observer']);
    expect(result.code, result.stderr).toBe(0);
  });
});

describe('"root" stays inside the config\'s directory', () => {
  it('an absolute root outside is refused, and nothing is written there', async () => {
    const outside = outsideDir();
    const project = configProject('root-abs', config([CHECK], { root: outside }));
    for (const command of ['status', 'run', 'start', 'log']) {
      expectRefused(await project.vouch([command, '--json']), 'root-outside-config', ['"root" in ', JSON.stringify(outside), /pass --root DIR/, /Fix "root"/]);
    }
    expect(readdirSync(outside)).toEqual([]);
  });

  it('"../x" is refused', async () => {
    const project = configProject('root-dotdot', config([CHECK], { root: '../x' }));
    expectRefused(await project.vouch(['status', '--json']), 'root-outside-config', [/outside the config's directory/]);
  });

  it('a root through a link to a directory outside is refused, and nothing is written there', async () => {
    const outside = outsideDir();
    writeFileSync(join(outside, 'check.mjs'), PASSING);
    const project = configProject('root-link', config([CHECK], { root: 'sub' }));
    symlinkSync(outside, join(project.root, 'sub'));
    for (const command of ['status', 'run']) expectRefused(await project.vouch([command, '--json']), 'root-outside-config', [/leads through a link to/, outside]);
    // A deeper root under the link is as far outside.
    project.write('vouch.config.json', config([CHECK], { root: 'sub/deeper/yet' }));
    expectRefused(await project.vouch(['status', '--json']), 'root-outside-config', [/leads through a link to/]);
    expect(readdirSync(outside)).toEqual(['check.mjs']);
    // A dangling link could come to point anywhere, and mkdir would follow it: refused too.
    symlinkSync(join(outside, 'not-yet'), join(project.root, 'dangling'));
    project.write('vouch.config.json', config([CHECK], { root: 'dangling' }));
    expectRefused(await project.vouch(['run', '--json']), 'root-outside-config', [/a link that does not resolve/]);
    expect(readdirSync(outside)).toEqual(['check.mjs']);
  });

  it('a root below the config, even through a link inside it, loads', async () => {
    const project = configProject('root-inside', config([CHECK], { root: 'pkg' }), { 'real/check.mjs': PASSING });
    symlinkSync(join(project.root, 'real'), join(project.root, 'pkg'));
    const result = await project.vouch(['run', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).runs[0].exit_code).toBe(0);
  });

  it('--root may name a directory anywhere, and the observer it starts sees the same root', async () => {
    const outside = outsideDir();
    writeFileSync(join(outside, 'check.mjs'), PASSING);
    const cli = observedProject('root-flag', config([CHECK], { root: '/' }));
    const project = inProcess(cli);
    const ran = await project.json(['run', '--root', outside]);
    expect(ran.runs[0].exit_code).toBe(0);
    expect(existsSync(join(outside, '.vouch', 'state.db'))).toBe(true);
    const env = cleanEnv();
    try {
      const started = cli.vouch(['start', '--root', outside, '--json'], { env, timeout: 60_000 });
      expect(started.code, started.stderr).toBe(0);
      const status = await project.json(['status', '--root', outside]);
      expect(status.root).toBe(outside);
      expect(status.observation.source).toBe('observer');
      expect(status.checks[0]).toMatchObject({ freshness: 'CURRENT', result: 'PASS' });
    } finally {
      await project.vouch(['stop', '--root', outside], { env });
    }
  });
});

describe('command-line paths and numbers', () => {
  it.each([['--state-dir'], ['--config'], ['--root']])('%s "" is refused, and no state lands in the root', async (flag) => {
    const project = configProject('empty-flag', config([CHECK]));
    for (const command of ['status', 'run']) {
      expectRefused(await project.vouch([command, flag, '', '--json']), 'usage', [`${flag} is empty`]);
    }
    expect(readdirSync(project.root).sort()).toEqual(['.git', 'check.mjs', 'src', 'vouch.config.json']);
  });

  it('log --limit 99999999999999999999 lists every receipt (clamped), without a crash', async () => {
    const project = configProject('limit-flag', config([CHECK]));
    expect((await project.vouch(['run'])).code).toBe(0);
    const result = await project.vouch(['log', '--limit', '99999999999999999999', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).receipts).toHaveLength(1);
    expectRefused(await project.vouch(['log', '--limit', '1e3', '--json']), 'usage', [/--limit needs a whole number/]);
  });

  it('prove --deadline beyond what a timer can hold is refused, not turned into 1 ms', async () => {
    const project = configProject('deadline-flag', config([CHECK]), { 'package.json': '{"name":"p"}' });
    expectRefused(await project.vouch(['prove', 'claim.json', '--deadline', '99999999999999999999', '--json']), 'usage', [/--deadline needs a whole number of milliseconds, from 100 to 2147483647/]);
  });
});

describe('a check whose inputs match nothing is UNVERIFIED, never CURRENT', () => {
  it.each([
    ['a direct scan', ['--no-observer']],
    ['the observer', []],
  ])('through %s', async (_, flags) => {
    const cli = observedProject('inputs-empty', config([{ ...CHECK, inputs: ['lib/**/*.ts'] }]));
    const project = inProcess(cli);
    const env = cleanEnv();
    try {
      if (flags.length === 0) expect(cli.vouch(['start'], { env, timeout: 60_000 }).code).toBe(0);
      const ran = await project.json(['run']);
      expect(ran.runs[0].exit_code).toBe(0);
      const expectNotCurrent = async () => {
        const status = await project.json(['status', ...flags]);
        if (flags.length === 0) expect(status.observation.source).toBe('observer');
        expect(status.checks[0]).toMatchObject({ freshness: 'UNVERIFIED', reuse_eligible: false });
        const reason = status.checks[0].reasons.find((r: { code: string }) => r.code === 'inputs-empty');
        expect(reason?.message).toMatch(/match no source file; fix its "inputs" globs/);
      };
      await expectNotCurrent();
      project.write('src/a.ts', 'export const a = 2;\n');
      project.write('check.mjs', 'process.exitCode = 1;\n');
      await expectNotCurrent();
      // run --if-due never skips it.
      const again = await project.json(['run', '--if-due']);
      expect(again.runs[0].action).toBe('ran');
    } finally {
      if (flags.length === 0) await project.vouch(['stop'], { env });
    }
  });
});

describe('the validated-config mark', () => {
  it('a mark written by an older vouch (digest without the version) is not trusted', async () => {
    // Invalid by rules every vouch had: an unknown field. An older vouch marked these bytes as valid.
    const text = config([{ ...CHECK, timeout: 5 }]);
    const project = configProject('old-mark', text);
    const configPath = join(project.root, 'vouch.config.json');
    mkdirSync(join(project.root, '.vouch'), { recursive: true });
    writeFileSync(join(project.root, '.vouch', 'config.validated'), createHash('sha256').update(`${configPath}\0${text}`).digest('hex'));
    expectRefused(await project.vouch(['status', '--json']), 'config-invalid', ['$.checks[0]: unknown field "timeout"']);
  });
});
