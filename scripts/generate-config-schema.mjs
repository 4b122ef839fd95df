#!/usr/bin/env node
// Writes schemas/config.schema.json from the config validator itself, so the
// schema editors use and the checks every command runs cannot disagree.
// Reads the built validator: run "npm run build" first.
//
//   node scripts/generate-config-schema.mjs            write the file
//   node scripts/generate-config-schema.mjs --check    exit 1 if the file is out of date
//   node scripts/generate-config-schema.mjs --stdout   print it instead
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const validator = join(repo, 'dist', 'core', 'configSchema.js');
const target = join(repo, 'schemas', 'config.schema.json');

if (!existsSync(validator)) {
  process.stderr.write(`${relative(repo, validator)} is missing; run "npm run build" first, then run this again.\n`);
  process.exit(2);
}
const { configJsonSchema } = await import(pathToFileURL(validator).href);
const { $schema, ...rest } = configJsonSchema();
const schema = {
  $schema,
  title: 'vouch.config.json',
  description: 'The vouch config. Generated from the validator by scripts/generate-config-schema.mjs; docs/config.md describes every field.',
  ...rest,
};
const text = JSON.stringify(schema, null, 2) + '\n';

const mode = process.argv[2];
if (mode === '--stdout') {
  process.stdout.write(text);
} else if (mode === '--check') {
  const current = existsSync(target) ? readFileSync(target, 'utf8') : null;
  if (current !== text) {
    process.stderr.write(`${relative(repo, target)} is out of date; run "node scripts/generate-config-schema.mjs" and commit the result.\n`);
    process.exit(1);
  }
} else if (mode === undefined) {
  writeFileSync(target, text);
  process.stdout.write(`wrote ${relative(repo, target)}\n`);
} else {
  process.stderr.write(`unknown option "${mode}"; use no option to write the file, --check to compare, or --stdout to print.\n`);
  process.exit(2);
}
