import { canonicalJson } from './canonicalJson.js';
import type { CheckContext } from './context.js';
import type { CheckDefinition } from './definition.js';
import { identityFields, IDENTITY_FIELDS } from './identity.js';
import { comparePaths, type InputEntry } from './manifest.js';
import { changedScripts, describeScriptBody, type ScriptBody } from './scriptContext.js';

export type InputChange =
  | { change: 'added'; path: string; origin: InputEntry['origin']; new: EntrySummary }
  | { change: 'removed'; path: string; origin: InputEntry['origin']; old: EntrySummary }
  | { change: 'modified'; path: string; origin: InputEntry['origin']; old: EntrySummary; new: EntrySummary }
  | { change: 'mode'; path: string; origin: 'source'; old: EntrySummary; new: EntrySummary }
  | { change: 'identity'; path: string; origin: 'installed'; fields: (typeof IDENTITY_FIELDS)[number][]; old: EntrySummary; new: EntrySummary }
  | { change: 'type'; path: string; origin: InputEntry['origin']; old: EntrySummary; new: EntrySummary };

/** What explain shows of one side of a change. */
export interface EntrySummary {
  type: 'file' | 'symlink';
  digest?: string;
  executable?: boolean;
  identity?: string;
  target?: string;
}

function summary(entry: InputEntry): EntrySummary {
  if (entry.type === 'symlink') return { type: 'symlink', target: entry.target };
  if (entry.origin === 'source') return { type: 'file', digest: entry.digest, executable: entry.executable };
  return { type: 'file', identity: entry.identity, ...(entry.digest ? { digest: entry.digest } : {}) };
}

/** Both lists sorted by path, as manifests are. */
export function diffManifest(before: readonly InputEntry[], after: readonly InputEntry[]): InputChange[] {
  const changes: InputChange[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    const old = before[i];
    const now = after[j];
    const order = old === undefined ? 1 : now === undefined ? -1 : comparePaths(old.path, now.path);
    if (order < 0 && old) {
      changes.push({ change: 'removed', path: old.path, origin: old.origin, old: summary(old) });
      i++;
    } else if (order > 0 && now) {
      changes.push({ change: 'added', path: now.path, origin: now.origin, new: summary(now) });
      j++;
    } else if (old && now) {
      const change = compareEntries(old, now);
      if (change) changes.push(change);
      i++;
      j++;
    }
  }
  return changes;
}

function compareEntries(old: InputEntry, now: InputEntry): InputChange | null {
  const base = { path: now.path, old: summary(old), new: summary(now) };
  if (old.type !== now.type || old.origin !== now.origin) return { change: 'type', origin: now.origin, ...base };
  if (old.type === 'symlink' && now.type === 'symlink') {
    return old.target === now.target ? null : { change: 'modified', origin: now.origin, ...base };
  }
  if (old.origin === 'source' && now.origin === 'source' && old.type === 'file' && now.type === 'file') {
    if (old.digest !== now.digest) return { change: 'modified', origin: 'source', ...base };
    if (old.executable !== now.executable) return { change: 'mode', origin: 'source', ...base };
    return null;
  }
  if (old.origin === 'installed' && now.origin === 'installed' && old.type === 'file' && now.type === 'file') {
    if ((old.digest ?? '') !== (now.digest ?? '') && old.digest && now.digest) {
      return { change: 'modified', origin: 'installed', ...base };
    }
    if (old.identity !== now.identity) {
      const a = identityFields(old.identity);
      const b = identityFields(now.identity);
      const fields = IDENTITY_FIELDS.filter((field) => a[field] !== b[field]);
      return { change: 'identity', origin: 'installed', fields, ...base };
    }
  }
  return null;
}

export interface ValueChange {
  field: string;
  old: unknown;
  new: unknown;
}

/** Context changes, environment variables by name only: values are never stored. */
export function diffContext(old: CheckContext, now: CheckContext): ValueChange[] {
  const changes: ValueChange[] = [];
  const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);
  if (!same(old.argv, now.argv)) changes.push({ field: 'argv', old: old.argv, new: now.argv });
  if (!same(old.executable, now.executable)) {
    changes.push({ field: 'executable', old: old.executable, new: now.executable });
  }
  if (old.node.version !== now.node.version) {
    changes.push({ field: 'node.version', old: old.node.version, new: now.node.version });
  }
  if (!same(old.node.executable, now.node.executable)) {
    changes.push({ field: 'node.executable', old: old.node.executable, new: now.node.executable });
  }
  if (old.platform !== now.platform) changes.push({ field: 'platform', old: old.platform, new: now.platform });
  if (old.arch !== now.arch) changes.push({ field: 'arch', old: old.arch, new: now.arch });
  if (!same(old.packageManager, now.packageManager)) {
    changes.push({ field: 'package_manager', old: old.packageManager, new: now.packageManager });
  }
  const names = [...new Set([...Object.keys(old.env), ...Object.keys(now.env)])].sort();
  for (const name of names) {
    const before = old.env[name] ?? null;
    const after = now.env[name] ?? null;
    if (before === after) continue;
    const state = (digest: string | null) => (digest === null ? 'unset' : 'set');
    const what = before !== null && after !== null ? 'value changed' : `${state(before)} -> ${state(after)}`;
    changes.push({ field: `env.${name}`, old: state(before), new: what === 'value changed' ? 'changed' : state(after) });
  }
  // A receipt from before scripts were recorded has none: each script then reads as added.
  for (const change of changedScripts(old.scripts, now.scripts)) {
    const value = (entry: typeof change.old) => (entry === null ? null : { body: entry.body, digest: entry.digest });
    changes.push({ field: `script.${change.name}`, old: value(change.old), new: value(change.new) });
  }
  return changes;
}

/** One context change for people: `script typecheck: \`tsc --noEmit\` -> \`echo skipped\``, or the field and its JSON values. */
export function describeContextChange(change: ValueChange): string {
  if (change.field.startsWith('script.')) {
    const side = (value: unknown) => describeScriptBody(value as Pick<ScriptBody, 'body' | 'digest'> | null);
    return `script ${change.field.slice('script.'.length)}: ${side(change.old)} -> ${side(change.new)}`;
  }
  return `${change.field}: ${JSON.stringify(change.old)} -> ${JSON.stringify(change.new)}`;
}

export function diffDefinition(old: CheckDefinition, now: CheckDefinition): ValueChange[] {
  const changes: ValueChange[] = [];
  for (const field of Object.keys({ ...old, ...now }) as (keyof CheckDefinition)[]) {
    if (canonicalJson(old[field]) !== canonicalJson(now[field])) {
      changes.push({ field, old: old[field], new: now[field] });
    }
  }
  return changes;
}
