import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { chainTo, closure, describeImport, importsOf, layerOf, readImportGraph, resolveImports, runtimeCycles, type Import } from '../helpers/importGraph.js';
import { layerViolations, tableProblems, type KnownException, type LayerTable } from '../helpers/layerRules.js';

/*
 * The architecture of src/ as docs/architecture.md draws it, checked against the imports the
 * code really has. It reads every file with the TypeScript parser, spawns nothing and builds
 * nothing: it runs in a fraction of a second. When a rule here changes, docs/architecture.md
 * changes with it.
 */

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SRC = join(REPO, 'src');

/**
 * The layers as they are: each may use only the layers its row lists, all below it, and
 * `core` uses nothing outside itself. 'lazy' means only through import() (or a type-only
 * import): those layers are heavy, and a command that does not need them must not pay their
 * load (docs/architecture.md, "Lazy loading").
 */
const LAYERS: LayerTable = {
  tiers: [['cli'], ['mcp'], ['agents'], ['api'], ['observer', 'prove'], ['exec'], ['store', 'fs'], ['core']],
  uses: {
    // main.ts imports observer/callMode.js and each command lazily; init names one exec type.
    cli: { mcp: 'lazy', agents: 'runtime', api: 'runtime', observer: 'lazy', exec: 'type', core: 'runtime' },
    mcp: { api: 'runtime', core: 'runtime' },
    // agents/setup/ reads the project and the state dir's place; the hook's evaluate.ts loads api lazily.
    agents: { api: 'runtime', store: 'runtime', core: 'runtime' },
    api: { observer: 'runtime', prove: 'lazy', exec: 'runtime', store: 'runtime', fs: 'runtime', core: 'runtime' },
    observer: { store: 'runtime', fs: 'runtime', core: 'runtime' },
    prove: { core: 'runtime' },
    exec: { store: 'runtime', fs: 'runtime', core: 'runtime' },
    store: { core: 'runtime' },
    fs: { core: 'runtime' },
    core: {},
  },
  rules: {
    prove: 'prove/ imports only core/ (and node builtins and npm packages): a claim is judged from memory, by its own stages',
    core: 'core/ imports nothing outside core/: it is the pure model every layer shares',
  },
};

/** Imports that break a rule today. Each goes when the code is changed; the test says when one is no longer there. */
const KNOWN_EXCEPTIONS: KnownException[] = [];

/** What `vouch` loads before it knows the command (main.ts's static closure): no command's module. */
const CLI_BOOT = ['cli/main.ts', 'cli/dispatch.ts', 'cli/fdOutput.ts', 'cli/version.ts', 'core/claimError.ts', 'core/errors.ts', 'core/version.ts'];

/** dispatch.ts loads `vouch hook` here, through import(). */
const HOOK_COMMAND = 'cli/commands/hook.ts';

/**
 * The hook command's static closure: what every hook event loads (another tool's event that
 * is ignored, SessionStart, and each Bash command before it is decided). In the bundle this is
 * the hook chunk, next to main.js and the chunks every command shares.
 */
const HOOK_START = [
  'cli/commands/hook.ts',
  'agents/hook.ts',
  'agents/host.ts',
  'agents/hostClaude.ts',
  'agents/hostCodex.ts',
  'agents/hookLog.ts',
  'agents/hookProgram.ts',
  // The one shellQuote (it was a copy inside hookProgram.ts); bundled into the common chunk, so the hook loads no more files.
  'agents/shellQuote.ts',
];

/** Layers the hook's start must never reach: the store, the file scanner, running checks, proving. */
const HOOK_START_NEVER = ['store', 'fs', 'exec', 'prove'];

/**
 * Every import() met on the hook's decision path, and whether a Bash decision that the
 * observer answers takes it ('decision': its modules count, and are pinned below) or not
 * ('aside', with when it is taken instead). agents/hook.ts takes evaluate.js for each Bash
 * command unless VOUCH_FORCE is set for the whole hook (a forced command is matched too, for the
 * ledger), then records the decision (hookLedger.js, store/ledgerSpool.js); evaluate.ts then
 * loads the project, the matcher, the decision and the observer client in steps, each only when
 * the one before did not already decide (a pass). Those steps are the path of a deny or a rewrite, so they count.
 * The scan fallback (api/status.js) and reading last durations from the store (api/log.js)
 * are taken only when the observer does not answer: that path loads SQLite and the scanner by
 * design, and its cost is measured by bench/hook.mjs's "no observer" mode instead.
 */
const HOOK_DYNAMIC_IMPORTS: Record<string, 'decision' | `aside: ${string}`> = {
  'agents/hook.ts -> ./evaluate.js': 'decision',
  'agents/hook.ts -> ./startObserverDetached.js': 'aside: SessionStart, once per session',
  // Every decision in a project with a config is recorded: one appended line, no SQLite (store/ledgerSpool.ts).
  'agents/hook.ts -> ./hookLedger.js': 'decision',
  'agents/hook.ts -> ../store/ledgerSpool.js': 'decision',
  'store/ledgerSpool.ts -> ./openStore.js': 'aside: the spool passed 1 MB, so this writer moves it into the store',
  'store/ledgerSpool.ts -> ./ledger.js': 'aside: the spool passed 1 MB, so this writer moves it into the store',
  // The native client (native/hookClient.c) found no hook server: this Node hook starts one once it has answered.
  'cli/commands/hook.ts -> ../../agents/startHookServer.js': 'aside: the native client found no server; after the answer',
  'cli/commands/hook.ts -> ../../agents/hookServer.js': 'aside: `vouch hook serve`, the resident server itself',
  'cli/commands/hook.ts -> ../../observer/callMode.js': 'aside: `vouch hook serve`, the resident server itself',
  'cli/commands/hook.ts -> ../runServer.js': 'aside: `vouch hook serve`, a rewritten run the client asks it for',
  'agents/hook.ts -> ./hookNotice.js': 'aside: vouch cannot load a native module; said once per session',
  'agents/evaluate.ts -> ../core/nativeLoad.js': 'aside: an error; is it a native module that does not load',
  // Where the project is: all that a command naming no check needs before it passes.
  'agents/evaluate.ts -> ../api/projectPlace.js': 'decision',
  'agents/evaluate.ts -> ../api/project.js': 'decision',
  'agents/evaluate.ts -> ./commandMatch.js': 'decision',
  'agents/evaluate.ts -> ./commandDecision.js': 'decision',
  'agents/evaluate.ts -> ../api/askObserver.js': 'decision',
  'agents/evaluate.ts -> ../core/decide.js': 'decision',
  // A deny replays the stored output (agents/denyReason.ts): the log is read then, and a FAIL's to decide.
  'agents/evaluate.ts -> ../store/storedLog.js': 'decision',
  'agents/evaluate.ts -> ../api/status.js': 'aside: no observer answered; the direct scan',
  'agents/evaluate.ts -> ../api/log.js': "aside: the observer's first deadline ran out; the last durations are read from the store",
  // Script checks and no "packageManager" in the config: a common project, so it counts.
  'api/project.ts -> ../exec/detectPackageManager.js': 'decision',
  // A script the checks run that runs other scripts: the shell parser splits it (core/scriptContext.ts). The hook has it loaded already.
  'api/project.ts -> ../core/shellWords.js': 'decision',
  // A config with package checks: the workspace's members and their scripts decide what a command runs,
  // turbo.json and nx.json whether a task runner runs more, and the fan-out resolver which checks it runs.
  'api/project.ts -> ../exec/readTaskRunners.js': 'decision',
  'api/project.ts -> ../exec/workspaceRootSetting.js': 'decision',
  'agents/evaluate.ts -> ./fanOut.js': 'decision',
  'api/project.ts -> ../exec/readWorkspace.js': 'decision',
  'api/project.ts -> ../core/configSchema.js': 'aside: a config this vouch has not validated before',
  'api/project.ts -> fastest-levenshtein': 'aside: an unknown check name, an error',
  'observer/client.ts -> node:net': 'aside: the native addon is not built',
};

/** What a Bash decision that the observer answers loads, from the hook command on. */
const HOOK_DECISION = [
  ...HOOK_START,
  'agents/commandDecision.ts',
  'agents/commandMatch.ts',
  // A deny's reason: the summary line and the replayed output, pure.
  'agents/denyReason.ts',
  'agents/evaluate.ts',
  // In a workspace only: the fan-out resolver, a module per tool.
  'agents/fanOut.ts',
  'agents/fanout/answer.ts',
  'agents/fanout/bun.ts',
  'agents/fanout/filters.ts',
  'agents/fanout/npm.ts',
  'agents/fanout/nx.ts',
  'agents/fanout/patterns.ts',
  'agents/fanout/pnpm.ts',
  'agents/fanout/turbo.ts',
  'agents/fanout/yarn.ts',
  'agents/hookLedger.ts',
  'agents/matchForms.ts',
  'agents/rewrite.ts',
  'agents/shellCommand.ts',
  // The forms a tool documents as the same run: a table matchForms.ts reads, with no imports.
  'agents/toolEquivalents.ts',
  'api/askObserver.ts',
  'api/project.ts',
  'api/projectPlace.ts',
  'core/canonicalJson.ts',
  'core/config.ts',
  'core/configLimits.ts',
  'core/context.ts',
  'core/decide.ts',
  'core/definition.ts',
  'core/humanTime.ts',
  'core/replay.ts',
  'core/runSummary.ts',
  'core/digest.ts',
  'core/errors.ts',
  // In a workspace only: turbo.json and nx.json, read as JSONC.
  'core/jsonc.ts',
  'core/ledgerEntry.ts',
  'core/taskRunners.ts',
  'core/packageManagerGrammar.ts',
  'core/pathInside.ts',
  'core/reason.ts',
  'core/scriptContext.ts',
  'core/shellWords.ts',
  // The system's paths, which a traced check's executable identity leaves to the evidence or keeps: no imports.
  'core/systemPaths.ts',
  'core/version.ts',
  // Package check names (PACKAGE#SCRIPT) and the workspace graph: pure, no imports.
  'core/workspace.ts',
  'exec/checkPlan.ts',
  'exec/detectPackageManager.ts',
  'exec/packageManagerCommand.ts',
  // A config with package checks: its workspace is read on every decision, and turbo.json and nx.json.
  'exec/readTaskRunners.ts',
  'exec/readWorkspace.ts',
  'exec/workspaceRootSetting.ts',
  'exec/resolveExecutable.ts',
  'fs/globMatcher.ts',
  'fs/nativeAddon.ts',
  'fs/processStart.ts',
  'observer/callMode.ts',
  // The client's deadline and answer limit, shared with the served status's call: constants.
  'observer/callLimits.ts',
  'observer/client.ts',
  // Which sockets this process serves itself: a map, no imports.
  'observer/localCalls.ts',
  'observer/observerFiles.ts',
  // The record's checks, apart from observerFiles.ts's digests: the served status reads records too.
  'observer/observerRecord.ts',
  'observer/protocol.ts',
  'store/diskFull.ts',
  'store/ledgerSpool.ts',
  'store/stateDir.ts',
  'store/storedLog.ts',
];

/** Layers a decision the observer answers must never reach. */
const HOOK_DECISION_NEVER = ['prove'];

const graph = readImportGraph(SRC);
const keyOf = (entry: Import) => `${entry.from} -> ${entry.specifier}`;
const isStatic = (entry: Import) => entry.kind === 'static';
/** The imports a Bash decision that the observer answers takes: the static ones, and the import() calls classified 'decision'. */
const onDecision = (entry: Import) => isStatic(entry) || (entry.kind === 'dynamic' && HOOK_DYNAMIC_IMPORTS[keyOf(entry)] === 'decision');

/** Modules in `reached` that `allowed` does not list, or that lie in a `never` layer, each with the imports that bring it in. */
function growth(reached: Map<string, Import | null>, allowed: readonly string[], never: readonly string[], what: string): string[] {
  const problems: string[] = [];
  for (const file of reached.keys()) {
    if (never.includes(layerOf(file))) problems.push(`src/${file} is in ${layerOf(file)}/, which ${what} must never load; reached by ${chainTo(reached, file)}`);
    else if (!allowed.includes(file)) problems.push(`src/${file} is new in ${what}, which is pinned to what it loads today; reached by ${chainTo(reached, file)}`);
  }
  return problems;
}

describe('the layers of src/', () => {
  it('the layer table allows only downward imports, and names every layer', () => {
    expect(tableProblems(LAYERS)).toEqual([]);
  });

  it('every relative import names a file under src/', () => {
    expect(graph.files.length).toBeGreaterThan(100);
    expect(graph.unresolved.map(describeImport)).toEqual([]);
  });

  it('no layer imports a layer above it or one its row does not list, and prove/ and core/ keep to themselves', () => {
    const { violations } = layerViolations(graph.imports, LAYERS, KNOWN_EXCEPTIONS);
    expect(violations).toEqual([]);
  });

  it('each known exception is still there (remove it from the list once the code no longer needs it)', () => {
    const { staleExceptions } = layerViolations(graph.imports, LAYERS, KNOWN_EXCEPTIONS);
    expect(staleExceptions.map((known) => `src/${known.from} -> '${known.specifier}'`)).toEqual([]);
  });

  it('no runtime cycle: the static imports form no loop (type-only imports and import() do not count)', () => {
    const cycles = runtimeCycles(graph.imports).map((cycle) => `runtime cycle: ${cycle.map(describeImport).join(', ')}`);
    expect(cycles).toEqual([]);
  });
});

describe('docs/architecture.md', () => {
  const doc = readFileSync(join(REPO, 'docs', 'architecture.md'), 'utf8');

  it('has a row for every layer in the table', () => {
    const missing = LAYERS.tiers.flat().filter((layer) => !doc.includes(`| \`${layer}\` |`));
    expect(missing.map((layer) => `${layer}/ is in the layer table but has no row in docs/architecture.md`)).toEqual([]);
  });

  it("names every command's entry point that dispatch.ts loads", () => {
    const entries = graph.imports.filter((entry) => entry.from === 'cli/dispatch.ts' && entry.kind === 'dynamic' && entry.target?.startsWith('cli/commands/'));
    expect(entries.length).toBeGreaterThan(10);
    const missing = entries.map((entry) => entry.target!).filter((target) => !doc.includes(`\`${target}\``));
    expect(missing.map((target) => `src/${target} is a command dispatch.ts loads, and docs/architecture.md's table of commands does not name it`)).toEqual([]);
  });
});

describe('what the hook loads', () => {
  it("the CLI's boot (main.ts's static closure) loads no command: each is imported when asked for", () => {
    expect(growth(closure(graph.imports, ['cli/main.ts'], isStatic), CLI_BOOT, [], "the CLI's boot")).toEqual([]);
  });

  it('the CLI reaches the hook command only through import()', () => {
    const toHook = graph.imports.filter((entry) => (entry.from === 'cli/main.ts' || entry.from === 'cli/dispatch.ts') && entry.target === HOOK_COMMAND);
    expect(toHook.map((entry) => entry.kind)).toEqual(['dynamic']);
  });

  it("the hook command's static closure is no larger than today's, and reaches no store, fs, exec or prove module", () => {
    const reached = closure(graph.imports, [HOOK_COMMAND], isStatic);
    expect(growth(reached, HOOK_START, HOOK_START_NEVER, "the hook command's static closure")).toEqual([]);
  });

  it('every import() on the decision path is known: taken on a decision, or aside from it', () => {
    const reached = closure(graph.imports, [HOOK_COMMAND], onDecision);
    const dynamic = graph.imports.filter((entry) => entry.kind === 'dynamic' && reached.has(entry.from));
    const unknown = dynamic.filter((entry) => !Object.hasOwn(HOOK_DYNAMIC_IMPORTS, keyOf(entry)));
    expect(
      unknown.map((entry) => `${describeImport(entry)} is an import() on the hook's decision path: say in HOOK_DYNAMIC_IMPORTS whether a decision takes it`),
    ).toEqual([]);
    const seen = new Set(dynamic.map(keyOf));
    const stale = Object.keys(HOOK_DYNAMIC_IMPORTS).filter((key) => !seen.has(key));
    expect(stale.map((key) => `${key} is in HOOK_DYNAMIC_IMPORTS, but no import() on the decision path has it: remove it`)).toEqual([]);
  });

  it('a decision the observer answers loads no more than today, and nothing of prove/', () => {
    const reached = closure(graph.imports, [HOOK_COMMAND], onDecision);
    expect(growth(reached, HOOK_DECISION, HOOK_DECISION_NEVER, 'a decision the observer answers')).toEqual([]);
  });
});

/** A graph from source texts, for the checker's own cases: `{ 'core/a.ts': "import …" }`. */
function graphOf(files: Record<string, string>): Import[] {
  const names = Object.keys(files);
  return resolveImports(
    names.flatMap((name) => importsOf(name, files[name]!)),
    names,
  ).imports;
}

describe('the checker itself', () => {
  const table: LayerTable = {
    tiers: [['cli'], ['api'], ['core']],
    uses: { cli: { api: 'runtime', core: 'runtime' }, api: { core: 'lazy' }, core: {} },
    rules: { core: 'core/ imports nothing outside core/' },
  };

  it('names an upward import by file, line and specifier, with the rule', () => {
    const imports = graphOf({ 'core/a.ts': "export const a = 1;\nimport { f } from '../cli/f.js';\n", 'cli/f.ts': 'export const f = 1;\n' });
    expect(layerViolations(imports, table).violations).toEqual([
      "src/core/a.ts:2 -> '../cli/f.js': upward: core/ is below cli/, and a lower layer never imports a higher one",
    ]);
  });

  it('counts a type-only import for direction, but not as a load', () => {
    const imports = graphOf({
      'core/a.ts': "import type { F } from '../cli/f.js';\n",
      'api/b.ts': "import { type C } from '../core/c.js';\nexport const b = () => import('../core/c.js');\n",
      'cli/f.ts': 'export type F = 1;\n',
      'core/c.ts': 'export type C = 1;\n',
    });
    expect(imports.map((entry) => `${entry.from} ${entry.kind}`)).toEqual(['core/a.ts type', 'api/b.ts type', 'api/b.ts dynamic']);
    expect(layerViolations(imports, table).violations).toEqual([
      "src/core/a.ts:1 -> '../cli/f.js': upward: core/ is below cli/, and a lower layer never imports a higher one",
    ]);
  });

  it('refuses a static import where only a lazy one is allowed, and an import of a layer not in the row', () => {
    const imports = graphOf({
      'api/b.ts': "import { type C, c } from '../core/c.js';\n",
      'cli/x.ts': "export * from '../core/c.js';\n",
      'core/c.ts': 'export type C = 1;\nexport const c = 1;\n',
    });
    const lazyOnly = { ...table, uses: { ...table.uses, cli: { api: 'runtime' as const } } };
    expect(layerViolations(imports, lazyOnly).violations).toEqual([
      "src/api/b.ts:1 -> '../core/c.js': api/ loads core/ only lazily (import() or a type-only import), so that a command that does not need core/ does not load it; this import is static",
      "src/cli/x.ts:1 -> '../core/c.js': cli/ uses only api/ today; a new dependency is a design change: if it is meant, add cli -> core to the layer table and docs/architecture.md",
    ]);
  });

  it('reports a file in a folder the table does not know', () => {
    const imports = graphOf({ 'schemas/s.ts': "import { c } from '../core/c.js';\n", 'core/c.ts': 'export const c = 1;\n' });
    expect(layerViolations(imports, table).violations).toEqual([
      'src/schemas/ is in no layer: add it to the layer table (test/unit/architecture.test.ts) and docs/architecture.md, below what it imports and above what imports it',
    ]);
  });

  it('finds a cycle of static imports, and none through import() or a type-only import', () => {
    const cyclic = graphOf({ 'core/a.ts': "import { b } from './b.js';\n", 'core/b.ts': "import { c } from './c.js';\n", 'core/c.ts': "import { a } from './a.js';\n" });
    expect(runtimeCycles(cyclic).map((cycle) => cycle.map(describeImport))).toEqual([
      ["src/core/a.ts:1 -> './b.js'", "src/core/b.ts:1 -> './c.js'", "src/core/c.ts:1 -> './a.js'"],
    ]);
    const broken = graphOf({ 'core/a.ts': "import { b } from './b.js';\n", 'core/b.ts': "import type { A } from './a.js';\nconst a = () => import('./a.js');\n" });
    expect(runtimeCycles(broken)).toEqual([]);
  });

  it('pins a closure: a module added behind a static import is named with the chain that loads it', () => {
    const imports = graphOf({ 'cli/h.ts': "import { a } from '../api/a.js';\n", 'api/a.ts': "import { c } from '../core/c.js';\n", 'core/c.ts': '' });
    const reached = closure(imports, ['cli/h.ts'], isStatic);
    expect(growth(reached, ['cli/h.ts', 'api/a.ts'], ['core'], 'the start')).toEqual([
      "src/core/c.ts is in core/, which the start must never load; reached by src/cli/h.ts:1 -> '../api/a.js', src/api/a.ts:1 -> '../core/c.js'",
    ]);
  });
});
