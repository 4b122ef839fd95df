#!/usr/bin/env node
// Builds vouch's native scan (native/, binding.gyp) into build/Release/vouch_scan.node, and on Linux
// the hook client (native/hookClient.c) into build/Release/vouch_hook, with the node-gyp that npm
// ships. vouch works without them: it then walks install trees in JavaScript, about half as fast,
// and each hook call starts Node. So a machine with no C compiler gets a warning here, not a failed
// install.
//
//   node scripts/build-native.mjs            (run by npm install; also "npm run build:native")
//   VOUCH_SKIP_NATIVE=1 npm install          (skip the build)

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const addon = join(root, "build", "Release", "vouch_scan.node");

if (process.platform === "win32") {
  console.log("vouch: the native scan is not built on Windows; install trees are walked in JavaScript.");
  process.exit(0);
}
if (process.env.VOUCH_SKIP_NATIVE === "1") {
  console.log("vouch: VOUCH_SKIP_NATIVE=1, native scan not built; install trees are walked in JavaScript.");
  process.exit(0);
}

const gyp = findNodeGyp();
if (gyp === null) {
  warn("npm's node-gyp was not found");
  process.exit(0);
}
const built = spawnSync(process.execPath, [gyp, "rebuild"], { cwd: root, encoding: "utf8", env: process.env });
if (built.status !== 0) {
  warn(`node-gyp rebuild failed:\n${`${built.stdout}\n${built.stderr}`.trim().split("\n").slice(-12).join("\n")}`);
  process.exit(0);
}
try {
  const loaded = createRequire(import.meta.url)(addon);
  if (typeof loaded.start !== "function") throw new Error("it has no start()");
} catch (error) {
  warn(`the built addon does not load: ${error.message}`);
  process.exit(0);
}
if (process.platform === "linux" && !existsSync(join(root, "build", "Release", "vouch_hook"))) {
  console.warn("vouch: the native scan was built, but not the hook client (build/Release/vouch_hook); each hook call will start Node.");
}
console.log(process.platform === "linux" ? "vouch: native scan and hook client built." : "vouch: native scan built.");

function findNodeGyp() {
  // Set by npm for the scripts it runs.
  if (process.env.npm_config_node_gyp && existsSync(process.env.npm_config_node_gyp)) return process.env.npm_config_node_gyp;
  const candidates = [
    join(dirname(process.execPath), "..", "lib", "node_modules", "npm", "node_modules", "node-gyp", "bin", "node-gyp.js"),
    join(dirname(process.execPath), "node_modules", "npm", "node_modules", "node-gyp", "bin", "node-gyp.js"),
  ];
  try {
    candidates.unshift(createRequire(import.meta.url).resolve("node-gyp/bin/node-gyp.js"));
  } catch {
    // not installed next to vouch; npm's own copy is the usual one
  }
  return candidates.find((path) => existsSync(path)) ?? null;
}

function warn(why) {
  console.warn(
    `vouch: the native scan was not built (${why}).\n` +
      "vouch still works: it walks install trees in JavaScript, about half as fast on large ones.\n" +
      "To build it, install a C compiler, make and python3, then run: npm run build:native",
  );
}
