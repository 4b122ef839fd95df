import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import ts from 'typescript';

/*
 * The import graph of src/, read with the TypeScript compiler's parser (no
 * type checking, so it costs milliseconds per file). Pure over its inputs:
 * `importsOf` takes a file's text, `resolveImports` a set of file names, and
 * the walks below take the imports they are given.
 */

/**
 * How an import loads its module:
 * - 'static': an `import`/`export … from` that stays in the emitted JavaScript, so the module
 *   loads with the importer;
 * - 'dynamic': an `import()` call, which loads it only when the call runs;
 * - 'type': erased by tsc (`import type`, `export type`, an import whose every named binding is
 *   marked `type`, an `import('…')` type), so nothing loads at run time.
 * tsconfig.json sets verbatimModuleSyntax to false, so `import { type A } from 'x'` is dropped
 * whole (https://www.typescriptlang.org/tsconfig/#verbatimModuleSyntax). An import whose plain
 * bindings are used only as types is dropped by tsc as well, but that takes the type checker to
 * see; it is counted as static here, which errs on the side of a stricter graph.
 */
export type ImportKind = 'static' | 'dynamic' | 'type';

export interface Import {
  /** The importing file, relative to src/ and '/'-separated: `agents/hook.ts`. */
  from: string;
  /** The specifier as written (`../core/decide.js`), or `<computed>` for an `import()` of an expression. */
  specifier: string;
  kind: ImportKind;
  /** 1-based line of the import in `from`. */
  line: number;
  /** The file under src/ the specifier names, or null for a node builtin or an npm package. */
  target: string | null;
}

/** Every .ts file under `srcDir`, relative to it and '/'-separated, sorted. */
export function sourceFiles(srcDir: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && entry.name.endsWith('.ts')) files.push(relative(srcDir, path).split(sep).join('/'));
    }
  };
  walk(srcDir);
  return files.sort();
}

/** The imports of one file, from its text; `target` is left null (see `resolveImports`). */
export function importsOf(from: string, text: string): Import[] {
  // No parent pointers and no JSDoc: neither is needed to find imports, and both cost parse time.
  const file = ts.createSourceFile(from, text, { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone }, false, ts.ScriptKind.TS);
  const found: Import[] = [];
  const add = (node: ts.Node, specifier: string, kind: ImportKind) => {
    const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
    found.push({ from, specifier, kind, line, target: null });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node, node.moduleSpecifier.text, importDeclarationErased(node) ? 'type' : 'static');
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node, node.moduleSpecifier.text, exportDeclarationErased(node) ? 'type' : 'static');
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expression = node.moduleReference.expression;
      if (ts.isStringLiteral(expression)) add(node, expression.text, node.isTypeOnly ? 'type' : 'static');
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const argument = node.arguments[0];
      add(node, argument !== undefined && ts.isStringLiteralLike(argument) ? argument.text : '<computed>', 'dynamic');
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node, node.argument.literal.text, 'type');
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function importDeclarationErased(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (clause === undefined) return false; // `import './x.js'`: loaded for its effects
  if (clause.isTypeOnly) return true;
  if (clause.name !== undefined) return false; // a default binding
  const bindings = clause.namedBindings;
  if (bindings === undefined || ts.isNamespaceImport(bindings)) return false;
  return bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly);
}

function exportDeclarationErased(node: ts.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  return clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((element) => element.isTypeOnly);
}

/**
 * Fills in each relative import's target among `files` (NodeNext: `./x.js` names `./x.ts`).
 * A relative specifier that names no file in `files` keeps target null and is returned in
 * `unresolved`, so that a graph with a hole in it cannot pass silently.
 */
export function resolveImports(imports: readonly Import[], files: readonly string[]): { imports: Import[]; unresolved: Import[] } {
  const known = new Set(files);
  const unresolved: Import[] = [];
  const resolved = imports.map((entry) => {
    if (!entry.specifier.startsWith('.')) return entry;
    const path = posix.normalize(posix.join(posix.dirname(entry.from), entry.specifier)).replace(/\.js$/, '.ts');
    if (!known.has(path)) {
      unresolved.push(entry);
      return entry;
    }
    return { ...entry, target: path };
  });
  return { imports: resolved, unresolved };
}

/** The whole graph of `srcDir`, resolved. */
export function readImportGraph(srcDir: string): { files: string[]; imports: Import[]; unresolved: Import[] } {
  const files = sourceFiles(srcDir);
  const raw = files.flatMap((file) => importsOf(file, readFileSync(join(srcDir, ...file.split('/')), 'utf8')));
  return { files, ...resolveImports(raw, files) };
}

/** The layer of a file: its first folder under src/ (`agents/setup/host.ts` is in `agents`). */
export function layerOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? '' : file.slice(0, slash);
}

/** `from -> specifier (line n)`: how a failure names an import. */
export function describeImport(entry: Import): string {
  return `src/${entry.from}:${entry.line} -> '${entry.specifier}'`;
}

/**
 * The files reached from `roots` through the imports `follow` accepts, each with the import that
 * first reached it (null for a root), in breadth-first order: the chain back to a root is how a
 * failure explains why a module is loaded.
 */
export function closure(imports: readonly Import[], roots: readonly string[], follow: (entry: Import) => boolean): Map<string, Import | null> {
  const byFile = groupByImporter(imports);
  const reached = new Map<string, Import | null>(roots.map((root) => [root, null]));
  const queue = [...roots];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const entry of byFile.get(next) ?? []) {
      if (entry.target === null || reached.has(entry.target) || !follow(entry)) continue;
      reached.set(entry.target, entry);
      queue.push(entry.target);
    }
  }
  return reached;
}

/** `root -> a -> b`: the imports by which `file` was reached in a `closure`. */
export function chainTo(reached: Map<string, Import | null>, file: string): string {
  const steps: string[] = [];
  for (let via = reached.get(file); via; via = reached.get(via.from)) steps.unshift(describeImport(via));
  return steps.join(', ');
}

/**
 * The runtime cycles: strongly connected components (Tarjan) of the graph of static imports,
 * each given as one cycle through its files, as the imports that close it. Type-only imports
 * are erased and import() loads later, so neither can make an evaluation-order cycle.
 */
export function runtimeCycles(imports: readonly Import[]): Import[][] {
  const edges = imports.filter((entry) => entry.kind === 'static' && entry.target !== null);
  const byFile = groupByImporter(edges);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const entry of byFile.get(file) ?? []) {
      const target = entry.target!;
      if (!index.has(target)) {
        connect(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      const selfImport = (byFile.get(file) ?? []).some((entry) => entry.target === file);
      if (component.length > 1 || selfImport) components.push(component);
    }
  };
  for (const file of [...byFile.keys()].sort()) if (!index.has(file)) connect(file);
  return components.map((component) => cycleWithin(new Set(component), byFile));
}

/** One cycle inside a strongly connected component, from its first file (sorted) back to it. */
function cycleWithin(component: Set<string>, byFile: Map<string, Import[]>): Import[] {
  const start = [...component].sort()[0]!;
  const reached = new Map<string, Import | null>([[start, null]]);
  const queue = [start];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const entry of byFile.get(next) ?? []) {
      const target = entry.target!;
      if (target === start) {
        const path = [entry];
        for (let via = reached.get(entry.from); via; via = reached.get(via.from)) path.unshift(via);
        return path;
      }
      if (!component.has(target) || reached.has(target)) continue;
      reached.set(target, entry);
      queue.push(target);
    }
  }
  return [];
}

function groupByImporter(imports: readonly Import[]): Map<string, Import[]> {
  const byFile = new Map<string, Import[]>();
  for (const entry of imports) {
    const list = byFile.get(entry.from);
    if (list) list.push(entry);
    else byFile.set(entry.from, [entry]);
  }
  return byFile;
}
