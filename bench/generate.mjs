#!/usr/bin/env node
// Generates a synthetic project for the benchmarks: a git repository with N TypeScript source files,
// M installed files under node_modules/ (laid out and time-stamped the way npm extracts tarballs),
// a package.json whose "check" script does a fixed amount of work, a lockfile, a turbo.json that makes
// `turbo run check --dry=json` hash the same source files, and a vouch.config.json. The check either
// reads the sources and waits out --check-ms (sleep, the default), or runs this repository's own
// TypeScript over sources written to type-check (typecheck): a real check's cost, which grows with
// the tree and with the machine's load as vouch's own work does.
//
//   node bench/generate.mjs --sources 10000 --installed 50000 --out DIR [--check sleep|typecheck]
//                           [--check-ms 5000] [--seed 1] [--force]
//
// Everything is derived from the seed, so two projects generated with the same arguments have the
// same file tree and the same bytes.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

// npm extracts every tarball entry with this mtime, so real node_modules trees carry it.
export const NPM_FIXED_MTIME = new Date("1985-10-26T08:15:00.000Z");

const FILES_PER_SOURCE_DIR = 16;
/** sleep: a script that reads the sources and waits out --check-ms; typecheck: TypeScript on typed sources. */
const CHECKS = ["sleep", "typecheck"];
const DIRECT_DEPENDENCIES = 30;
export const TURBO_INSTALLED_CONFIG = "turbo.installed.json";

/** mulberry32: small, fast and good enough to make file sizes and words look varied but repeatable. */
function prng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  "account", "adapter", "batch", "buffer", "cache", "channel", "client", "config", "cursor", "digest",
  "entry", "event", "field", "filter", "graph", "handle", "index", "item", "job", "key", "layer",
  "ledger", "limit", "loader", "manifest", "message", "model", "node", "option", "order", "owner",
  "packet", "page", "parser", "path", "policy", "queue", "range", "record", "region", "report",
  "request", "result", "route", "schema", "scope", "session", "signal", "source", "state", "stream",
  "table", "task", "token", "track", "tree", "user", "value", "view", "window", "worker",
];

function pick(rand, list) {
  return list[Math.floor(rand() * list.length)];
}

function camel(rand, parts) {
  let out = pick(rand, WORDS);
  for (let i = 1; i < parts; i++) {
    const word = pick(rand, WORDS);
    out += word[0].toUpperCase() + word.slice(1);
  }
  return out;
}

function pascal(rand, parts) {
  const name = camel(rand, parts);
  return name[0].toUpperCase() + name.slice(1);
}

/** Sizes spread log-uniformly between min and max bytes, like real source files. */
function logUniform(rand, min, max) {
  return Math.round(Math.exp(Math.log(min) + rand() * (Math.log(max) - Math.log(min))));
}

function sourceFileText(rand, index, targetBytes) {
  const lines = [`// module ${index}`];
  const imports = 1 + Math.floor(rand() * 4);
  for (let i = 0; i < imports; i++) {
    lines.push(`import { ${pascal(rand, 2)} } from "../${camel(rand, 1)}/${camel(rand, 2)}.js";`);
  }
  lines.push("");
  let size = lines.join("\n").length;
  let block = 0;
  while (size < targetBytes) {
    const type = `${pascal(rand, 2)}${index}_${block}`;
    const fn = `${camel(rand, 2)}${index}_${block}`;
    const chunk = [
      `export interface ${type} {`,
      `  ${camel(rand, 1)}: string;`,
      `  ${camel(rand, 2)}: number;`,
      `  ${camel(rand, 1)}?: readonly ${pascal(rand, 1)}[];`,
      `}`,
      ``,
      `export function ${fn}(input: ${type}, limit = ${Math.floor(rand() * 1000)}): number {`,
      `  let total = 0;`,
      `  for (let i = 0; i < Math.min(limit, input.${camel(rand, 1)}.length); i++) {`,
      `    total += input.${camel(rand, 1)}.charCodeAt(i) ^ ${Math.floor(rand() * 65536)};`,
      `  }`,
      `  return total;`,
      `}`,
      ``,
    ].join("\n");
    lines.push(chunk);
    size += chunk.length + 1;
    block++;
  }
  return `${lines.join("\n")}\n`;
}

/** The name of a file's n-th exported interface in a typed tree, known to every file that imports it. */
function typedName(index, block) {
  const word = WORDS[index % WORDS.length];
  return `${word[0].toUpperCase()}${word.slice(1)}${index}_${block}`;
}

/** An import specifier from file `from` to file `to`, as TypeScript's nodenext resolution wants it. */
function importPath(from, to) {
  const path = relative(dirname(sourceRelPath(from)), sourceRelPath(to)).replace(/\.ts$/, ".js");
  return path.startsWith(".") ? path : `./${path}`;
}

/**
 * The same shape of module as sourceFileText, but one that type-checks: it imports types that
 * earlier files really export, and reads only fields it declares. Files near each other import
 * each other, as modules of one feature do, so the compiler resolves a real import graph.
 */
function typedSourceFileText(rand, index, targetBytes) {
  const lines = [`// module ${index}`];
  const imported = new Set();
  for (let i = 1 + Math.floor(rand() * 4); i > 0 && index > 0; i--) imported.add(index - 1 - Math.floor(rand() * Math.min(index, 64)));
  for (const from of imported) lines.push(`import type { ${typedName(from, 0)} } from "${importPath(index, from)}";`);
  lines.push("");
  const parents = [...imported].map((from) => typedName(from, 0));
  let size = lines.join("\n").length;
  for (let block = 0; size < targetBytes; block++) {
    const type = typedName(index, block);
    const fn = `${camel(rand, 2)}${index}_${block}`;
    const text = camel(rand, 1);
    const count = `${camel(rand, 2)}Count`;
    const parent = parents[block % Math.max(1, parents.length)];
    const chunk = [
      `export interface ${type} {`,
      `  ${text}: string;`,
      `  ${count}: number;`,
      `  tags?: readonly string[];`,
      ...(parent ? [`  parent?: ${parent};`] : []),
      `}`,
      ``,
      `export function ${fn}(input: ${type}, limit = ${Math.floor(rand() * 1000)}): number {`,
      `  let total = input.${count};`,
      `  for (let i = 0; i < Math.min(limit, input.${text}.length); i++) {`,
      `    total += input.${text}.charCodeAt(i) ^ ${Math.floor(rand() * 65536)};`,
      `  }`,
      `  return total + (input.tags?.length ?? 0);`,
      `}`,
      ``,
    ].join("\n");
    lines.push(chunk);
    size += chunk.length + 1;
  }
  return `${lines.join("\n")}\n`;
}

function installedFileText(rand, pkgName, relPath, targetBytes) {
  const head = `/* ${pkgName}/${relPath} */\n"use strict";\n`;
  let body = "";
  while (head.length + body.length < targetBytes) {
    body += `exports.${camel(rand, 2)} = function (${camel(rand, 1)}) { return ${Math.floor(rand() * 1e6)}; };\n`;
  }
  return head + body;
}

function writeFile(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** Source files go under src/<area>/<module>/<part>/, 16 to a directory, so the tree is nested like a real one. */
function sourceRelPath(index) {
  const dir = Math.floor(index / FILES_PER_SOURCE_DIR);
  return join(
    "src",
    `area${Math.floor(dir / 64)}`,
    `mod${Math.floor(dir / 8) % 8}`,
    `part${dir % 8}`,
    `file${index % FILES_PER_SOURCE_DIR}.ts`,
  );
}

function writeSources(root, count, seed, typed) {
  const fileText = typed ? typedSourceFileText : sourceFileText;
  for (let i = 0; i < count; i++) {
    const rand = prng(seed * 1_000_003 + i);
    const text = fileText(rand, i, logUniform(rand, 512, 4096));
    writeFile(join(root, sourceRelPath(i)), text);
  }
}

/**
 * A package's files besides package.json: entry points, typings, README and LICENSE at the top, the
 * rest spread over a few directories (lib/, dist/esm/, ...), about 8 files to a directory as in real
 * node_modules trees.
 */
function packageLayout(rand, fileCount) {
  const files = ["index.js", "README.md", "LICENSE"];
  if (rand() < 0.6) files.push("index.d.ts");
  const dirs = fileCount < 12 ? ["lib"] : ["lib", "dist", "dist/esm", "dist/cjs"];
  for (let extra = Math.floor(fileCount / 12) - dirs.length; extra > 0; extra--) {
    dirs.push(`${pick(rand, ["lib", "dist/esm", "dist/cjs"])}/${camel(rand, 1)}${dirs.length}`);
  }
  let i = 0;
  while (files.length < fileCount) {
    const dir = pick(rand, dirs);
    const ext = dir.includes("esm") ? ".mjs" : rand() < 0.3 ? ".d.ts" : ".js";
    files.push(`${dir}/${camel(rand, 1)}${i}${ext}`);
    i++;
  }
  return files.slice(0, fileCount);
}

function packageName(rand, index) {
  const base = `${camel(rand, 1)}-${camel(rand, 1)}-${index}`.toLowerCase();
  return index % 5 === 4 ? `@scope${index % 7}/${base}` : base;
}

function fakeIntegrity(name, version) {
  return `sha512-${createHash("sha512").update(`${name}@${version}`).digest("base64")}`;
}

/**
 * Writes `count` files under node_modules/ (package.json included in the count), spread over packages of
 * 1 to ~120 files, all with npm's fixed mtime. Returns the packages for the lockfile.
 */
function writeInstalled(root, count, seed) {
  const packages = [];
  let written = 0;
  let index = 0;
  while (written < count) {
    const rand = prng(seed * 7_000_003 + index);
    const name = packageName(rand, index);
    const version = `${1 + Math.floor(rand() * 9)}.${Math.floor(rand() * 20)}.${Math.floor(rand() * 30)}`;
    const wanted = Math.min(count - written, Math.max(1, logUniform(rand, 4, 120)));
    const pkgDir = join(root, "node_modules", name);
    const manifest = { name, version, description: `synthetic package ${index}`, main: "index.js", license: "MIT" };
    writeFile(join(pkgDir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    const paths = [join(pkgDir, "package.json")];
    for (const rel of packageLayout(rand, wanted - 1)) {
      const path = join(pkgDir, rel);
      writeFile(path, installedFileText(rand, name, rel, logUniform(rand, 200, 6000)));
      paths.push(path);
    }
    for (const path of paths) utimesSync(path, NPM_FIXED_MTIME, NPM_FIXED_MTIME);
    packages.push({ name, version });
    written += paths.length;
    index++;
  }
  return packages;
}

/**
 * A lockfileVersion 3 lockfile that agrees with package.json and node_modules: the first packages are
 * direct dependencies and every other package hangs under one of them.
 */
function lockfile(name, packages) {
  const direct = packages.slice(0, DIRECT_DEPENDENCIES);
  const dependenciesOf = new Map(direct.map((p) => [p.name, {}]));
  packages.slice(DIRECT_DEPENDENCIES).forEach((p, i) => {
    dependenciesOf.get(direct[i % direct.length].name)[p.name] = `^${p.version}`;
  });
  const lockPackages = {
    "": { name, version: "1.0.0", dependencies: Object.fromEntries(direct.map((p) => [p.name, `^${p.version}`])) },
  };
  for (const p of packages) {
    const deps = dependenciesOf.get(p.name);
    const tarball = p.name.split("/").pop();
    lockPackages[`node_modules/${p.name}`] = {
      version: p.version,
      resolved: `https://registry.npmjs.org/${p.name}/-/${tarball}-${p.version}.tgz`,
      integrity: fakeIntegrity(p.name, p.version),
      license: "MIT",
      ...(deps && Object.keys(deps).length > 0 ? { dependencies: deps } : {}),
    };
  }
  return { name, version: "1.0.0", lockfileVersion: 3, requires: true, packages: lockPackages };
}

function checkScript(checkMs) {
  return `// Stands in for a typecheck: reads every source file, digests it, then waits so that one run
// takes about ${checkMs} ms in total.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const TARGET_MS = ${checkMs};
const started = performance.now();
const digest = createHash("sha256");
let files = 0;
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path);
    else if (entry.name.endsWith(".ts")) {
      digest.update(readFileSync(path));
      files++;
    }
  }
};
walk("src");
const remaining = TARGET_MS - (performance.now() - started);
if (remaining > 0) await new Promise((done) => setTimeout(done, remaining));
console.log(\`checked \${files} files, digest \${digest.digest("hex").slice(0, 12)}\`);
`;
}

/** The real thing: this repository's own TypeScript compiler, type-checking the whole tree. */
function typecheckScript() {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  return `// Type-checks the tree with TypeScript (tsconfig.json), as a project's typecheck script does.
import { spawnSync } from "node:child_process";

const result = spawnSync(process.execPath, [${JSON.stringify(tsc)}, "--noEmit", "-p", "."], { stdio: "inherit" });
if (result.status === 0) console.log("typecheck passed");
process.exit(result.status ?? 1);
`;
}

const TSCONFIG = {
  compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "nodenext", moduleResolution: "nodenext", types: [], skipLibCheck: true },
  include: ["src"],
};

function npmVersion() {
  try {
    return execFileSync("npm", ["--version"], { encoding: "utf8" }).trim();
  } catch (error) {
    throw new Error(`could not run "npm --version" (${error.message}); put npm on PATH`);
  }
}

function git(root, args) {
  execFileSync("git", args, {
    cwd: root,
    stdio: ["ignore", "ignore", "pipe"],
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "bench",
      GIT_AUTHOR_EMAIL: "bench@example.invalid",
      GIT_COMMITTER_NAME: "bench",
      GIT_COMMITTER_EMAIL: "bench@example.invalid",
      GIT_AUTHOR_DATE: "2024-01-01T00:00:00Z",
      GIT_COMMITTER_DATE: "2024-01-01T00:00:00Z",
    },
  });
}

/**
 * Creates the project in `out` and returns what it made.
 * @param {{sources: number, installed: number, out: string, checkMs?: number, seed?: number, force?: boolean}} options
 */
export function generate({ sources, installed, out, checkMs = 3000, check = "sleep", seed = 1, force = false }) {
  if (!CHECKS.includes(check)) throw new Error(`--check is one of ${CHECKS.join(", ")}, not "${check}"`);
  const root = resolve(out);
  if (existsSync(root) && readdirSync(root).length > 0) {
    if (!force) throw new Error(`${root} exists and is not empty; pass --force to replace it`);
    rmSync(root, { recursive: true, force: true });
  }
  mkdirSync(root, { recursive: true });
  const started = performance.now();
  const name = `bench-${sources}-${installed}`;

  writeSources(root, sources, seed, check === "typecheck");
  const packages = installed > 0 ? writeInstalled(root, installed, seed) : [];
  const direct = packages.slice(0, DIRECT_DEPENDENCIES);

  const packageJson = {
    name,
    version: "1.0.0",
    private: true,
    type: "module",
    packageManager: `npm@${npmVersion()}`,
    scripts: { check: "node check.mjs" },
    dependencies: Object.fromEntries(direct.map((p) => [p.name, `^${p.version}`])),
  };
  writeFile(join(root, "package.json"), `${JSON.stringify(packageJson, null, 2)}\n`);
  const lock = lockfile(name, packages);
  writeFile(join(root, "package-lock.json"), `${JSON.stringify(lock, null, 2)}\n`);
  if (installed > 0) {
    // npm's hidden lockfile: the same package entries, written when it installs.
    const hidden = { name, version: "1.0.0", lockfileVersion: 3, requires: true, packages: { ...lock.packages } };
    delete hidden.packages[""];
    writeFile(join(root, "node_modules", ".package-lock.json"), `${JSON.stringify(hidden, null, 2)}\n`);
  }
  // $TURBO_DEFAULT$ is every file git tracks plus the untracked ones it does not ignore: the same set
  // vouch's default source inputs ("**") cover. ("**" itself would make turbo hash .git/ and node_modules/.)
  // turbo.installed.json (used with --root-turbo-json) also hashes node_modules/** by content, the
  // closest turbo gets to vouch recording installed files.
  const turboJson = (inputs) => ({
    $schema: "https://turborepo.com/schema.json",
    tasks: { check: { inputs, outputs: [], cache: true } },
  });
  writeFile(join(root, "turbo.json"), `${JSON.stringify(turboJson(["$TURBO_DEFAULT$"]), null, 2)}\n`);
  writeFile(
    join(root, TURBO_INSTALLED_CONFIG),
    `${JSON.stringify(turboJson(["$TURBO_DEFAULT$", "node_modules/**"]), null, 2)}\n`,
  );
  if (check === "typecheck") {
    writeFile(join(root, "check.mjs"), typecheckScript());
    writeFile(join(root, "tsconfig.json"), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
  } else writeFile(join(root, "check.mjs"), checkScript(checkMs));
  const vouchConfig = { schema: 1, packageManager: "npm", checks: [{ name: "check", kind: "custom", script: "check" }] };
  writeFile(join(root, "vouch.config.json"), `${JSON.stringify(vouchConfig, null, 2)}\n`);
  writeFile(join(root, ".gitignore"), "node_modules/\n.turbo/\n");

  git(root, ["init", "-q", "-b", "main"]);
  git(root, ["add", "-A"]);
  git(root, ["commit", "-q", "--no-gpg-sign", "-m", "synthetic project"]);

  return {
    root,
    sources,
    installed,
    packages: packages.length,
    check,
    check_ms: check === "sleep" ? checkMs : null,
    seed,
    generate_ms: Math.round(performance.now() - started),
  };
}

function main() {
  const { values } = parseArgs({
    options: {
      sources: { type: "string" },
      installed: { type: "string", default: "0" },
      out: { type: "string" },
      "check-ms": { type: "string", default: "3000" },
      check: { type: "string", default: "sleep" },
      seed: { type: "string", default: "1" },
      force: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  const usage =
    "usage: node bench/generate.mjs --sources N [--installed M] --out DIR [--check sleep|typecheck] [--check-ms MS] [--seed S] [--force]";
  if (values.help) {
    console.log(usage);
    return;
  }
  const number = (flag, text) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${flag} wants a whole number, got "${text}"\n${usage}`);
    return n;
  };
  if (values.sources === undefined || values.out === undefined) throw new Error(`--sources and --out are required\n${usage}`);
  const result = generate({
    sources: number("sources", values.sources),
    installed: number("installed", values.installed),
    out: values.out,
    checkMs: number("check-ms", values["check-ms"]),
    check: values.check,
    seed: number("seed", values.seed),
    force: values.force,
  });
  console.log(JSON.stringify(result));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  try {
    main();
  } catch (error) {
    console.error(error.message);
    process.exitCode = 2;
  }
}
