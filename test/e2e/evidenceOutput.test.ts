import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeTracing } from '../../src/exec/trace/tracer.js';
import { cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';

/*
 * What a user sees of a receipt's evidence, from the built CLI: a traced check's run, status and
 * log say "traced, N paths" and show its notes; the same check where strace is missing falls back
 * to its declared inputs and says why. The --json documents carry the same, and match schemas/.
 */

const TRACING = probeTracing().available;

const CHECK = `import { readFileSync } from 'node:fs';
readFileSync('src/a.txt');
readFileSync('.env');
`;

const CONFIG = JSON.stringify({
  schema: 1,
  checks: [
    { name: 'traced', kind: 'test', command: ['node', 'check.mjs'], inputs: ['src/**'], mode: 'traced' },
    { name: 'plain', kind: 'test', command: ['node', 'check.mjs'] },
  ],
});

function validator(name: string) {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/);
  const validate = ajv.compile(JSON.parse(readFileSync(join(REPO, 'schemas', `${name}.schema.json`), 'utf8')));
  return (value: unknown) => (validate(value) ? null : ajv.errorsText(validate.errors));
}

let project: TempProject;
/** A PATH with node and git but no strace. */
let noStrace: string;

beforeAll(() => {
  project = tempProject('evidence-output', { '.gitignore': '.env\n', '.env': 'SECRET=1\n', 'src/a.txt': 'ok\n', 'check.mjs': CHECK, 'vouch.config.json': CONFIG });
  noStrace = mkdtempSync(join(tmpdir(), 'vouch-no-strace-'));
  for (const tool of ['node', 'git']) {
    const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
    symlinkSync(tool === 'node' ? process.execPath : found, join(noStrace, tool));
  }
});

afterAll(() => {
  project?.remove();
  if (noStrace) rmSync(noStrace, { recursive: true, force: true });
});

describe.skipIf(!TRACING)(`a traced receipt in text and JSON${TRACING ? '' : ' (SKIPPED: tracing cannot run here)'}`, () => {
  it('run says "traced, N paths" and the note, on a line of its own; a declared check says nothing new', () => {
    const run = project.vouch(['run']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/vouch: traced PASS \(exit 0\) in \S+, receipt \S+ \(traced, \d+ paths\)\n/);
    expect(run.stderr).toMatch(/\nvouch: {3}note: the run read .*\.env.* \[read-outside-inputs\]\n/);
    expect(run.stderr).toMatch(/vouch: plain PASS \(exit 0\) in \S+, receipt \S+\n/);
  });

  it('status and log show the EVIDENCE column and the note under the traced check', () => {
    const status = project.vouch(['status']).stdout.split('\n');
    expect(status[0]).toMatch(/^CHECK\s+FRESHNESS\s+RESULT\s+LAST RUN\s+TOOK\s+EVIDENCE\s+REASON$/);
    expect(status[1]).toMatch(/^traced\s+CURRENT\s+PASS\s+.*traced, \d+ paths/);
    expect(status[2]).toMatch(/^ {2}note: .*\[read-outside-inputs\]$/);
    expect(status[3]).toMatch(/^plain\s+CURRENT\s+PASS\s+.*declared/);
    const log = project.vouch(['log']).stdout;
    expect(log).toMatch(/EVIDENCE\s+REUSABLE\n/);
    expect(log).toMatch(/traced, \d+ paths\s+yes\n {2}note: .*\[read-outside-inputs\]\n/);
  });

  it('--json: the receipt and its summary carry the evidence, and match their schemas', () => {
    const log = project.json(['log']);
    expect(validator('log')(log)).toBeNull();
    const traced = log.receipts.find((receipt: { check: string }) => receipt.check === 'traced');
    expect(traced.evidence.mode).toBe('traced');
    expect(traced.evidence.notes.map((note: { code: string }) => note.code)).toEqual(['read-outside-inputs']);
    expect(traced.reuse_eligible).toBe(true);
    const status = project.json(['status']);
    expect(validator('status')(status)).toBeNull();
    expect(status.checks.map((check: { receipt: { evidence: { mode: string } } }) => check.receipt.evidence.mode)).toEqual(['traced', 'declared']);
  });
});

describe('a traced check where strace is missing', () => {
  it('falls back to its declared inputs, and run, status and --json say why', () => {
    const env = cleanEnv({ PATH: noStrace });
    const run = project.vouch(['run', 'traced', '--json'], { env });
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(validator('run')(report)).toBeNull();
    expect(report.runs[0].receipt).toMatchObject({ reuse_eligible: true, evidence: { mode: 'declared', notes: [{ code: 'trace-unavailable' }] } });
    expect(report.runs[0].receipt.evidence.notes[0].message).toMatch(/strace is not installed/);
    expect(run.stderr).toMatch(/receipt \S+ \(declared\)\nvouch: {3}note: .*strace is not installed.*\[trace-unavailable\]\n/);
    const status = project.vouch(['status', 'traced'], { env }).stdout.split('\n');
    expect(status[1]).toMatch(/^traced\s+CURRENT\s+PASS\s+.*declared/);
    expect(status[2]).toMatch(/^ {2}note: .*\[trace-unavailable\]$/);
  });
});
