import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseClaimToken } from '../../src/core/claimToken.js';
import { demoWorkspace, installedVersion } from '../helpers/claims.js';
import { REPO, type TempProject } from '../helpers/project.js';

/*
 * `vouch prove` end to end on the bundled example turned into a Jest
 * workspace: ts-jest, a `jest` test script, no Vitest config. The runtime
 * stage runs the workspace's Jest (30, or 29 through a linked copy), the
 * receipt names it, and nothing touches the working tree.
 */

const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
const validateReport = ajv.compile(JSON.parse(readFileSync(join(REPO, 'schemas', 'prove.schema.json'), 'utf8')));

const JEST_CONFIG = `module.exports = {
  testEnvironment: 'node',
  // The example imports './money.js' as NodeNext wants; Jest resolves the .ts beside it.
  moduleNameMapper: { '^(\\\\.{1,2}/.*)\\\\.js$': '$1' },
  transform: { '^.+\\\\.ts$': ['ts-jest', { tsconfig: { module: 'commonjs', moduleResolution: 'node' } }] },
};
`;

/** The example with Jest as its runner, committed, and `node_modules/jest` linked to `jest` when given. */
function jestWorkspace(name: string, jest?: string): TempProject {
  const app = demoWorkspace(name);
  rmSync(join(app.root, 'vitest.config.ts'));
  app.write('jest.config.cjs', JEST_CONFIG);
  const edit = (path: string, change: (value: any) => void) => {
    const value = JSON.parse(readFileSync(join(app.root, path), 'utf8'));
    change(value);
    writeFileSync(join(app.root, path), JSON.stringify(value, null, 2));
  };
  edit('package.json', (pkg) => (pkg.scripts.test = 'jest'));
  edit('tsconfig.json', (tsconfig) => (tsconfig.include = ['src', 'test']));
  for (const claim of ['discount-cap', 'wrong-stage']) edit(`claims/${claim}.json`, (value) => (value.case.test.text = value.case.test.text.replace("from 'vitest'", "from '@jest/globals'")));
  app.write('test/cart.test.ts', readFileSync(join(app.root, 'test/cart.test.ts'), 'utf8').replace("from 'vitest'", "from '@jest/globals'"));
  if (jest !== undefined) {
    mkdirSync(join(app.root, 'node_modules'), { recursive: true });
    symlinkSync(jest, join(app.root, 'node_modules', 'jest'));
  }
  app.git('add', '-A');
  app.git('commit', '-qm', 'jest');
  return app;
}

for (const [copy, version] of [
  [undefined, installedVersion('jest')],
  [join(REPO, 'node_modules', 'jest29'), installedVersion('jest29')],
] as const) {
  describe(`vouch prove on a Jest ${version} workspace`, () => {
    let app: TempProject;
    beforeAll(() => {
      app = jestWorkspace('prove-jest', copy);
    });
    afterAll(() => app?.remove());

    it('discount-cap earns a receipt that names Jest, its control broken by the failing test, the tree untouched', () => {
      // The example ignores node_modules/, where a linked Jest lives.
      const status = app.git('status', '--porcelain', '--ignored');
      const result = app.vouch(['prove', 'claims/discount-cap.json', '--json']);
      expect(result.code, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout);
      expect(validateReport(report) ? null : ajv.errorsText(validateReport.errors)).toBeNull();
      expect(report.verdict.toolchain).toEqual({ typescript: installedVersion('typescript'), linter: { name: 'oxlint', version: installedVersion('oxlint') }, vitest: null, jest: version });
      const token = parseClaimToken(report.receipt);
      expect(token.toolchain.jest).toBe(version);
      expect(report.receipt).toContain(`:jest@${version}:`);
      const checks = report.verdict.checks;
      expect(checks.filter((check: any) => check.phase === 'case').flatMap((check: any) => check.issues)).toEqual([]);
      const controlRuntime = checks.find((check: any) => check.phase === 'control' && check.stage === 'runtime');
      expect(controlRuntime.issues).toContainEqual(expect.objectContaining({ origin: 'claimant', path: 'test/discount-cap.test.ts', line: 8 }));
      expect(app.git('status', '--porcelain', '--ignored')).toBe(status);
      expect(status).toBe(copy === undefined ? '' : '!! node_modules/\n');
    });

    it('an infinite loop in the test hits the deadline, blames the claimant, and leaves no Jest host running', () => {
      const claim = JSON.parse(readFileSync(join(app.root, 'claims', 'discount-cap.json'), 'utf8'));
      claim.case.test.text = "import { it } from '@jest/globals';\nit('spins', () => {\n  while (true) {}\n});\n";
      app.write('loop.json', JSON.stringify(claim));
      const started = Date.now();
      const result = app.vouch(['prove', 'loop.json', '--deadline', '4000', '--no-server', '--json'], { timeout: 90_000 });
      rmSync(join(app.root, 'loop.json'));
      expect(result.code, result.stderr).toBe(2);
      const error = JSON.parse(result.stdout).error;
      expect(error).toMatchObject({ code: 'deadline', origin: 'claimant' });
      expect(error.message).toMatch(/the runtime stage's inspection of the case did not finish within 4000 ms/);
      expect(Date.now() - started).toBeLessThan(60_000);
      // The host was killed, not left spinning: no process runs from the workspace.
      const hosts = spawnSync('pgrep', ['-f', 'jestHost.js'], { encoding: 'utf8' }).stdout.trim().split('\n').filter((pid) => pid !== '');
      const here = hosts.filter((pid) => {
        try {
          return readlinkSync(`/proc/${pid}/cwd`) === app.root;
        } catch {
          return false;
        }
      });
      expect(here).toEqual([]);
    });

    it('says jest@V in the text verdict', () => {
      const result = app.vouch(['prove', 'claims/discount-cap.json']);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`judged by typescript@[^,]+, oxlint@[^,]+, jest@${version.replaceAll('.', '\\.')}`));
    });
  });
}

describe('vouch prove on a Jest workspace with a Jest before 29', () => {
  it('is refused before any stage runs', () => {
    const app = jestWorkspace('prove-jest-old');
    try {
      app.write('node_modules/jest/package.json', JSON.stringify({ name: 'jest', version: '28.1.3', main: 'index.js' }));
      app.write('node_modules/jest/index.js', `throw new Error('the fake jest was loaded');\n`);
      const result = app.vouch(['prove', 'claims/discount-cap.json']);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('vouch: [workspace] unsupported: jest 28.1.3; vouch needs jest ≥ 29.0');
    } finally {
      app.remove();
    }
  });
});
