/**
 * A project whose one check, "verdict" (npm test), fails on a "bad" line in src/ or when
 * outcome.txt says fail: the receipts of edit-and-revert tests (test/e2e/earlierReceipt.test.ts,
 * test/integration/earlierReceiptCampaign.test.ts).
 */
// The verdict depends on the inputs (a "bad" line fails) and on outcome.txt, which is not an input:
// a same-inputs rerun can then differ, as a flaky test does.
export const VERDICT = {
  name: 'verdict',
  kind: 'test',
  script: 'test',
  inputs: ['src/**', 'verdict.cjs'],
  env: ['MY_SETTING'],
};
const VERDICT_JS = `const fs = require('fs');
const bad = fs.readdirSync('src').some((name) => fs.readFileSync('src/' + name, 'utf8').includes('bad'));
const flaky = fs.readFileSync('outcome.txt', 'utf8').trim() === 'fail';
process.exit(bad || flaky ? 1 : 0);
`;
export const FILES: Record<string, string> = {
  'vouch.config.json': JSON.stringify({ schema: 1, packageManager: 'npm', checks: [VERDICT] }, null, 2) + '\n',
  'package.json': JSON.stringify({ name: 'fx', version: '1.0.0', private: true, scripts: { test: 'node verdict.cjs' } }, null, 2) + '\n',
  '.gitignore': 'node_modules/\n',
  'verdict.cjs': VERDICT_JS,
  'outcome.txt': 'pass\n',
  'src/a.js': 'export const a = 1;\n',
  'src/b.js': 'export const b = 1;\n',
};
export const A = 'export const a = 1;\n';
export const EDITED = 'export const a = 2; // edited\n';
