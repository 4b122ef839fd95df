import { z } from 'zod';
import { CHECK_KINDS, PACKAGE_MANAGERS, type Config } from './config.js';
import { VouchError } from './errors.js';

const checkName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'a name of letters, digits, ".", "_", ":" or "-"')
  .max(64);

const glob = z.string().min(1, 'a non-empty glob');

/** Environment variable names that matter to a check; `PREFIX_*` takes every variable with that prefix. */
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, 'an environment variable name, or a prefix ending in "*"');

export const checkSchema = z
  .strictObject({
    name: checkName.describe('How commands refer to this check.'),
    kind: z.enum(CHECK_KINDS).describe('What the check verifies.'),
    script: z
      .string()
      .min(1)
      .optional()
      .describe('A package.json script, run through the package manager.'),
    command: z
      .array(z.string())
      .min(1, 'at least the program name')
      .optional()
      .describe('An argv run with no shell, from the root.'),
    inputs: z
      .array(glob)
      .min(1)
      .optional()
      .describe('Globs over the source files (tracked plus untracked, not ignored); "!" excludes. Hashed by content. Default ["**"].'),
    installed: z
      .array(glob)
      .optional()
      .describe('Globs under install roots, recorded by file identity; "!" excludes. Default ["node_modules/**"].'),
    env: z
      .array(envName)
      .optional()
      .describe('Environment variables, besides the defaults, whose values decide the outcome.'),
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
  checks: z
    .array(checkSchema)
    .min(1, 'at least one check')
    .check((ctx) => {
      const seen = new Set<string>();
      ctx.value.forEach((check, index) => {
        if (seen.has(check.name)) {
          ctx.issues.push({
            code: 'custom',
            input: check.name,
            message: `a unique name; "${check.name}" is used twice`,
            path: [index, 'name'],
          });
        }
        seen.add(check.name);
      });
    }),
});

/** Parses and validates config text; an error names the file, the JSON path and what was expected. */
export function parseConfig(text: string, file: string): Config {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new VouchError(
      'config-invalid-json',
      `${file} is not valid JSON: ${(error as Error).message}. Fix the syntax, or run "vouch init --config NEW.json" to see a fresh proposal.`,
    );
  }
  const parsed = configSchema.safeParse(raw);
  if (parsed.success) return parsed.data as Config;
  const lines = parsed.error.issues.map((issue) => `  ${jsonPath(issue.path)}: ${describeIssue(issue)}`);
  throw new VouchError(
    'config-invalid',
    `${file} is not a valid vouch config:\n${lines.join('\n')}\nSee docs/config.md for every field.`,
  );
}

function jsonPath(path: readonly PropertyKey[]): string {
  let out = '$';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  return out;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    case 'invalid_type':
      return `expected ${issue.expected}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `expected ${issue.message}`;
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
