#!/usr/bin/env node
// The vouch demo: copies examples/demo-app to .demo/demo-app, makes it a git
// repository, and tells a short story with the built CLI and the real tsc,
// oxlint and vitest. Every step checks its own outcome, so the demo exits 0
// only when vouch behaved as the story says.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(REPO, 'dist', 'bin', 'main.js');
const EXAMPLE = join(REPO, 'examples', 'demo-app');
// Inside the repo, so the demo finds typescript, oxlint and vitest in the repo's node_modules.
const DEMO = join(REPO, '.demo', 'demo-app');
const CHECKS = ['typecheck', 'lint', 'test'];
const EDITED = 'src/cart.ts';

const color = process.stdout.isTTY && !('NO_COLOR' in process.env);
const paint = (code, text) => (color ? `\u001b[${code}m${text}\u001b[0m` : text);
const bold = (text) => paint('1', text);
const dim = (text) => paint('2', text);
// Colour codes that tools print, stripped before the story checks their words.
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

class StoryBroke extends Error {}

function demoEnv() {
  const env = { ...process.env };
  // The demo behaves the same under "npm run demo", a test runner, or plain node.
  for (const name of Object.keys(env)) {
    if (name.startsWith('npm_') || name.startsWith('VITEST') || name === 'INIT_CWD') delete env[name];
  }
  // A fresh machine may have no git identity; the demo's one commit needs one.
  return {
    ...env,
    GIT_AUTHOR_NAME: 'vouch demo',
    GIT_AUTHOR_EMAIL: 'demo@example.invalid',
    GIT_COMMITTER_NAME: 'vouch demo',
    GIT_COMMITTER_EMAIL: 'demo@example.invalid',
  };
}
const ENV = demoEnv();

function say(text = '') {
  process.stdout.write(`${text}\n`);
}

function chapter(text) {
  say();
  say(bold(`## ${text}`));
}

function ok(text) {
  say(paint('32', `   ok: ${text}`));
}

function expect(condition, message) {
  if (!condition) throw new StoryBroke(message);
}

function git(...args) {
  const result = spawnSync('git', ['-c', 'commit.gpgsign=false', ...args], {
    cwd: DEMO,
    env: ENV,
    encoding: 'utf8',
  });
  if (result.error) throw new StoryBroke(`could not run git (${result.error.message}); the demo needs git on PATH`);
  if (result.status !== 0) throw new StoryBroke(`git ${args.join(' ')} failed: ${result.stderr.trim()}`);
  return result.stdout;
}

/** Runs the CLI as a user would, showing the command and its output live. */
function vouch(...args) {
  say();
  say(bold(`$ vouch ${args.join(' ')}`));
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: DEMO, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const show = (chunk) => {
      output += chunk;
      process.stdout.write(chunk);
    };
    child.stdout.setEncoding('utf8').on('data', show);
    child.stderr.setEncoding('utf8').on('data', show);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const seconds = (performance.now() - started) / 1000;
      say(dim(`[exit ${code ?? signal}, ${seconds.toFixed(1)}s]`));
      resolvePromise({ code, output: output.replace(ANSI, ''), seconds });
    });
  });
}

/** Asks quietly, in JSON, so the story checks facts rather than table layout. */
function vouchJson(...args) {
  const result = spawnSync(process.execPath, [CLI, ...args, '--json'], { cwd: DEMO, env: ENV, encoding: 'utf8' });
  if (result.status !== 0) throw new StoryBroke(`vouch ${args.join(' ')} --json exited ${result.status}: ${result.stderr.trim()}`);
  return JSON.parse(result.stdout);
}

/** expected: { check: 'FRESHNESS RESULT' }, e.g. { typecheck: 'CURRENT PASS', lint: 'UNVERIFIED -' }. */
function expectStatus(expected, why) {
  const report = vouchJson('status');
  const seen = Object.fromEntries(report.checks.map((check) => [check.name, `${check.freshness} ${check.result ?? '-'}`]));
  for (const [name, want] of Object.entries(expected)) {
    expect(seen[name] === want, `expected ${name} to be ${want} ${why}, but vouch status says ${seen[name] ?? 'nothing about it'}`);
  }
  ok(Object.entries(expected).map(([name, want]) => `${name} ${want}`).join(', '));
}

function receiptCounts() {
  const { receipts } = vouchJson('log', '--limit', '1000');
  const counts = Object.fromEntries(CHECKS.map((name) => [name, 0]));
  for (const receipt of receipts) counts[receipt.check] = (counts[receipt.check] ?? 0) + 1;
  return counts;
}

/** Asserts which checks ran (left a new receipt) since `before`, and which did not. */
function expectRan(before, ran, why) {
  const after = receiptCounts();
  for (const name of CHECKS) {
    const added = after[name] - before[name];
    const want = ran.includes(name) ? 1 : 0;
    expect(added === want, `expected ${name} to ${want ? 'run once' : 'be skipped'} ${why}, but it left ${added} new receipt(s)`);
  }
  return after;
}

function setUp() {
  if (!existsSync(CLI)) {
    throw new StoryBroke(`the CLI is not built (${CLI} is missing); run "npm ci" or "npm run build" first`);
  }
  rmSync(dirname(DEMO), { recursive: true, force: true });
  mkdirSync(dirname(DEMO), { recursive: true });
  cpSync(EXAMPLE, DEMO, { recursive: true });
  // The tools come from vouch's own node_modules, one level up. An installed project has its
  // own node_modules, where vitest keeps its cache; without one, vitest's first run would make
  // it, and the traced typecheck and lint, which list the project's root, would see a new entry.
  mkdirSync(join(DEMO, 'node_modules'));
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'demo-app: a shopping cart with typecheck, lint and test');
}

async function story() {
  say(bold('vouch demo: receipts for a small TypeScript project'));
  say(`The project: ${DEMO.slice(REPO.length + 1)} (a copy of examples/demo-app, committed to a fresh git repository).`);
  say('Its scripts run the real tsc, oxlint and vitest.');
  setUp();

  chapter('1. vouch init proposes a check for each script that verifies something');
  let step = await vouch('init');
  expect(step.code === 0, `vouch init exited ${step.code}`);
  const config = JSON.parse(readFileSync(join(DEMO, 'vouch.config.json'), 'utf8'));
  const names = config.checks.map((check) => check.name);
  expect(
    CHECKS.every((name) => names.includes(name)),
    `vouch.config.json should have the checks ${CHECKS.join(', ')}, but has ${names.join(', ') || 'none'}`,
  );
  ok(`vouch.config.json has the checks ${names.join(', ')}`);

  chapter('2. Nothing has run yet, so nothing is vouched for');
  step = await vouch('status');
  expect(step.code === 0, `vouch status exited ${step.code}`);
  expectStatus({ typecheck: 'UNVERIFIED -', lint: 'UNVERIFIED -', test: 'UNVERIFIED -' }, 'before any run');

  chapter('3. vouch run runs every check and keeps a receipt of each');
  let counts = receiptCounts();
  step = await vouch('run');
  expect(step.code === 0, `vouch run exited ${step.code}; every check of the demo app should pass`);
  counts = expectRan(counts, CHECKS, 'on the first run');
  const fullRun = step.seconds;

  chapter('4. The receipts apply to the code as it is now');
  await vouch('status');
  expectStatus({ typecheck: 'CURRENT PASS', lint: 'CURRENT PASS', test: 'CURRENT PASS' }, 'right after they passed');

  chapter('5. An agent about to rerun everything "to be sure" asks first');
  step = await vouch('run', '--if-due');
  expect(step.code === 0, `vouch run --if-due exited ${step.code}`);
  counts = expectRan(counts, [], 'when nothing changed');
  for (const name of CHECKS) {
    expect(new RegExp(`skipped ${name}: CURRENT PASS.*saved`).test(step.output), `vouch run --if-due should say it skipped ${name} and what it saved`);
  }
  ok(`all three skipped in ${step.seconds.toFixed(1)}s; running them took ${fullRun.toFixed(1)}s`);

  chapter(`6. An edit: ${EDITED} passes the discount code where the percentage belongs`);
  const original = readFileSync(join(DEMO, EDITED), 'utf8');
  const broken = original.replace('percentOf(before, discount.percent)', 'percentOf(before, discount.code)');
  expect(broken !== original, `the demo's edit no longer applies to ${EDITED}; update scripts/demo.mjs to match the example`);
  writeFileSync(join(DEMO, EDITED), broken);
  say(dim(`-   const off = discount ? percentOf(before, discount.percent) : 0;`));
  say(dim(`+   const off = discount ? percentOf(before, discount.code) : 0;`));
  await vouch('status');
  expectStatus({ typecheck: 'STALE PASS', lint: 'STALE PASS', test: 'STALE PASS' }, `after ${EDITED} changed`);

  chapter('7. vouch explain says what changed since the receipt');
  step = await vouch('explain', 'typecheck');
  expect(step.code === 0, `vouch explain exited ${step.code}`);
  // Declared evidence says "modified PATH"; traced evidence (where init proposed it) "PATH: content changed".
  expect(new RegExp(`modified\\s+${EDITED}|${EDITED}: content changed`).test(step.output), `vouch explain typecheck should name ${EDITED} as modified`);
  ok(`explain names ${EDITED}`);

  chapter('8. The typecheck is due, so it runs, and the compiler catches the bug');
  step = await vouch('run', 'typecheck', '--if-due');
  expect(step.code !== 0, 'vouch run typecheck should fail on the type error, but it exited 0');
  expect(/error TS2345/.test(step.output), 'tsc should report error TS2345 (a string passed where a number belongs)');
  counts = expectRan(counts, ['typecheck'], 'when only the typecheck was asked for');
  expectStatus({ typecheck: 'CURRENT FAIL' }, 'right after it failed');
  say('   A FAIL that is CURRENT is still a failure: it is a fact about this exact code.');

  chapter('9. Revert the edit');
  writeFileSync(join(DEMO, EDITED), original);
  expect(git('status', '--porcelain', '--', EDITED).trim() === '', `${EDITED} should be back to its committed content`);
  ok(`${EDITED} is byte for byte as committed`);
  await vouch('status');
  expectStatus(
    { typecheck: 'CURRENT PASS', lint: 'CURRENT PASS', test: 'CURRENT PASS' },
    'after the revert (every first receipt was bound to this content; the failed typecheck to the broken one)',
  );
  say('   Freshness follows content, not time: the code is what the first receipts checked, so they');
  say('   answer again, the first typecheck PASS included. The failed typecheck stays in the log.');

  chapter('10. Nothing is due, so nothing runs');
  step = await vouch('run', '--if-due');
  expect(step.code === 0, `vouch run --if-due exited ${step.code}`);
  counts = expectRan(counts, [], 'after the revert');
  ok('all three skipped: the typecheck on its first receipt, which holds for this content again');

  chapter('11. Every receipt is kept, failures included');
  step = await vouch('log');
  expect(step.code === 0, `vouch log exited ${step.code}`);
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  expect(total === 4, `expected 4 receipts in the log (3 + 1 failed typecheck), found ${total}`);
  ok('4 receipts: three first runs and the failed typecheck');

  chapter('12. A claim: an edit, its test, and a control that must break where it says');
  say('   claims/discount-cap.json caps discounts at 50% and tests it. Its control forgets the cap and');
  say('   declares that the test must catch that at runtime. Nothing is written into the tree.');
  step = await vouch('prove', 'claims/discount-cap.json');
  expect(step.code === 0, `vouch prove exited ${step.code}; the discount-cap claim should earn a receipt`);
  expect(/\nreceipt vouch-claim:[0-9a-f]{64}:runtime:/.test(step.output), 'the prove output should end with the receipt token');
  expect(git('status', '--porcelain', '--', 'src', 'test').trim() === '', 'vouch prove must not write a draft into the working tree');
  ok('case clean at type, lint and runtime; the control failed the test at runtime: receipt minted, tree untouched');

  chapter('13. A control that breaks at the wrong stage earns nothing');
  say('   claims/wrong-stage.json passes the cap as a string and declares the test will catch it at runtime.');
  step = await vouch('prove', 'claims/wrong-stage.json');
  expect(step.code === 1, `vouch prove exited ${step.code}; the wrong-stage claim should earn no receipt`);
  expect(step.output.trimEnd().endsWith('no receipt') && /also breaks at the type stage/.test(step.output), 'the prove output should say the control breaks at type and end with "no receipt"');
  ok('the compiler caught the control, so the test never proved anything: no receipt');

  say();
  say(bold('Demo passed: every step behaved as the story says.'));
  say(`The demo project stays in ${DEMO.slice(REPO.length + 1)}; try "node ../../dist/bin/main.js status" there.`);
}

try {
  await story();
} catch (error) {
  say();
  if (error instanceof StoryBroke) {
    process.stderr.write(`demo FAILED: ${error.message}\n`);
  } else {
    process.stderr.write(`demo FAILED with an unexpected error: ${error?.stack ?? error}\n`);
  }
  process.exitCode = 1;
}
