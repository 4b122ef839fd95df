import { closeSync, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { parseJsonc } from '../core/jsonc.js';
import { blockedConfig, type TaskRunnerConfig, type TaskRunnerTask } from '../core/taskRunners.js';
import type { WorkspacePackage } from '../core/workspace.js';

/*
 * turbo.json and nx.json, read only as far as agents/fanOut.ts needs them:
 * which tasks run other tasks first, and which packages configure theirs
 * otherwise. A repository's files are untrusted: a link, a file too large, or
 * one that does not parse yields a config through which nothing resolves
 * (the command then runs as typed); nothing here throws.
 */

/** Far above a real turbo.json or nx.json. */
const MAX_BYTES = 1024 * 1024;

type Read = { text: string } | { missing: true } | { why: string };

/** A regular file inside the root (a link is never followed), at most MAX_BYTES. */
function readBounded(root: string, rel: string): Read {
  const path = join(root, rel);
  let stat;
  try {
    stat = lstatSync(path);
  } catch {
    return { missing: true };
  }
  if (!stat.isFile()) return { why: `${rel} is not a regular file` };
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return { why: `${rel} cannot be read` };
  }
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_BYTES) return { why: `${rel} is larger than ${MAX_BYTES} bytes` };
    const buffer = Buffer.alloc(size);
    let filled = 0;
    while (filled < size) {
      const count = readSync(fd, buffer, filled, size - filled, filled);
      if (count === 0) break;
      filled += count;
    }
    return { text: buffer.subarray(0, filled).toString('utf8') };
  } catch {
    return { why: `${rel} cannot be read` };
  } finally {
    closeSync(fd);
  }
}

function exists(root: string, rel: string): boolean {
  try {
    lstatSync(join(root, rel));
    return true;
  } catch {
    return false;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A dependsOn (or turbo "with") list: strings, or nx's objects; null when it is neither. */
function taskList(value: unknown): unknown[] | null {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : null;
}

/**
 * The root turbo.json (or turbo.jsonc), or null when there is none. "tasks",
 * or turbo 1's "pipeline" (https://turborepo.com/docs/reference/configuration#tasks);
 * "with" counts as dependsOn, since it runs other tasks beside
 * (https://turborepo.com/docs/reference/configuration#with). A key
 * "a#test" configures package a, "//#test" the root; a package's own
 * turbo.json configures it (https://turborepo.com/docs/reference/package-configurations).
 */
export function readTurbo(root: string, packages: readonly WorkspacePackage[] = []): TaskRunnerConfig | null {
  const files = ['turbo.json', 'turbo.jsonc'].filter((file) => exists(root, file));
  if (files.length === 0) return null;
  if (files.length > 1) return blockedConfig('both turbo.json and turbo.jsonc are at the root');
  const read = readBounded(root, files[0]!);
  if ('missing' in read) return null;
  if ('why' in read) return blockedConfig(read.why);
  const json = parseJsonc(read.text);
  if (!isRecord(json)) return blockedConfig(`${files[0]} is not a JSON object`);
  const declared = json.tasks ?? json.pipeline;
  if (!isRecord(declared)) return blockedConfig(`${files[0]} has no "tasks" object`);
  const tasks: Record<string, TaskRunnerTask> = {};
  const overridden = new Set<string>();
  for (const [name, value] of Object.entries(declared)) {
    if (!isRecord(value)) return blockedConfig(`${files[0]}: the task "${name}" is not an object`);
    const dependsOn = taskList(value.dependsOn);
    const beside = taskList(value.with);
    if (dependsOn === null || beside === null) return blockedConfig(`${files[0]}: the task "${name}" has a dependsOn or with that is not a list`);
    tasks[name] = { dependsOn: [...dependsOn, ...beside].map(String) };
    const hash = name.lastIndexOf('#');
    if (hash > 0) overridden.add(name.slice(0, hash));
  }
  for (const pkg of packages) {
    if (exists(root, join(pkg.dir, 'turbo.json')) || exists(root, join(pkg.dir, 'turbo.jsonc'))) overridden.add(pkg.name);
  }
  return { tasks, overridden: [...overridden].sort() };
}

/**
 * nx.json, or null when there is none: "targetDefaults" by target name
 * (https://nx.dev/reference/nx-json#target-defaults). Plugins may infer
 * targets (https://nx.dev/concepts/inferred-tasks), and a default keyed by
 * an executor or a glob may apply to any target, so either blocks the
 * config. A package with project.json, or "nx" in its package.json,
 * configures its own targets (https://nx.dev/reference/project-configuration);
 * a project.json at the root makes the root a project with its own ("//").
 */
export function readNx(root: string, packages: readonly WorkspacePackage[] = []): TaskRunnerConfig | null {
  const read = readBounded(root, 'nx.json');
  if ('missing' in read) return null;
  if ('why' in read) return blockedConfig(read.why);
  const json = parseJsonc(read.text);
  if (!isRecord(json)) return blockedConfig('nx.json is not a JSON object');
  if (Array.isArray(json.plugins) ? json.plugins.length > 0 : json.plugins !== undefined) return blockedConfig('nx.json plugins may infer targets');
  if (json.targetDependencies !== undefined) return blockedConfig('nx.json has the legacy "targetDependencies"');
  if (exists(root, 'workspace.json')) return blockedConfig('a legacy workspace.json configures the projects');
  const defaults = json.targetDefaults ?? {};
  if (!isRecord(defaults)) return blockedConfig('nx.json "targetDefaults" is not an object');
  const tasks: Record<string, TaskRunnerTask> = {};
  for (const [name, value] of Object.entries(defaults)) {
    if (!isRecord(value)) return blockedConfig(`nx.json: targetDefaults "${name}" is not an object`);
    const dependsOn = taskList(value.dependsOn);
    if (dependsOn === null) return blockedConfig(`nx.json: targetDefaults "${name}" has a dependsOn that is not a list`);
    const steps = dependsOn.map((entry) => (typeof entry === 'string' ? entry : JSON.stringify(entry)));
    // A default may also give the target another executor or command than the script.
    for (const key of ['executor', 'command', 'options']) if (value[key] !== undefined) steps.push(`(its "${key}")`);
    if (!/^[\w.-]+$/.test(name) && steps.length > 0) return blockedConfig(`nx.json: targetDefaults "${name}" may apply to any target`);
    tasks[name] = { dependsOn: steps };
  }
  const overridden = new Set<string>();
  if (exists(root, 'project.json')) overridden.add('//');
  for (const pkg of packages) {
    if (exists(root, join(pkg.dir, 'project.json'))) {
      overridden.add(pkg.name);
      continue;
    }
    const manifest = readBounded(root, join(pkg.dir, 'package.json'));
    if (!('text' in manifest)) {
      overridden.add(pkg.name);
      continue;
    }
    const parsed = parseJsonc(manifest.text);
    if (!isRecord(parsed) || parsed.nx !== undefined) overridden.add(pkg.name);
  }
  return { tasks, overridden: [...overridden].sort() };
}
