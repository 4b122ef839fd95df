#!/usr/bin/env node
// The prove benchmark: one claim on a generated 200-file TypeScript workspace, judged by
// `vouch prove`, against the way a claim is judged without vouch: the drafts applied to a copy
// of the workspace and the three tools spawned there (`tsc --noEmit -p`, `oxlint`, `vitest run
// <test>`), for the case and then the control. Both judge the same claim with the same tools,
// in the same run, and must reach the same outcome: the case clean, the control failing its test.
//
//   - cold: `vouch prove CLAIM --no-server --json`, a fresh process that warms all three stages;
//   - warm: a resident prover (what `vouch prove --serve` and `vouch mcp` keep), p50 over --runs,
//     with the share of each stage;
//   - spawned: the tools spawned per phase on a mirror, p50 over --spawn-runs.
//
//   node bench/prove.mjs [--modules 200] [--runs 20] [--cold-runs 3] [--spawn-runs 3] [--out FILE] [--keep]

import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, release, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { summarize } from "./stats.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const BUDGET_WARM_MS = 500; // DESIGN.md: vouch prove on a 200-file workspace, warm under 500 ms
const BUDGET_COLD_MS = 5000; // and cold under 5 s
const STAGES = ["type", "lint", "runtime"];

const { values } = parseArgs({
  options: {
    modules: { type: "string", default: "200" },
    runs: { type: "string", default: "20" },
    "cold-runs": { type: "string", default: "3" },
    "spawn-runs": { type: "string", default: "3" },
    out: { type: "string" },
    keep: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log("usage: node bench/prove.mjs [--modules 200] [--runs 20] [--cold-runs 3] [--spawn-runs 3] [--out FILE] [--keep]");
  process.exit(0);
}
const MODULES = Number(values.modules);
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("VITEST") && !name.startsWith("npm_") && name !== "NODE_OPTIONS"));

/** A workspace of MODULES modules, each importing up to three earlier ones, with an index that re-exports them all. */
function generateWorkspace(root) {
  const write = (path, text) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  const name = (i) => `mod${String(i).padStart(3, "0")}`;
  for (let i = 0; i < MODULES; i++) {
    const imports = [i - 1, i - 7, i - 31].filter((j) => j >= 0);
    const lines = imports.map((j) => `import { value${j}, type Box${j} } from './${name(j)}.js';`);
    lines.push(
      "",
      `export interface Box${i}<T = number> { readonly id: ${i}; item: T; tags: readonly string[] }`,
      `export type Keys${i} = { [K in keyof Box${i}]: K };`,
      `export const VALUE${i} = ${i};`,
      `export function value${i}(): number {`,
      `  return VALUE${i}${imports.map((j) => ` + value${j}()`).join("")};`,
      "}",
      `export function box${i}<T>(item: T): Box${i}<T> {`,
      `  return { id: ${i}, item, tags: [${imports.map((j) => `'${name(j)}'`).join(", ")}] };`,
      "}",
      ...imports.map((j) => `export type From${i}_${j} = Box${j}<string>;`),
      "",
    );
    write(`src/${name(i)}.ts`, lines.join("\n"));
  }
  write("src/index.ts", Array.from({ length: MODULES }, (_, i) => `export * from './${name(i)}.js';`).join("\n") + "\n");
  write("test/smoke.test.ts", "import { expect, it } from 'vitest';\nimport { value0 } from '../src/mod000.js';\nit('starts', () => expect(value0()).toBe(0));\n");
  write("package.json", JSON.stringify({ name: "bench-prove", private: true, type: "module", scripts: { typecheck: "tsc --noEmit", lint: "oxlint src test", test: "vitest run" } }, null, 2) + "\n");
  write("tsconfig.json", JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: true, types: [] }, include: ["src", "test"] }, null, 2) + "\n");
  write("vitest.config.ts", "import { defineConfig } from 'vitest/config';\nexport default defineConfig({ test: { include: ['test/**/*.test.ts'] } });\n");
  write(".oxlintrc.json", JSON.stringify({ rules: { "no-debugger": "error", eqeqeq: "error" } }, null, 2) + "\n");
  write(".gitignore", "node_modules/\n");
  spawnSync("git", ["init", "-q"], { cwd: root });
}

/** Edits mod100's value (the case) and breaks it on purpose (the control), with a test that pins it. */
function claimFor(root) {
  const target = `src/${"mod" + String(Math.min(100, MODULES - 1)).padStart(3, "0")}.ts`;
  const index = Number(target.slice(7, 10));
  const original = readFileSync(join(root, target), "utf8");
  const edited = original.replace(`export const VALUE${index} = ${index};`, `export const VALUE${index} = ${index} * 2;`);
  const broken = original.replace(`export const VALUE${index} = ${index};`, `export const VALUE${index} = ${index} * 3;`);
  return {
    project: "tsconfig.json",
    case: {
      drafts: [{ path: target, text: edited }],
      test: { path: "test/value.test.ts", text: `import { expect, it } from 'vitest';\nimport { VALUE${index} } from '../src/mod${String(index).padStart(3, "0")}.js';\nit('doubles', () => expect(VALUE${index}).toBe(${index * 2}));\n` },
    },
    control: { drafts: [{ path: target, text: broken }], stage: "runtime", reason: "tripling instead of doubling must fail the test" },
  };
}

function vouch(root, args) {
  const started = performance.now();
  const result = spawnSync(process.execPath, [join(REPO, "dist", "bin", "main.js"), ...args], { cwd: root, env, encoding: "utf8", timeout: 300_000 });
  return { ms: performance.now() - started, code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The claim judged without vouch: a mirror with the drafts applied, and each tool spawned there. Returns whether each phase came out as claimed. */
function spawnedProve(root, claim) {
  const bin = (name) => join(REPO, "node_modules", ".bin", name);
  const outcome = {};
  const started = performance.now();
  for (const phase of ["case", "control"]) {
    const mirror = mkdtempSync(join(REPO, ".tmp", "bench-prove-mirror-"));
    cpSync(root, mirror, { recursive: true, filter: (source) => !source.endsWith(".git") });
    const drafts = phase === "case" ? claim.case.drafts : claim.control.drafts;
    for (const draft of [...drafts, claim.case.test]) writeFileSync(join(mirror, draft.path), draft.text);
    const run = (args) => spawnSync(args[0], args.slice(1), { cwd: mirror, env, encoding: "utf8" }).status;
    const type = run([bin("tsc"), "--noEmit", "-p", "tsconfig.json"]);
    const lint = run([bin("oxlint"), ...drafts.map((draft) => draft.path), claim.case.test.path]);
    const runtime = run([bin("vitest"), "run", claim.case.test.path]);
    outcome[phase] = { type, lint, runtime };
    rmSync(mirror, { recursive: true, force: true });
  }
  return { ms: performance.now() - started, outcome };
}

async function main() {
  mkdirSync(join(REPO, ".tmp"), { recursive: true });
  const root = mkdtempSync(join(REPO, ".tmp", "bench-prove-"));
  try {
    generateWorkspace(root);
    const claim = claimFor(root);
    writeFileSync(join(root, "claim.json"), JSON.stringify(claim));

    const cold = [];
    for (let i = 0; i < Number(values["cold-runs"]); i++) {
      const result = vouch(root, ["prove", "claim.json", "--no-server", "--json"]);
      const report = JSON.parse(result.stdout || "null");
      if (result.code !== 0 || report?.receipt == null) throw new Error(`cold prove minted no receipt (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
      cold.push({ wall: result.ms, inProcess: report.ms });
    }

    const { openProver, proveReportJson } = await import(pathToFileURL(join(REPO, "dist", "api", "prove.js")).href);
    const { parseClaim } = await import(pathToFileURL(join(REPO, "dist", "core", "claimInput.js")).href);
    const prover = await openProver(root);
    const warmStarted = performance.now();
    await prover.warm();
    const warmUpMs = performance.now() - warmStarted;
    const first = proveReportJson(await prover.prove(parseClaim(claim)));
    if (first.receipt === null) throw new Error(`the warm prover minted no receipt: ${first.why.join("; ")}`);
    const warm = [];
    const shares = Object.fromEntries(STAGES.map((stage) => [stage, []]));
    for (let i = 0; i < Number(values.runs); i++) {
      const started = performance.now();
      const report = proveReportJson(await prover.prove(parseClaim(claim)));
      warm.push(performance.now() - started);
      if (report.receipt !== first.receipt) throw new Error(`warm prove ${i} gave another answer: ${report.receipt}`);
      for (const stage of STAGES) shares[stage].push(report.timings.filter((t) => t.stage === stage).reduce((sum, t) => sum + t.ms, 0));
    }
    const rss = process.memoryUsage().rss;
    await prover.close();

    const spawned = [];
    let spawnedOutcome;
    for (let i = 0; i < Number(values["spawn-runs"]); i++) {
      const result = spawnedProve(root, claim);
      spawned.push(result.ms);
      spawnedOutcome = result.outcome;
    }
    const agree = spawnedOutcome.case.type === 0 && spawnedOutcome.case.lint === 0 && spawnedOutcome.case.runtime === 0 && spawnedOutcome.control.runtime !== 0;
    if (!agree) throw new Error(`the spawned tools disagree with the claim: ${JSON.stringify(spawnedOutcome)}`);

    const coldWall = summarize(cold.map((c) => c.wall));
    const coldIn = summarize(cold.map((c) => c.inProcess));
    const warmStats = summarize(warm);
    const spawnStats = summarize(spawned);
    const shareStats = Object.fromEntries(STAGES.map((stage) => [stage, summarize(shares[stage])]));
    const lines = [
      `machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}, Node ${process.version}, load ${loadavg()[0].toFixed(2)}`,
      `workspace: ${MODULES} modules + index + 1 test; claim: edit mod100's value, test pins it; control breaks at runtime`,
      "",
      "| measure | n | p50 ms | min | max | budget |",
      "|---|---|---|---|---|---|",
      `| cold prove, fresh process (wall) | ${coldWall.n} | ${coldWall.p50} | ${coldWall.min} | ${coldWall.max} | < ${BUDGET_COLD_MS} |`,
      `| cold prove, in-process part | ${coldIn.n} | ${coldIn.p50} | ${coldIn.min} | ${coldIn.max} | |`,
      `| warming a resident prover | 1 | ${Math.round(warmUpMs)} | | | |`,
      `| **warm prove** (resident) | ${warmStats.n} | **${warmStats.p50}** | ${warmStats.min} | ${warmStats.max} | < ${BUDGET_WARM_MS} |`,
      `| spawned tools on a mirror, per claim | ${spawnStats.n} | ${spawnStats.p50} | ${spawnStats.min} | ${spawnStats.max} | |`,
      "",
      "Warm prove, time per stage summed over both phases. The stages run at the same time, and the runtime stage's two lanes run the case and the control at the same time, so the shares overlap and add up to more than 100%:",
      "",
      "| stage | p50 ms | share of warm p50 |",
      "|---|---|---|",
      ...STAGES.map((stage) => `| ${stage} | ${shareStats[stage].p50} | ${Math.round((100 * shareStats[stage].p50) / warmStats.p50)}% |`),
      "",
      `ratio: warm prove / spawned tools = ${(warmStats.p50 / spawnStats.p50).toFixed(3)} (${(spawnStats.p50 / warmStats.p50).toFixed(1)}× faster); cold / spawned = ${(coldWall.p50 / spawnStats.p50).toFixed(2)}`,
      `resident prover RSS after ${warm.length + 1} proves: ${Math.round(rss / 2 ** 20)} MiB`,
      `budgets: warm ${warmStats.p50 <= BUDGET_WARM_MS ? "met" : "MISSED"}, cold ${coldWall.p50 <= BUDGET_COLD_MS ? "met" : "MISSED"}`,
    ];
    const text = lines.join("\n") + "\n";
    process.stdout.write(text);
    if (values.out) writeFileSync(values.out, text);
  } finally {
    if (!values.keep) rmSync(root, { recursive: true, force: true });
    else console.error(`kept ${root}`);
  }
}

await main();
process.exit(0);
