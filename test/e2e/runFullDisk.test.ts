import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openRunLog } from '../../src/exec/runLog.js';
import { CLI, cleanEnv, tempProject, type TempProject } from '../helpers/project.js';

/*
 * A full disk, made without root: a 1 MB tmpfs mounted on the state dir inside a
 * user and mount namespace (unshare -rm). The project stays on the normal disk.
 * Everything that needs the small disk runs inside one namespace, and leaves
 * what the test reads in files beside the project.
 */
const SIZE = '1m';

function tmpfsUnavailable(): string | null {
  const probe = tempProject('fulldisk-probe', {}, { git: false });
  try {
    mkdirSync(join(probe.root, 'm'));
    const result = spawnSync('unshare', ['-rm', 'sh', '-c', `mount -t tmpfs -o size=${SIZE} tmpfs "$0" && echo mounted`, join(probe.root, 'm')], {
      encoding: 'utf8',
    });
    if (result.error) return `unshare cannot run here (${result.error.message})`;
    if (!result.stdout.includes('mounted')) return `unshare -rm cannot mount a tmpfs here: ${result.stderr.trim() || `exit ${result.status}`}`;
    return null;
  } finally {
    probe.remove();
  }
}

const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`skipping the full-disk tests: ${unavailable}`);

/** $S is the small state dir; \`fill N\` leaves N KiB free on it; \`vouch\` runs the built CLI. */
function onSmallDisk(project: TempProject, script: string) {
  const state = join(project.root, 'state');
  mkdirSync(state, { recursive: true });
  const full = [
    'set -u',
    `mount -t tmpfs -o size=${SIZE} tmpfs "$S"`,
    'vouch() { timeout 30 "$NODE" "$CLI" "$@"; }',
    `fill() { head -c 4000000 /dev/zero > "$S/filler" 2>/dev/null; truncate -s -$(( $1 * 1024 )) "$S/filler"; }`,
    script,
  ].join('\n');
  const result = spawnSync('unshare', ['-rm', 'sh', '-c', full], {
    cwd: project.root,
    env: cleanEnv({ S: state, NODE: process.execPath, CLI }),
    encoding: 'utf8',
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  const read = (name: string) => readFileSync(join(project.root, name), 'utf8');
  return { ...result, read };
}

function config(checks: object[]): string {
  return JSON.stringify({ schema: 1, checks }, null, 2);
}

let project: TempProject | undefined;
afterEach(() => {
  project?.remove();
  project = undefined;
});

const BIG = 3_000_000;

describe.skipIf(unavailable !== null)('vouch run with its state dir on a full disk', () => {
  it('a check printing 3 MB onto a 1 MB disk: its output streams, its exit code stands, the receipt is saved as not reusable, the log is cut to 64 KiB', () => {
    project = tempProject('fulldisk-log', {
      'vouch.config.json': config([
        {
          name: 'big',
          kind: 'custom',
          command: ['node', '-e', `process.stdout.write('x'.repeat(${BIG})); process.exitCode = 3`],
          inputs: ['src/**'],
        },
      ]),
      '.gitignore': 'state/\nout*\nrc*\nlocks*\nlog*\n',
      'src/a.txt': 'a\n',
    });
    const result = onSmallDisk(
      project,
      `vouch run big --state-dir "$S" --json > out.json 2> out.err; echo $? > rc
ls -A "$S/locks" > locks.txt
wc -c "$S"/logs/*.log > logsizes.txt
vouch log big --state-dir "$S" --json > log.json 2> log.err; echo $? > rc.log`,
    );
    expect(result.status, result.stderr).toBe(0);
    const err = result.read('out.err');
    // vouch did not crash, and said nothing of its own code standing in for the check's.
    expect(err).not.toMatch(/Unhandled|ENOSPC: no space left|internal error/);
    expect(Number(result.read('rc'))).toBe(3);
    // With --json the check's output goes to stderr, whole, although its log could not keep it.
    expect(err.match(/x{100,}/g)?.reduce((sum, run) => sum + run.length, 0)).toBe(BIG);

    const report = JSON.parse(result.read('out.json'));
    expect(report).toMatchObject({ schema: 1, exit_code: 3, runs: [{ name: 'big', action: 'ran', exit_code: 3, error: null }] });
    const receipt = report.runs[0].receipt;
    expect(receipt).toMatchObject({ result: 'FAIL', exit_code: 3, reuse_eligible: false });
    expect(receipt.reasons.map((r: { code: string }) => r.code)).toEqual(['failed', 'log-not-written']);

    // The log gave its space back: at most its first 64 KiB are kept.
    const sizes = result.read('logsizes.txt').trim().split('\n');
    expect(sizes).toHaveLength(1);
    const size = Number(sizes[0]?.trim().split(/\s+/)[0]);
    expect(size).toBeGreaterThan(0);
    expect(size).toBeLessThanOrEqual(64 * 1024);
    expect(result.read('locks.txt')).toBe('');

    // The receipt is in the store.
    expect(Number(result.read('rc.log')), result.read('log.err')).toBe(0);
    const log = JSON.parse(result.read('log.json'));
    expect(log.receipts.map((r: { run_id: string }) => r.run_id)).toEqual([receipt.run_id]);
    expect(log.receipts[0].reasons.map((r: { code: string }) => r.code)).toContain('log-not-written');
  });

  it('a check that fills the disk while it runs: the receipt cannot be saved, the exit code is still the check\'s, and the report says disk-full', () => {
    project = tempProject('fulldisk-receipt', {
      'vouch.config.json': config([
        { name: 'small', kind: 'custom', command: ['node', '-e', '0'], inputs: ['src/**'] },
        {
          name: 'filler',
          kind: 'custom',
          // Fills the state disk to the last byte, then fails with its own code.
          command: [
            'node',
            '-e',
            `const fs = require('fs'); const fd = fs.openSync(process.env.S + '/check-filler', 'w'); try { for (;;) fs.writeSync(fd, Buffer.alloc(4096)); } catch {} process.exitCode = 5;`,
          ],
          inputs: ['src/**'],
        },
      ]),
      '.gitignore': 'state/\nout*\nrc*\nlocks*\n',
      'src/a.txt': 'a\n',
    });
    const result = onSmallDisk(
      project,
      `vouch run small --state-dir "$S" > /dev/null 2>&1
vouch run filler --state-dir "$S" --json > out.json 2> out.err; echo $? > rc
ls -A "$S/locks" > locks.txt`,
    );
    expect(result.status, result.stderr).toBe(0);
    const err = result.read('out.err');
    expect(err).not.toMatch(/internal error|Unhandled/);
    expect(Number(result.read('rc')), err).toBe(5);
    const report = JSON.parse(result.read('out.json'));
    expect(report).toMatchObject({ schema: 1, exit_code: 5, runs: [{ name: 'filler', action: 'ran', exit_code: 5, receipt: { exit_code: 5, result: 'FAIL' } }] });
    expect(report.runs[0].error).toMatchObject({ code: 'disk-full' });
    expect(report.runs[0].error.message).toMatch(/was not saved: the disk holding the state dir .* is full/);
    expect(err).toMatch(/was not saved: the disk holding the state dir .* is full .*\[disk-full\]/);
    expect(result.read('locks.txt')).toBe('');
  });

  it('a disk already full before the check starts: exit 74, disk-full naming the fix, the check never started, no lock left', () => {
    project = tempProject('fulldisk-before', {
      'vouch.config.json': config([
        { name: 'small', kind: 'custom', command: ['node', '-e', '0'], inputs: ['src/**'] },
        { name: 'marked', kind: 'custom', command: ['node', '-e', "require('fs').writeFileSync('out-started', '')"], inputs: ['src/**'] },
      ]),
      '.gitignore': 'state/\nout*\nrc*\nlocks*\n',
      'src/a.txt': 'a\n',
    });
    // A lock that a killed run left: recovering it takes a write too, which must fail, not spin.
    const stale = JSON.stringify({ pid: process.pid, runId: '20000101T000000Z-dead00', check: 'marked', startedAt: 0, processStart: '1' });
    for (const [free, staleLock] of [[0, false], [8, false], [0, true]] as const) {
      const result = onSmallDisk(
        project,
        `vouch run small --state-dir "$S" > /dev/null 2>&1
${staleLock ? `printf '%s' '${stale}' > "$S/locks/marked.lock"` : ''}
fill ${free}
vouch run marked --state-dir "$S" --json > out.json 2> out.err; echo $? > rc
ls -A "$S/locks" > locks.txt`,
      );
      expect(result.status, result.stderr).toBe(0);
      const err = result.read('out.err');
      expect(Number(result.read('rc')), `${free} KiB free: ${err}`).toBe(74);
      const report = JSON.parse(result.read('out.json'));
      expect(report.error.code).toBe('disk-full');
      expect(report.error.message).toMatch(/the disk holding the state dir .* is full/);
      expect(report.error.message).toMatch(/free space on it, or keep state elsewhere with --state-dir DIR/);
      expect(err).not.toMatch(/permissions|internal error/);
      expect(existsSync(join(project.root, 'out-started')), 'the check started').toBe(false);
      expect(result.read('locks.txt')).toBe(staleLock ? 'marked.lock\n' : '');
    }
  });
});

describe('the run log', () => {
  it('is created owner-only, and a link planted at its path is refused, not written through', () => {
    const dir = tempProject('runlog', {}, { git: false });
    project = dir;
    const log = openRunLog(join(dir.root, 'a.log'), dir.root);
    log.write('hello\n');
    expect(log.close()).toBeNull();
    expect(statSync(join(dir.root, 'a.log')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir.root, 'a.log'), 'utf8')).toBe('hello\n');

    writeFileSync(join(dir.root, 'victim'), 'precious\n');
    symlinkSync(join(dir.root, 'victim'), join(dir.root, 'b.log'));
    expect(() => openRunLog(join(dir.root, 'b.log'), dir.root)).toThrow(expect.objectContaining({ code: 'state-dir-unsafe' }));
    expect(readFileSync(join(dir.root, 'victim'), 'utf8')).toBe('precious\n');
  });
});
