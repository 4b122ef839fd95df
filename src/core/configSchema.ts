import { z } from 'zod';
import { CHECK_KINDS, CHECK_NAME, CHECK_NAME_MAX, EVIDENCE_MODES, PACKAGE_MANAGERS, RESERVED_DIRS, type Config } from './config.js';
import { CONFIG_LIMITS } from './configLimits.js';
import { VouchError } from './errors.js';
import { globProblem } from './globRules.js';
import { jsonKeyProblem } from './jsonKeyProblem.js';

const checkName = z
  .string()
  .regex(CHECK_NAME, 'a name of letters, digits, ".", "_", ":" or "-"; or a package check\'s PACKAGE#SCRIPT, e.g. "@scope/a#test"')
  .max(CHECK_NAME_MAX);

/** A workspace package's directory: root-relative, "/"-separated, no "." or ".." step. */
const packageDir = z
  .string()
  .max(CONFIG_LIMITS.globLength)
  .check((ctx) => {
    const parts = ctx.value.split('/');
    if (ctx.value === '' || parts.some((part) => part === '' || part === '.' || part === '..') || ctx.value.includes('\\') || ctx.value.includes('\0')) {
      ctx.issues.push({ code: 'custom', input: ctx.value, message: 'a workspace package\'s directory relative to the root, e.g. "packages/a" (no "..", "." or empty step)' });
    } else if (RESERVED_DIRS.includes(parts[0]!) || parts.includes('node_modules')) {
      ctx.issues.push({ code: 'custom', input: ctx.value, message: `a workspace package's directory, not one inside ${parts.includes('node_modules') ? 'node_modules' : parts[0]}` });
    }
  });

const glob = z
  .string()
  .min(1, 'a non-empty glob')
  .max(CONFIG_LIMITS.globLength)
  .check((ctx) => {
    if (ctx.value === '') return;
    const problem = globProblem(ctx.value, RESERVED_DIRS);
    if (problem !== null) ctx.issues.push({ code: 'custom', input: ctx.value, message: problem, params: { sentence: true } });
  });

const globList = z.array(glob).max(CONFIG_LIMITS.listItems);


/** Environment variable names that matter to a check; `PREFIX_*` takes every variable with that prefix. */
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, 'an environment variable name, or a prefix ending in "*"');

export const checkSchema = z
  .strictObject({
    name: checkName.describe('How commands refer to this check.'),
    kind: z.enum(CHECK_KINDS).describe('What the check verifies.'),
    script: z
      .string()
      .regex(/\S/, 'a script name, not an empty or blank string')
      .optional()
      .describe('A package.json script, run through the package manager.'),
    command: z
      .array(z.string())
      .min(1, 'at least the program name')
      .max(CONFIG_LIMITS.listItems)
      .check((ctx) => {
        // No shell splits or trims an argv: an empty or blank program name can only fail to start.
        if (ctx.value.length > 0 && !/\S/.test(ctx.value[0]!)) {
          ctx.issues.push({ code: 'custom', input: ctx.value[0], message: 'a program name, not an empty or blank string, e.g. ["tsc", "--noEmit"]', path: [0] });
        }
      })
      .optional()
      .describe('An argv run with no shell, from the root.'),
    inputs: globList
      .min(1)
      .optional()
      .describe('Globs over the source files (tracked plus untracked, not ignored); "!" excludes. Hashed by content. Default ["**"].'),
    installed: globList
      .optional()
      .describe('Globs under install roots, recorded by file identity; "!" excludes. Default ["node_modules/**"].'),
    env: z
      .array(envName)
      .max(CONFIG_LIMITS.listItems)
      .optional()
      .describe('Environment variables, besides the defaults, whose values decide the outcome.'),
    package: packageDir
      .optional()
      .describe(
        'A workspace package\'s directory, relative to the root: the check runs there, with that package\'s scripts, and its default inputs are the package, the workspace packages it depends on and the root\'s shared config (docs/workspaces.md).',
      ),
    mode: z
      .enum(EVIDENCE_MODES)
      .optional()
      .describe(
        'What a receipt is bound to. "declared" (the default): the files the inputs and installed globs match. "traced": what each run really read, listed and looked up, recorded with strace (Linux); the declared globs stand in where tracing cannot run.',
      ),
  })
  .check((ctx) => {
    const check = ctx.value;
    if ((check.script === undefined) === (check.command === undefined)) {
      ctx.issues.push({
        code: 'custom',
        input: check,
        message: 'exactly one of "script" or "command"',
        path: [],
      });
    }
  });

export const configSchema = z.strictObject({
  $schema: z.string().optional().describe('Path or URL of this JSON Schema, for editors.'),
  schema: z.literal(1).describe('The config format version.'),
  root: z.string().min(1).optional().describe('The project root, relative to this file. Default ".".'),
  packageManager: z
    .enum(PACKAGE_MANAGERS)
    .optional()
    .describe('Runs "script" checks. Default: detected from package.json and the lockfiles.'),
  ledger: z
    .strictObject({
      days: z.number().int().min(1).max(3650).optional().describe('Ledger rows older than this many days are dropped. Default 90.'),
      rows: z.number().int().min(100).max(10_000_000).optional().describe('At most this many ledger rows are kept, the newest. Default 100000.'),
    })
    .optional()
    .describe('How long the ledger of hook and run decisions is kept ("vouch savings" reports from it; docs/hooks.md, "The ledger").'),
  replayFailures: z
    .boolean()
    .optional()
    .describe('Whether the agent hooks answer a rerun of a check whose receipt is CURRENT and FAIL with its stored failure (true, the default) or let it run again (false).'),
  checks: z
    .array(checkSchema)
    .min(1, 'at least one check')
    .max(CONFIG_LIMITS.checks)
    .check((ctx) => {
      // Names differing only by case would be one check on a case-insensitive file system's
      // log paths, and one to a reader.
      const seen = new Map<string, string>();
      ctx.value.forEach((check, index) => {
        const folded = check.name.toLowerCase();
        const earlier = seen.get(folded);
        if (earlier === check.name) {
          ctx.issues.push({
            code: 'custom',
            input: check.name,
            message: `a unique name; "${check.name}" is used twice`,
            path: [index, 'name'],
          });
        } else if (earlier !== undefined) {
          ctx.issues.push({
            code: 'custom',
            input: check.name,
            message: `a name unique regardless of case; "${check.name}" and "${earlier}" differ only by case, so rename one`,
            path: [index, 'name'],
          });
        }
        if (earlier === undefined) seen.set(folded, check.name);
      });
    }),
});

/** What a config is validated against besides its text. */
export interface ConfigPlace {
  /** Root-relative directories never listed as inputs, beyond RESERVED_DIRS: a state dir inside the root. */
  reserved?: readonly string[];
}

/** Parses and validates config text; an error names the file, the JSON path and what was expected. */
export function parseConfig(text: string, file: string, place: ConfigPlace = {}): Config {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new VouchError(
      'config-invalid-json',
      `${file} is not valid JSON: ${(error as Error).message}. Fix the syntax, or run "vouch init --config NEW.json" to see a fresh proposal.`,
    );
  }
  // Checked before the schema, which would otherwise spend its time on a config refused anyway.
  const early = keyProblems(text) ?? stringProblems(raw) ?? limitProblems(raw);
  if (early) throw invalid(file, [early]);
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) throw invalid(file, parsed.error.issues.map((issue) => `${jsonPath(issue.path)}: ${describeIssue(issue)}`));
  const config = parsed.data as Config;
  const reserved = (place.reserved ?? []).filter((dir) => !RESERVED_DIRS.includes(dir));
  if (reserved.length > 0) {
    const lines: string[] = [];
    config.checks.forEach((check, index) => {
      for (const field of ['inputs', 'installed'] as const) {
        check[field]?.forEach((glob, at) => {
          const problem = globProblem(glob, reserved);
          if (problem !== null) lines.push(`$.checks[${index}].${field}[${at}]: ${problem}`);
        });
      }
    });
    if (lines.length > 0) throw invalid(file, lines);
  }
  return config;
}

function invalid(file: string, lines: readonly string[]): VouchError {
  return new VouchError('config-invalid', `${file} is not a valid vouch config:\n${lines.map((line) => `  ${line}`).join('\n')}\nSee docs/config.md for every field.`);
}

function keyProblems(text: string): string | null {
  const problem = jsonKeyProblem(text, CONFIG_LIMITS.depth);
  if (problem === null) return null;
  if (problem.kind === 'too-deep') return `${problem.path}: at most ${CONFIG_LIMITS.depth} levels of nesting; a vouch config needs four`;
  return `${problem.path}: the key ${JSON.stringify(problem.key)} appears twice in one object, and JSON keeps only the last silently; remove one`;
}

// In a "u" regex, a surrogate pair is one code point, so this matches only a lone (unpaired) surrogate.
const LONE_SURROGATE = /\p{Surrogate}/u;

/** A NUL or a lone surrogate in any key or string: no path, argv or name can hold one faithfully. */
function stringProblems(value: unknown, path = '$'): string | null {
  if (typeof value === 'string') {
    if (value.includes('\0')) return `${path}: a NUL character, which no argv, path or glob can hold; remove it`;
    if (LONE_SURROGATE.test(value)) return `${path}: an unpaired UTF-16 surrogate (a broken "\\uD800"-style escape), which is not text; fix the escape`;
    return null;
  }
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = stringProblems(value[index], `${path}[${index}]`);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, member] of Object.entries(value)) {
      const at = `${path}[${JSON.stringify(key)}]`;
      const found = stringProblems(key, `${path} key ${JSON.stringify(key)}`) ?? stringProblems(member, /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : at);
      if (found) return found;
    }
  }
  return null;
}

function limitProblems(raw: unknown): string | null {
  const checks = (raw as { checks?: unknown } | null)?.checks;
  if (!Array.isArray(checks)) return null;
  if (checks.length > CONFIG_LIMITS.checks) {
    return `$.checks: at most ${CONFIG_LIMITS.checks} checks, not ${checks.length}; every status matches each check's globs against every file, so split the project, or merge checks`;
  }
  let globs = 0;
  for (let index = 0; index < checks.length; index++) {
    const check = checks[index] as Record<string, unknown> | null;
    for (const field of ['inputs', 'installed', 'env', 'command'] as const) {
      const list = check?.[field];
      if (!Array.isArray(list)) continue;
      if (list.length > CONFIG_LIMITS.listItems) return `$.checks[${index}].${field}: at most ${CONFIG_LIMITS.listItems} items, not ${list.length}; use wider globs (a directory's "dir/**")`;
      if (field === 'inputs' || field === 'installed') globs += list.length;
    }
  }
  if (globs > CONFIG_LIMITS.globs) return `$.checks: at most ${CONFIG_LIMITS.globs} globs in the whole config, not ${globs}; use wider globs (a directory's "dir/**")`;
  return null;
}

function jsonPath(path: readonly PropertyKey[]): string {
  let out = '$';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  return out;
}

/** A mode is new to most readers: say what each does and what leaving it out means. */
const MODE_HINT =
  '; "declared" (the default, also when "mode" is left out) binds a receipt to the files its globs match, ' +
  '"traced" to what its run really read (see "Evidence: declared or traced" in docs/config.md)';

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    case 'invalid_type':
      return `expected ${issue.expected}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}${issue.path.at(-1) === 'mode' ? MODE_HINT : ''}`;
    default:
      // A sentence of its own (why a glob can never match) reads wrong after "expected".
      return (issue as { params?: { sentence?: boolean } }).params?.sentence ? issue.message : `expected ${issue.message}`;
  }
}

export function configJsonSchema(): object {
  const schema = z.toJSONSchema(configSchema, { target: 'draft-2020-12' }) as unknown as {
    properties: { checks: { items: Record<string, unknown> } };
  };
  // The refinement "exactly one of script or command" has no JSON Schema form of its own in zod's output.
  schema.properties.checks.items.oneOf = [
    { properties: { script: true }, required: ['script'] },
    { properties: { command: true }, required: ['command'] },
  ];
  return schema;
}
