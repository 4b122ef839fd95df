// Generates the pnpm workspace that bench/workspace.mjs measures: N packages p01..pNN in a small
// tree of workspace dependencies, each with a `test` script that imports its package (and so, through
// pnpm's links, the packages it depends on), reads and digests its own sources, then waits out the
// rest of a fixed time. The tree:
//
//   p01                      the root: every other package depends on it, directly or not
//   p02 .. p05               each depends on p01
//   p06 .. pNN               each depends on one of p02 .. p05, in turn
//
// Next to it: pnpm-workspace.yaml, a root package.json with "packageManager": "pnpm@<version>",
// turbo.json (task `test`, no dependsOn, default inputs, no outputs), turbo.deps.json (the same task
// with dependsOn ["^test"], for --root-turbo-json), a vouch.config.json with one declared package check
// per package, and a .gitignore. `pnpm install --offline` links the packages and writes the lockfile
// (no package comes from a registry), then everything is committed in a fresh git repository.

import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export const SCOPE = "@bench";
export const ROOT_PACKAGE = "p01";
export const TURBO_DEPS_CONFIG = "turbo.deps.json";
const MIDDLE = 4; // p02 .. p05
const SOURCES_PER_PACKAGE = 6;

/** p01, p02, … with at least two digits, so that names sort in dependency-tree order. */
export function packageNames(count) {
  const width = Math.max(2, String(count).length);
  return Array.from({ length: count }, (_, i) => `p${String(i + 1).padStart(width, "0")}`);
}

/** name -> the workspace package it depends on (null for the root), for `count` packages. */
export function dependencyTree(count) {
  if (!Number.isInteger(count) || count < MIDDLE + 2) throw new Error(`a workspace needs at least ${MIDDLE + 2} packages, not ${count}`);
  const names = packageNames(count);
  const tree = new Map([[names[0], null]]);
  for (let i = 1; i <= MIDDLE; i++) tree.set(names[i], names[0]);
  for (let i = MIDDLE + 1; i < count; i++) tree.set(names[i], names[1 + ((i - MIDDLE - 1) % MIDDLE)]);
  return tree;
}

/** How many packages an edit to `name` reaches: itself and every package that depends on it, directly or not. */
export function reach(tree, name) {
  const reached = new Set([name]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pkg, dep] of tree) {
      if (dep !== null && reached.has(dep) && !reached.has(pkg)) {
        reached.add(pkg);
        grew = true;
      }
    }
  }
  return [...reached].sort();
}

export const checkName = (name) => `${SCOPE}/${name}#test`;
export const sourceFile = (name) => join("packages", name, "src", "index.js");

function writeFile(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** A deterministic source module of roughly 1 KB. */
function module(name, index) {
  const lines = [`// ${name}, module ${index}`];
  for (let i = 0; i < 24; i++) lines.push(`export const ${name}_${index}_${i} = ${(index * 31 + i * 7) % 97}; // value ${i}`);
  return `${lines.join("\n")}\n`;
}

// The test: importing the package's index runs its dependencies' code (resolved through pnpm's
// node_modules links); every own source file is read and digested; then it waits, so that one test
// takes TEST_MS from its process's start whatever the machine's speed. A wait costs no CPU, so the
// figures do not depend on how busy the two, or twenty, cores are; only on how many tests each tool
// runs and how many it runs at once.
function testScript(name, testMs) {
  return `import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { total } from "./src/index.js";

const TEST_MS = ${testMs};
const hash = createHash("sha256");
for (const file of readdirSync("src").sort()) hash.update(readFileSync(join("src", file)));
if (!Number.isFinite(total)) throw new Error("${name}: total is not a number");
setTimeout(() => console.log("${name}: ok " + hash.digest("hex").slice(0, 12)), Math.max(0, TEST_MS - performance.now()));
`;
}

function indexModule(name, dep) {
  const imports = [];
  const terms = [];
  for (let i = 1; i < SOURCES_PER_PACKAGE; i++) {
    imports.push(`import * as m${i} from "./m${i}.js";`);
    terms.push(`Object.values(m${i}).length`);
  }
  if (dep) {
    imports.push(`import { total as upstream } from "${SCOPE}/${dep}";`);
    terms.push("upstream");
  }
  return `${imports.join("\n")}\n\nexport const total = ${terms.join(" + ")};\n`;
}

/**
 * @param {{root: string, packages: number, testMs: number, pnpm: string, env: NodeJS.ProcessEnv, pnpmVersion: string}} options
 * @returns {{tree: Map<string, string | null>, names: string[]}}
 */
export function generateWorkspace({ root, packages, testMs, pnpm, pnpmVersion, env }) {
  const tree = dependencyTree(packages);
  const names = [...tree.keys()];
  writeFile(
    join(root, "package.json"),
    `${JSON.stringify({ name: "bench-workspace", private: true, packageManager: `pnpm@${pnpmVersion}` }, null, 2)}\n`,
  );
  writeFile(join(root, "pnpm-workspace.yaml"), 'packages:\n  - "packages/*"\n');
  writeFile(join(root, ".gitignore"), "node_modules/\n.turbo/\n");
  const turbo = (task) => `${JSON.stringify({ $schema: "https://turborepo.com/schema.json", tasks: { test: task } }, null, 2)}\n`;
  writeFile(join(root, "turbo.json"), turbo({ outputs: [] }));
  writeFile(join(root, TURBO_DEPS_CONFIG), turbo({ dependsOn: ["^test"], outputs: [] }));
  for (const [name, dep] of tree) {
    const dir = join(root, "packages", name);
    const manifest = {
      name: `${SCOPE}/${name}`,
      version: "1.0.0",
      private: true,
      type: "module",
      main: "src/index.js",
      scripts: { test: "node test.mjs" },
      ...(dep ? { dependencies: { [`${SCOPE}/${dep}`]: "workspace:*" } } : {}),
    };
    writeFile(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    writeFile(join(dir, "test.mjs"), testScript(name, testMs));
    writeFile(join(dir, "src", "index.js"), indexModule(name, dep));
    for (let i = 1; i < SOURCES_PER_PACKAGE; i++) writeFile(join(dir, "src", `m${i}.js`), module(name, i));
  }
  const checks = names.map((name) => ({ name: checkName(name), kind: "test", script: "test", package: `packages/${name}`, mode: "declared" }));
  writeFile(join(root, "vouch.config.json"), `${JSON.stringify({ schema: 1, packageManager: "pnpm", checks }, null, 2)}\n`);

  const run = (file, args) => execFileSync(file, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
  // Workspace links only: nothing is fetched, and the lockfile is one turbo reads.
  run(pnpm, ["install", "--offline", "--silent"]);
  run("git", ["init", "-q"]);
  run("git", ["add", "-A"]);
  run("git", ["-c", "user.email=bench@example.com", "-c", "user.name=bench", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "workspace"]);
  return { tree, names };
}
