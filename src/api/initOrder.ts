/*
 * The order vouch init writes checks in, which is the order `vouch run` runs
 * them: a check that reads a build's output comes after that build. Pure.
 */

interface Ordered {
  check: { name: string };
  /** Names of the checks that must run before it. */
  needsFirst: readonly string[];
}

/**
 * The checks in their given order, except that each one's needsFirst come
 * before it (and theirs before them). A cycle, which init never makes, keeps
 * the given order where it closes.
 */
export function orderBuildsFirst<T extends Ordered>(checks: readonly T[]): T[] {
  const byName = new Map(checks.map((p) => [p.check.name, p]));
  const placed = new Set<string>();
  const visiting = new Set<string>();
  const out: T[] = [];
  const place = (p: T) => {
    const name = p.check.name;
    if (placed.has(name) || visiting.has(name)) return;
    visiting.add(name);
    for (const first of p.needsFirst) {
      const before = byName.get(first);
      if (before) place(before);
    }
    visiting.delete(name);
    placed.add(name);
    out.push(p);
  };
  for (const p of checks) place(p);
  return out;
}
