#!/usr/bin/env node
// The least work a warm status without an observer can do in Node, for comparison with vouch: list
// the source files with git, walk node_modules/, and lstat every file once (bigint, as identities need
// nanoseconds). No hashing, no database, no manifest. Run from the project root; prints the count.

import { spawnSync } from "node:child_process";
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

const root = process.cwd();
const git = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
  cwd: root,
  maxBuffer: 1 << 30,
});
if (git.status !== 0) {
  console.error(`git ls-files failed: ${git.stderr}`);
  process.exit(2);
}
const paths = git.stdout.toString("utf8").split("\0").filter(Boolean);

const walk = (rel) => {
  let entries;
  try {
    entries = readdirSync(join(root, rel), { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = `${rel}/${entry.name}`;
    if (entry.isDirectory()) walk(path);
    else paths.push(path);
  }
};
walk("node_modules");

let bytes = 0n;
for (const path of paths) {
  const stats = lstatSync(join(root, path), { bigint: true, throwIfNoEntry: false });
  if (stats) bytes += stats.size;
}
console.log(JSON.stringify({ files: paths.length, bytes: Number(bytes) }));
