#!/usr/bin/env node
// `npm test`'s last step: the type check and the Vitest suite side by side, since the suite keeps
// two cores only about 85 % busy (docs/testing.md) and the type check fits in what is left. Fails
// when either fails; each one's output is its own (tsc prints only its errors, at the end).
//
//   node scripts/typecheck-and-test.mjs [VITEST ARGS...]

import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const run = (script, args) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: "inherit" });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });

const [typecheck, tests] = await Promise.all([
  run(join(root, "node_modules", "typescript", "bin", "tsc"), ["-p", join(root, "tsconfig.json"), "--noEmit"]),
  run(join(root, "node_modules", "vitest", "vitest.mjs"), ["run", ...process.argv.slice(2)]),
]);
if (typecheck !== 0) console.error(`npm test: the type check failed (exit ${typecheck}); see its errors above`);
process.exit(typecheck !== 0 ? typecheck : tests);
