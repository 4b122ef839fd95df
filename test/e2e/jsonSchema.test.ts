import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VOUCH_ERROR_CODES } from '../../src/core/errors.js';
import { gapCode } from '../../src/core/json/observer.js';
import { REASON_CODES } from '../../src/core/reason.js';
import { inProcess } from '../helpers/inProcess.js';
import { answersOf, isRunning, liveFiles, ObserverTracker, PATIENT, rpcExchange, waitGone } from '../helpers/observer.js';
import { cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';

const SCHEMAS = join(REPO, 'schemas');
const OUTPUTS = ['status', 'run', 'explain', 'explain-inputs', 'log', 'init', 'start', 'stop', 'observer', 'prove', 'savings', 'error'] as const;
type SchemaName = (typeof OUTPUTS)[number] | 'config';

function readSchema(name: SchemaName): any {
  return JSON.parse(readFileSync(join(SCHEMAS, `${name}.schema.json`), 'utf8'));
}

/**
 * Strict mode, as a careful consumer would compile them. A schema may refer to
 * another by file name (init.schema.json -> config.schema.json), so each is
 * registered under its file name. ajv-formats is not a dependency: the one
 * format used, date-time, is checked by the same UTC pattern the schemas carry.
 */
function compileSchemas() {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/);
  for (const name of [...OUTPUTS, 'config'] as const) ajv.addSchema(readSchema(name), `${name}.schema.json`);
  return (name: SchemaName, value: unknown): string | null => {
    const validate = ajv.getSchema(`${name}.schema.json`);
    if (!validate) throw new Error(`${name}.schema.json did not compile`);
    return validate(value) ? null : ajv.errorsText(validate.errors, { separator: '\n' });
  };
}

const check = compileSchemas();

function expectValid(name: SchemaName, value: unknown): void {
  const errors = check(name, value);
  expect(errors, `${name}.schema.json rejected:\n${JSON.stringify(value, null, 2)}`).toBeNull();
}

/** The string members of a union type in a TypeScript source file, e.g. `type ReasonCode = 'a' | 'b';`. */
function unionMembers(file: string, typeName: string): string[] {
  const text = readFileSync(join(REPO, file), 'utf8');
  const match = new RegExp(`export type ${typeName} =([^;]+);`).exec(text);
  if (!match?.[1]) throw new Error(`no "export type ${typeName}" in ${file}`);
  return [...match[1].matchAll(/'([^']+)'/g)].map((m) => m[1] as string);
}

const sorted = (values: readonly unknown[]) => [...values].map(String).sort();

/** Codes that are thrown and caught inside vouch, so no user ever sees them. */
const CAUGHT_INSIDE = new Set(['state-newer']);

/** Every error code a user can meet: `new VouchError(code, ...)` type-checks only against this closed list. */
function thrownErrorCodes(): string[] {
  return VOUCH_ERROR_CODES.filter((code) => !CAUGHT_INSIDE.has(code));
}

const CHECK_SCRIPT = `import { readFileSync } from 'node:fs';
process.exit(readFileSync('src/a.txt', 'utf8').includes('bad') ? 1 : 0);
`;

function configFor(unitEnv?: string[]) {
  return (
    JSON.stringify(
      {
        schema: 1,
        checks: [
          { name: 'unit', kind: 'test', command: ['node', 'check.mjs'], ...(unitEnv ? { env: unitEnv } : {}) },
          { name: 'killed', kind: 'custom', command: ['node', '-e', "process.kill(process.pid, 'SIGTERM')"] },
        ],
      },
      null,
      2,
    ) + '\n'
  );
}

/*
 * The commands whose JSON is checked run in this process, through the CLI's own dispatch
 * (test/helpers/inProcess.ts): the same command modules print the same JSON and return the same
 * exit code, errors included, without a Node start each. vouch start keeps the CLI: it spawns the
 * observer with the script it runs as. The observer it starts is a process of its own all the same,
 * and the questions to it (observer, status, stop) reach it over its socket as from a CLI process.
 * The unhealthy observer's question keeps the CLI too (validCli says why), and so does the run of
 * a check killed by a signal, whose 128+N is the exit status of a vouch process.
 */
const vouchIn = (p: TempProject, args: string[], options: { env?: NodeJS.ProcessEnv } = {}) => inProcess(p).vouch(args, options);
const jsonIn = (p: TempProject, args: string[], options: { env?: NodeJS.ProcessEnv } = {}) => inProcess(p).json(args, options);

describe('JSON output of the built CLI against schemas/', () => {
  let project: TempProject;
  const captured: Record<string, any> = {};

  beforeAll(() => {
    project = tempProject('json-schema', {
      '.gitignore': 'node_modules/\n',
      'check.mjs': CHECK_SCRIPT,
      'src/a.txt': 'ok\n',
      'node_modules/dep/index.js': 'module.exports = 1;\n',
      'vouch.config.json': configFor(),
    });
  });
  afterAll(() => project?.remove());

  it('status: a check never run is UNVERIFIED with never-run and no receipt', async () => {
    const out = await jsonIn(project, ['status']);
    expectValid('status', out);
    expect(out.observation.source).toBe('scan');
    const unit = out.checks.find((c: any) => c.name === 'unit');
    expect(unit).toMatchObject({ freshness: 'UNVERIFIED', result: null, reuse_eligible: false, receipt: null });
    expect(unit.reasons.map((r: any) => r.code)).toEqual(['never-run']);
  });

  it('explain --inputs: no receipt yet, so nothing is known', async () => {
    const out = await jsonIn(project, ['explain', 'unit', '--inputs']);
    expectValid('explain-inputs', out);
    expect(out).toMatchObject({ mode: 'declared', receipt: null, declared: null, context: null, groups: null });
  });

  it('run: a passing run reports its receipt', async () => {
    const result = await vouchIn(project, ['run', 'unit', '--json']);
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expectValid('run', out);
    expect(out.runs).toHaveLength(1);
    expect(out.runs[0]).toMatchObject({ action: 'ran', exit_code: 0, status: null, receipt: { result: 'PASS', reuse_eligible: true } });
  });

  it('status: CURRENT right after a pass', async () => {
    const out = await jsonIn(project, ['status', 'unit']);
    expectValid('status', out);
    expect(out.checks[0]).toMatchObject({ freshness: 'CURRENT', result: 'PASS', reuse_eligible: true, reasons: [] });
    captured.current = out;
  });

  it("explain --inputs: the receipt's inputs, grouped, with its context and declared globs", async () => {
    const out = await jsonIn(project, ['explain', 'unit', '--inputs']);
    expectValid('explain-inputs', out);
    expect(out.receipt).toMatchObject({ check: 'unit', result: 'PASS' });
    expect(out.groups.map((g: any) => [g.kind, g.count])).toEqual([
      ['source', out.receipt.input_count - 1],
      ['installed', 1],
    ]);
    expect(out.groups[1].buckets).toEqual([{ name: 'node_modules/dep', count: 1 }]);
    captured.inputs = out;
  });

  it('run --if-due: skipped, with the status that allowed it', async () => {
    const result = await vouchIn(project, ['run', 'unit', '--if-due', '--json']);
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expectValid('run', out);
    expect(out.runs[0]).toMatchObject({ action: 'skipped', exit_code: 0, receipt: null, status: { freshness: 'CURRENT' } });
    captured.skipped = out;
  });

  it('status: STALE after an input changes', async () => {
    project.write('src/a.txt', 'bad\n');
    const out = await jsonIn(project, ['status', 'unit']);
    expectValid('status', out);
    expect(out.checks[0]).toMatchObject({ freshness: 'STALE', result: 'PASS', reuse_eligible: false });
    expect(out.checks[0].reasons.map((r: any) => r.code)).toEqual(['inputs-changed']);
  });

  it('run: a failing run passes the check exit code through', async () => {
    const result = await vouchIn(project, ['run', 'unit', '--json']);
    expect(result.code).toBe(1);
    const out = JSON.parse(result.stdout);
    expectValid('run', out);
    expect(out).toMatchObject({ exit_code: 1, runs: [{ action: 'ran', exit_code: 1, receipt: { result: 'FAIL', exit_code: 1, signal: null } }] });
  });

  it('run: a check killed by a signal exits 128+N, with the signal on the receipt', () => {
    // Through the CLI: the exit status of a vouch process, 128+N, not a death by the signal.
    const result = project.vouch(['run', 'killed', '--json']);
    expect(result.code).toBe(143);
    const out = JSON.parse(result.stdout);
    expectValid('run', out);
    expect(out.runs[0]).toMatchObject({ exit_code: 143, receipt: { result: 'FAIL', exit_code: null, signal: 'SIGTERM' } });
  });

  it('status: a CURRENT FAIL stays a failure, with the failed reason', async () => {
    const out = await jsonIn(project, ['status', 'killed']);
    expectValid('status', out);
    expect(out.checks[0]).toMatchObject({ freshness: 'CURRENT', result: 'FAIL', reuse_eligible: false });
    expect(out.checks[0].reasons.map((r: any) => r.code)).toContain('failed');
  });

  it('explain: input, context (env) and definition changes', async () => {
    project.write('vouch.config.json', configFor(['MY_VAR']));
    project.write('src/a.txt', 'changed\n');
    project.write('src/b.txt', 'new\n');
    symlinkSync('a.txt', join(project.root, 'src', 'link.txt'));
    chmodSync(join(project.root, 'check.mjs'), 0o755);
    writeFileSync(join(project.root, 'node_modules', 'dep', 'index.js'), 'module.exports = 1;\n');
    const out = await jsonIn(project, ['explain', 'unit'], { env: cleanEnv({ MY_VAR: 'secret-value' }) });
    expectValid('explain', out);
    expect(out.check.freshness).toBe('STALE');
    expect(out.definition_changes).toEqual([{ field: 'env', old: [], new: ['MY_VAR'] }]);
    expect(out.context_changes).toContainEqual({ field: 'env.MY_VAR', old: 'unset', new: 'set' });
    expect(JSON.stringify(out)).not.toContain('secret-value');
    const kinds = Object.fromEntries(out.input_changes.map((c: any) => [c.path, c.change]));
    expect(kinds).toMatchObject({
      'src/a.txt': 'modified',
      'src/b.txt': 'added',
      'src/link.txt': 'added',
      'check.mjs': 'mode',
      'node_modules/dep/index.js': 'identity',
    });
    captured.explain = out;
  });

  it('log: every receipt, failures and signals included', async () => {
    const out = await jsonIn(project, ['log']);
    expectValid('log', out);
    expect(out.receipts.map((r: any) => r.result)).toEqual(['FAIL', 'FAIL', 'PASS']);
    expect(out.receipts[0].signal).toBe('SIGTERM');
    const limited = await jsonIn(project, ['log', 'unit', '--limit', '1']);
    expectValid('log', limited);
    expect(limited.receipts).toHaveLength(1);
  });

  it('status: UNVERIFIED when an input links outside the root', async () => {
    symlinkSync(join(REPO, 'package.json'), join(project.root, 'src', 'outside.json'));
    const out = await jsonIn(project, ['status', 'unit']);
    expectValid('status', out);
    expect(out.checks[0]).toMatchObject({ freshness: 'UNVERIFIED', reuse_eligible: false });
    expect(out.checks[0].reasons.map((r: any) => r.code)).toContain('input-outside-root');
  });

  it('errors: usage, unknown check and invalid config print the error JSON and exit 2', async () => {
    project.write('broken.json', '{ "schema": 1, "checks": [{ "name": "x", "kind": "fresh", "command": ["true"] }] }\n');
    const cases: [string[], string][] = [
      [['explain', 'nope', '--json'], 'unknown-check'],
      [['status', '--bogus', '--json'], 'usage'],
      [['status', '--config', 'broken.json', '--json'], 'config-invalid'],
      [['status', '--sync', '--cached', '--json'], 'usage'],
      [['start', '--idle-timeout', 'soon', '--json'], 'usage'],
    ];
    for (const [args, code] of cases) {
      const result = await vouchIn(project, args);
      expect(result.code, args.join(' ')).toBe(2);
      const out = JSON.parse(result.stdout);
      expectValid('error', out);
      expect(out.error.code).toBe(code);
    }
  });

  it('the schemas reject broken samples, so these tests can fail', () => {
    const current = captured.current;
    expect(check('status', current)).toBeNull();
    const broken: [string, (value: any) => void][] = [
      ['freshness FRESH', (v) => (v.checks[0].freshness = 'FRESH')],
      ['a camelCase field', (v) => (v.checks[0].reuseEligible = true)],
      ['a missing field', (v) => delete v.checks[0].reuse_eligible],
      ['a time not in UTC', (v) => (v.observation.observed_at = '2026-01-02T03:04:05.000+01:00')],
      ['an unknown reason code', (v) => (v.checks[0].reasons = [{ code: 'looks-fine', message: 'x' }])],
      ['schema 2', (v) => (v.schema = 2)],
      ['a result without a receipt', (v) => (v.checks[0].receipt = null)],
      ['reusable while STALE', (v) => (v.checks[0].freshness = 'STALE')],
      ['an exit code and a signal at once', (v) => (v.checks[0].receipt.signal = 'SIGTERM')],
    ];
    for (const [what, mutate] of broken) {
      const sample = structuredClone(current);
      mutate(sample);
      expect(check('status', sample), what).not.toBeNull();
    }

    const skipped = structuredClone(captured.skipped);
    skipped.runs[0].status.freshness = 'STALE';
    expect(check('run', skipped)).not.toBeNull();

    const explained = structuredClone(captured.explain);
    explained.input_changes[0].change = 'renamed';
    expect(check('explain', explained)).not.toBeNull();
    const envValue = structuredClone(captured.explain);
    envValue.context_changes = [{ field: 'env.MY_VAR', old: 'unset', new: 'secret-value' }];
    expect(check('explain', envValue)).not.toBeNull();
    // A script's change: its body and digest, or null when not run; a bare string or a short digest is not one.
    const script = structuredClone(captured.explain);
    const digest = 'a'.repeat(64);
    script.context_changes = [{ field: 'script.typecheck', old: { body: 'tsc --noEmit', digest }, new: null }];
    expect(check('explain', script)).toBeNull();
    script.context_changes = [{ field: 'script.typecheck', old: { body: null, digest }, new: { body: 'x', digest } }];
    expect(check('explain', script)).toBeNull();
    for (const bad of [{ body: 'tsc', digest: 'abc' }, 'tsc --noEmit', { body: 'tsc', digest, extra: 1 }]) {
      script.context_changes = [{ field: 'script.typecheck', old: bad, new: null }];
      expect(check('explain', script), JSON.stringify(bad)).not.toBeNull();
    }

    expect(check('explain-inputs', captured.inputs)).toBeNull();
    const inputsBroken: [string, (value: any) => void][] = [
      ['mode traced with the groups of a declared receipt', (v) => (v.mode = 'traced')],
      ['an environment value', (v) => (v.context.env = [{ name: 'MY_VAR', value: 'secret-value' }])],
      ['an unknown group kind', (v) => (v.groups[0].kind = 'listed')],
      ['a negative count', (v) => (v.groups[0].count = -1)],
      ['a bucket without a count', (v) => delete v.groups[1].buckets[0].count],
    ];
    for (const [what, mutate] of inputsBroken) {
      const sample = structuredClone(captured.inputs);
      mutate(sample);
      expect(check('explain-inputs', sample), what).not.toBeNull();
    }
  });
});

describe('vouch init --json against schemas/init.schema.json', () => {
  let project: TempProject;

  beforeAll(() => {
    project = tempProject(
      'json-init',
      {
        'package.json': JSON.stringify({
          name: 'p',
          private: true,
          scripts: { test: 'vitest run', lint: 'eslint --fix .', typecheck: 'tsc --noEmit' },
        }),
        'package-lock.json': '{"lockfileVersion": 3}\n',
        'tsconfig.json': '{}\n',
      },
      { git: false },
    );
  });
  afterAll(() => project?.remove());

  it('dry run, write, and an existing config all match the schema', async () => {
    const dry = await jsonIn(project, ['init', '--dry-run']);
    expectValid('init', dry);
    expect(dry).toMatchObject({ dry_run: true, written: false, existing: false, package_manager: { name: 'npm', source: 'lockfile' } });
    expect(dry.skipped.map((s: any) => s.script)).toContain('lint');
    expectValid('config', dry.config);

    const written = await jsonIn(project, ['init']);
    expectValid('init', written);
    expect(written).toMatchObject({ dry_run: false, written: true, existing: false });
    expect(JSON.parse(readFileSync(written.config_path, 'utf8'))).toEqual(written.config);

    const again = await jsonIn(project, ['init']);
    expectValid('init', again);
    expect(again).toMatchObject({ written: false, existing: true });

    const impossible = structuredClone(written);
    impossible.existing = true;
    expect(check('init', impossible)).not.toBeNull();
  });
});

describe('observer commands (start, stop, observer, status) against schemas/', () => {
  let project: TempProject;
  const observers = new ObserverTracker();
  // A client deadline long enough that a slow observer cannot hide behind the fallback to a scan.
  const patient = cleanEnv({ VOUCH_OBSERVER_TIMEOUT_MS: PATIENT });
  const captured: Record<string, any> = {};
  const stateDir = () => join(project.root, '.vouch');

  beforeAll(async () => {
    project = tempProject('json-observer', {
      '.gitignore': 'node_modules/\n',
      'check.mjs': CHECK_SCRIPT,
      'src/a.txt': 'ok\n',
      'vouch.config.json': configFor(),
    });
    const ran = await vouchIn(project, ['run', 'unit']);
    expect(ran.code, ran.stderr).toBe(0);
  });
  afterEach(async () => {
    const problems = await observers.cleanup();
    expect(problems, 'observers that would not stop').toEqual([]);
  });
  afterAll(() => project?.remove());

  /** `vouch ARGS --json`, which must exit 0 and match the schema. */
  async function valid(name: SchemaName, args: string[], env = patient): Promise<any> {
    const result = await vouchIn(project, [...args, '--json'], { env });
    expect(result.code, `vouch ${args.join(' ')}: ${result.stdout}\n${result.stderr}`).toBe(0);
    const out = JSON.parse(result.stdout);
    expectValid(name, out);
    return out;
  }

  /**
   * valid, through the CLI. An injected watch limit is first a watcher error, then, once the
   * renewal it asks for fails, a watch limit: a question from this process can come between the
   * two, where a CLI process, which starts later, finds the limit.
   */
  function validCli(name: SchemaName, args: string[], env = patient): any {
    const result = project.vouch([...args, '--json'], { env });
    expect(result.code, `vouch ${args.join(' ')}: ${result.stdout}\n${result.stderr}`).toBe(0);
    const out = JSON.parse(result.stdout);
    expectValid(name, out);
    return out;
  }

  it('observer and stop, with no observer running', async () => {
    expect(await valid('observer', ['observer'])).toEqual({ schema: 1, running: false });
    expect(await valid('stop', ['stop'])).toEqual({ schema: 1, action: 'not-running', pid: null });
  });

  it('start, a second start, observer, status from the observer and directly, then stop', async () => {
    const started = observers.start(project, [], { env: patient });
    expectValid('start', started);
    expect(started.action).toBe('started');
    expect(isRunning(started.pid), 'the observer runs').toBe(true);
    expect(existsSync(started.socket), started.socket).toBe(true);
    expect(started.index_files).toBeGreaterThan(0);
    captured.start = started;

    const again = observers.start(project, [], { env: patient });
    expectValid('start', again);
    expect(again).toMatchObject({ action: 'already-running', pid: started.pid, socket: started.socket });

    const info = await valid('observer', ['observer']);
    expect(info).toMatchObject({ running: true, pid: started.pid, healthy: true, reasons: [], socket: started.socket, index_files: started.index_files });
    expect(info.rescans).toBeGreaterThanOrEqual(1);
    expect(info.last_rescan).not.toBeNull();
    captured.observer = info;

    const synced = await valid('status', ['status']);
    expect(synced.observation).toMatchObject({ healthy: true, source: 'observer', mode: 'sync' });
    const cached = await valid('status', ['status', '--cached']);
    expect(cached.observation).toMatchObject({ healthy: true, source: 'observer', mode: 'cached' });
    const direct = await valid('status', ['status', '--no-observer']);
    expect(direct.observation).toMatchObject({ healthy: true, source: 'scan', mode: null });
    expect(answersOf(synced)).toEqual(answersOf(direct));
    expect(answersOf(cached)).toEqual(answersOf(direct));
    expect(synced.checks.find((c: any) => c.name === 'unit')).toMatchObject({ freshness: 'CURRENT', result: 'PASS', reuse_eligible: true });
    captured.status = synced;

    const stopped = await valid('stop', ['stop']);
    expect(stopped).toEqual({ schema: 1, action: 'stopped', pid: started.pid });
    captured.stop = stopped;
    expect(await waitGone(started.pid, 5_000), 'the observer exited').toBe(true);
    expect(liveFiles(stateDir())).toEqual([]);
    expect(await valid('observer', ['observer'])).toEqual({ schema: 1, running: false });
    expect(await valid('stop', ['stop'])).toEqual({ schema: 1, action: 'not-running', pid: null });
  });

  it('an unhealthy observer says why in reasons', async () => {
    const started = observers.start(project, [], { env: cleanEnv({ VOUCH_OBSERVER_TIMEOUT_MS: PATIENT, VOUCH_OBSERVER_FAULTS: '1' }) });
    // A failed watch is a lasting gap until the watcher is back (a retry 2 s later): inject again if that came first.
    let info: any = null;
    for (let attempt = 0; attempt < 5 && !(info && info.healthy === false); attempt++) {
      const fault = await rpcExchange(started.socket, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'fault', params: { kind: 'watch-limit' } }) + '\n');
      expect(fault?.result, JSON.stringify(fault)).toEqual({ injected: 'watch-limit' });
      info = validCli('observer', ['observer']);
    }
    expect(info).toMatchObject({ running: true, pid: started.pid, healthy: false });
    expect(info.reasons.map((r: any) => r.code)).toContain('observer-watch-limit');
  });

  it('a hung observer: observer is an error, status falls back to a scan', async () => {
    const started = observers.start(project, [], { env: patient });
    process.kill(started.pid, 'SIGSTOP');
    const hasty = cleanEnv({ VOUCH_OBSERVER_TIMEOUT_MS: '300' });
    const result = await vouchIn(project, ['observer', '--json'], { env: hasty });
    expect(result.code, result.stderr).toBe(2);
    const error = JSON.parse(result.stdout);
    expectValid('error', error);
    expect(error.error.code).toBe('observer-unreachable');
    const status = await valid('status', ['status'], hasty);
    expect(status.observation).toMatchObject({ source: 'scan', mode: null });
    // afterEach sends SIGCONT before it stops the observer.
  });

  it('the schemas reject broken samples, so these tests can fail', () => {
    const broken: [SchemaName, string, any, (value: any) => void][] = [
      ['start', 'an unknown action', captured.start, (v) => (v.action = 'restarted')],
      ['start', 'a missing socket', captured.start, (v) => delete v.socket],
      ['start', 'a relative socket', captured.start, (v) => (v.socket = 'observer/x.sock')],
      ['start', 'a camelCase field', captured.start, (v) => (v.readyMs = v.ready_ms)],
      ['stop', 'stopped without a pid', captured.stop, (v) => (v.pid = null)],
      ['stop', 'not-running with a pid', captured.stop, (v) => (v.action = 'not-running')],
      ['observer', 'not running, with fields', { schema: 1, running: false }, (v) => (v.pid = 1)],
      ['observer', 'running, without fields', captured.observer, (v) => delete v.events],
      ['observer', 'unhealthy without reasons', captured.observer, (v) => (v.healthy = false)],
      ['observer', 'healthy with reasons', captured.observer, (v) => (v.reasons = [{ code: 'observer-overflow', message: 'x' }])],
      ['observer', 'an unknown gap code', captured.observer, (v) => ((v.healthy = false), (v.reasons = [{ code: 'observer-tired', message: 'x' }]))],
      ['observer', 'a last rescan time not in UTC', captured.observer, (v) => (v.last_rescan.at = '2026-01-02T03:04:05.000+01:00')],
      ['observer', 'schema 2', captured.observer, (v) => (v.schema = 2)],
      ['status', 'the observer without a mode', captured.status, (v) => (v.observation.mode = null)],
      ['status', 'a scan with a mode', captured.status, (v) => (v.observation.source = 'scan')],
      ['status', 'an unknown mode', captured.status, (v) => (v.observation.mode = 'eventual')],
      ['status', 'no mode field', captured.status, (v) => delete v.observation.mode],
    ];
    for (const [name, what, sample, mutate] of broken) {
      expect(sample, `${what}: no sample was captured`).toBeDefined();
      expect(check(name, sample), `${what}: the unbroken sample`).toBeNull();
      const copy = structuredClone(sample);
      mutate(copy);
      expect(check(name, copy), what).not.toBeNull();
    }
  });
});

describe('schemas stay in step with the code', () => {
  it('reason codes in the schema are exactly the ReasonCode union', () => {
    const inSchema = readSchema('status').$defs.reason_code.enum;
    expect(sorted(inSchema)).toEqual(sorted(REASON_CODES));
  });

  it('freshness, result and input change kinds match their TypeScript types', () => {
    const status = readSchema('status');
    expect(sorted(status.$defs.freshness.enum)).toEqual(sorted(unionMembers('src/core/decide.ts', 'Freshness')));
    expect(sorted(status.$defs.result.enum.filter((v: unknown) => v !== null))).toEqual(sorted(unionMembers('src/core/receipt.ts', 'CheckResult')));
    const diff = readFileSync(join(REPO, 'src/core/diff.ts'), 'utf8');
    const changeKinds = [...new Set([...diff.matchAll(/\{ change: '([a-z]+)'/g)].map((m) => m[1]))];
    expect(changeKinds.length).toBeGreaterThan(0);
    expect(sorted(readSchema('explain').$defs.input_change.properties.change.enum)).toEqual(sorted(changeKinds));
  });

  it('observer gap codes in the schema are exactly the GapCode union', () => {
    const inSchema = readSchema('observer').$defs.gap_code.enum;
    expect(sorted(inSchema)).toEqual(sorted(gapCode.options));
  });

  it('docs/json.md explains every reason code, gap code and error code, and names every schema file', () => {
    const docs = readFileSync(join(REPO, 'docs', 'json.md'), 'utf8');
    for (const code of REASON_CODES) expect(docs, code).toContain(`\`${code}\``);
    for (const code of gapCode.options) expect(docs, code).toContain(`| \`${code}\` |`);
    for (const code of thrownErrorCodes()) expect(docs, code).toContain(`| \`${code}\` |`);
    for (const file of readdirSync(SCHEMAS)) expect(docs, file).toContain(`schemas/${file}`);
  });

  it('every example in docs/json.md matches its schema', () => {
    const docs = readFileSync(join(REPO, 'docs', 'json.md'), 'utf8');
    // Further examples of one document say what they show: <!-- example: explain (traced) -->.
    const examples = [...docs.matchAll(/<!-- example: ([\w-]+)(?: \([\w -]+\))? -->\n```json\n([\s\S]*?)\n```/g)];
    expect(sorted([...new Set(examples.map((m) => m[1]))])).toEqual(sorted(OUTPUTS));
    for (const [, name, text] of examples) expectValid(name as SchemaName, JSON.parse(text as string));
  });

  it('output schemas are closed: every object lists all its fields as required and allows no others', () => {
    // Inside if/then/else or allOf/oneOf/anyOf, a fragment may narrow fields declared elsewhere without redeclaring them all.
    const FRAGMENT = /\/(if|then|else|not|(allOf|oneOf|anyOf)\/\d+)(\/|$)/;
    const walk = (node: unknown, where: string, visit: (node: any, where: string) => void) => {
      if (node === null || typeof node !== 'object') return;
      visit(node, where);
      for (const [key, child] of Object.entries(node)) walk(child, `${where}/${key}`, visit);
    };
    let objects = 0;
    for (const name of OUTPUTS) {
      const schema = readSchema(name);
      expect(schema.$schema, name).toBe('https://json-schema.org/draft/2020-12/schema');
      // A document with several shapes (observer: running or not) lists them under oneOf, each closed and each with schema: 1.
      const shapes = schema.oneOf ?? [schema];
      expect(shapes.length, name).toBeGreaterThan(0);
      for (const shape of shapes) expect(shape.properties.schema.const, name).toBe(1);
      walk(schema, name, (node, where) => {
        if (!node.properties || typeof node.properties !== 'object' || where.endsWith('/properties')) return;
        if (FRAGMENT.test(where) && node.required === undefined) return;
        objects += 1;
        expect(node.additionalProperties, where).toBe(false);
        expect(sorted(node.required ?? []), where).toEqual(sorted(Object.keys(node.properties)));
      });
    }
    expect(objects).toBeGreaterThan(10);
  });

  it('every schemas/*.schema.json is exactly what the generator makes from the code (config and claim from their validators)', () => {
    const result = spawnSync(process.execPath, [join(REPO, 'scripts', 'generate-config-schema.mjs'), '--check'], { encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    expect(readSchema('config').additionalProperties).toBe(false);
    expect(JSON.parse(readFileSync(join(SCHEMAS, 'claim.schema.json'), 'utf8')).additionalProperties).toBe(false);
  });
});
