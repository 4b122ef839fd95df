import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cleanEnv, REPO } from '../helpers/project.js';

const run = promisify(execFile);

describe('npm run demo', () => {
  // The demo runs the real tsc, oxlint and vitest five times in all; each tsc run takes seconds on two cores.
  it('tells its whole story with the built CLI and exits 0', { timeout: 300_000 }, async () => {
    let stdout: string;
    let stderr: string;
    try {
      ({ stdout, stderr } = await run(process.execPath, [join(REPO, 'scripts', 'demo.mjs')], {
        cwd: REPO,
        env: cleanEnv({ NO_COLOR: '1' }),
        timeout: 280_000,
        maxBuffer: 16 * 1024 * 1024,
      }));
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      throw new Error(`the demo exited ${failed.code}:\n${failed.stderr ?? ''}\n--- its output ---\n${failed.stdout ?? ''}`);
    }
    const text = stdout.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');

    expect(stderr).not.toMatch(/demo FAILED/);
    expect(text).toContain('$ vouch init');
    expect(text).toContain('ok: vouch.config.json has the checks typecheck, lint, test');
    expect(text).toContain('ok: typecheck UNVERIFIED -, lint UNVERIFIED -, test UNVERIFIED -');
    expect(text).toContain('ok: typecheck CURRENT PASS, lint CURRENT PASS, test CURRENT PASS');
    expect(text).toMatch(/skipped test: CURRENT PASS, receipt \S+ from \d+s ago, saved \S+/);
    expect(text).toContain('ok: typecheck STALE PASS, lint STALE PASS, test STALE PASS');
    // Declared evidence says "modified PATH"; traced evidence (init proposes it where tracing works) "PATH: content changed".
    expect(text).toMatch(/modified\s+src\/cart\.ts|src\/cart\.ts: content changed/);
    expect(text).toMatch(/src\/cart\.ts\(\d+,\d+\): error TS2345/);
    // After the revert, the first receipts answer again, the typecheck's included: nothing runs.
    const afterRevert = text.slice(text.indexOf('9. Revert the edit'));
    expect(afterRevert).toContain('ok: typecheck CURRENT PASS, lint CURRENT PASS, test CURRENT PASS');
    expect(afterRevert).toContain('ok: all three skipped: the typecheck on its first receipt');
    expect(text).toContain('ok: 4 receipts');
    expect(text).toMatch(/\nreceipt vouch-claim:[0-9a-f]{64}:runtime:typescript@[^:]+:oxlint@[^:]+:vitest@[^:]+:config@[0-9a-f]{32}:tsconfig\.json@[0-9a-f]+\n/);
    expect(text).toContain('ok: case clean at type, lint and runtime; the control failed the test at runtime: receipt minted, tree untouched');
    expect(text).toContain('ok: the compiler caught the control, so the test never proved anything: no receipt');
    expect(text.trimEnd().split('\n').at(-2)).toBe('Demo passed: every step behaved as the story says.');
  });
});
