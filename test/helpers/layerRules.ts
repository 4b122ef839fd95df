import { describeImport, layerOf, type Import } from './importGraph.js';

/*
 * The layer rules over an import graph (helpers/importGraph.ts): which layer may import which,
 * and how. Pure: the table and the imports are given.
 */

/**
 * How a layer may load another:
 * - 'runtime': any import;
 * - 'lazy': only `import()` (loaded when a call needs it) or a type-only import (erased);
 * - 'type': only a type-only import.
 */
export type Use = 'runtime' | 'lazy' | 'type';

export interface LayerTable {
  /** Top to bottom. Layers in one tier are side by side: neither imports the other. */
  tiers: string[][];
  /** What each layer uses, and how: every layer has a row, and every entry points to a lower tier. */
  uses: Record<string, Record<string, Use>>;
  /** A layer's own rule, said when an import outside its row breaks it. */
  rules?: Record<string, string>;
}

/** An import the table does not allow, kept until the code is changed; `why` says what it is. */
export interface KnownException {
  from: string;
  specifier: string;
  why: string;
}

/** Problems with the table itself: an unknown layer, or a use that does not point downward. */
export function tableProblems(table: LayerTable): string[] {
  const tier = tierIndex(table);
  const problems: string[] = [];
  for (const layer of tier.keys()) if (!Object.hasOwn(table.uses, layer)) problems.push(`${layer}/ has no row in the table's uses`);
  for (const [layer, uses] of Object.entries(table.uses)) {
    if (!tier.has(layer)) {
      problems.push(`${layer}/ has uses but is in no tier`);
      continue;
    }
    for (const used of Object.keys(uses)) {
      if (!tier.has(used)) problems.push(`${layer}/ uses ${used}/, which is in no tier`);
      else if (tier.get(used)! <= tier.get(layer)!) problems.push(`${layer}/ uses ${used}/, which is not below it: the table may only allow downward imports`);
    }
  }
  return problems;
}

/**
 * Every import between layers that the table does not allow, as a message naming the import
 * and the rule; plus the known exceptions that no import matches any more.
 */
export function layerViolations(
  imports: readonly Import[],
  table: LayerTable,
  exceptions: readonly KnownException[] = [],
): { violations: string[]; staleExceptions: KnownException[] } {
  const tier = tierIndex(table);
  const used = new Set<KnownException>();
  const violations: string[] = [];
  const unknownLayers = new Set<string>();
  for (const entry of imports) {
    const from = layerOf(entry.from);
    if (!tier.has(from)) {
      unknownLayers.add(from === '' ? `src/${entry.from}` : `src/${from}/`);
      continue;
    }
    if (entry.target === null) continue;
    const to = layerOf(entry.target);
    if (from === to) continue;
    if (!tier.has(to)) continue; // reported once as an unknown layer, from its own files
    const problem = importProblem(entry, from, to, table, tier);
    if (problem === null) continue;
    const exception = exceptions.find((known) => known.from === entry.from && known.specifier === entry.specifier);
    if (exception) {
      used.add(exception);
      continue;
    }
    violations.push(`${describeImport(entry)}: ${problem}`);
  }
  for (const unknown of [...unknownLayers].sort()) {
    violations.unshift(`${unknown} is in no layer: add it to the layer table (test/unit/architecture.test.ts) and docs/architecture.md, below what it imports and above what imports it`);
  }
  return { violations, staleExceptions: exceptions.filter((known) => !used.has(known)) };
}

function importProblem(entry: Import, from: string, to: string, table: LayerTable, tier: Map<string, number>): string | null {
  const fromTier = tier.get(from)!;
  const toTier = tier.get(to)!;
  if (toTier < fromTier) return `upward: ${from}/ is below ${to}/, and a lower layer never imports a higher one`;
  if (toTier === fromTier) return `sideways: ${from}/ and ${to}/ are side by side, and neither imports the other`;
  const use = table.uses[from]![to];
  if (use === undefined) {
    const allowed = Object.keys(table.uses[from]!);
    const rule = table.rules?.[from] ?? `${from}/ uses only ${allowed.length > 0 ? allowed.map((layer) => `${layer}/`).join(', ') : 'itself'} today`;
    return `${rule}; a new dependency is a design change: if it is meant, add ${from} -> ${to} to the layer table and docs/architecture.md`;
  }
  if (entry.kind === 'type' || use === 'runtime') return null;
  if (use === 'lazy' && entry.kind === 'dynamic') return null;
  if (use === 'lazy') return `${from}/ loads ${to}/ only lazily (import() or a type-only import), so that a command that does not need ${to}/ does not load it; this import is static`;
  return `${from}/ imports only types from ${to}/, and this import is ${entry.kind === 'dynamic' ? 'an import()' : 'static'}`;
}

function tierIndex(table: LayerTable): Map<string, number> {
  const tier = new Map<string, number>();
  table.tiers.forEach((layers, index) => {
    for (const layer of layers) tier.set(layer, index);
  });
  return tier;
}
