#!/usr/bin/env node
// Writes schemas/config.schema.json and schemas/claim.schema.json from the
// validators themselves, so the schemas editors use and the checks vouch runs
// cannot disagree.
// Reads the built validator: run "npm run build" first.
//
//   node scripts/generate-config-schema.mjs            write the file
//   node scripts/generate-config-schema.mjs --check    exit 1 if the file is out of date
//   node scripts/generate-config-schema.mjs --stdout   print it instead
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const SCHEMAS = [
  {
    module: 'configSchema.js',
    make: 'configJsonSchema',
    target: 'config.schema.json',
    title: 'vouch.config.json',
    description: 'The vouch config. Generated from the validator by scripts/generate-config-schema.mjs; docs/config.md describes every field.',
  },
  {
    module: 'claimInput.js',
    make: 'claimJsonSchema',
    target: 'claim.schema.json',
    title: 'A claim for vouch prove',
    description: 'A case (drafts and a test) and a control (the edit broken on purpose, and where it must break). Generated from the validator by scripts/generate-config-schema.mjs; docs/claims.md describes every member.',
  },
];

const outputs = [];
for (const entry of SCHEMAS) {
  const validator = join(repo, 'dist', 'core', entry.module);
  if (!existsSync(validator)) {
    process.stderr.write(`${relative(repo, validator)} is missing; run "npm run build" first, then run this again.\n`);
    process.exit(2);
  }
  const { $schema, ...rest } = (await import(pathToFileURL(validator).href))[entry.make]();
  const schema = { $schema, title: entry.title, description: entry.description, ...rest };
  outputs.push({ target: join(repo, 'schemas', entry.target), text: JSON.stringify(schema, null, 2) + '\n' });
}

const mode = process.argv[2];
if (mode === '--stdout') {
  for (const { text } of outputs) process.stdout.write(text);
} else if (mode === '--check') {
  for (const { target, text } of outputs) {
    const current = existsSync(target) ? readFileSync(target, 'utf8') : null;
    if (current !== text) {
      process.stderr.write(`${relative(repo, target)} is out of date; run "node scripts/generate-config-schema.mjs" and commit the result.\n`);
      process.exit(1);
    }
  }
} else if (mode === undefined) {
  for (const { target, text } of outputs) {
    writeFileSync(target, text);
    process.stdout.write(`wrote ${relative(repo, target)}\n`);
  }
} else {
  process.stderr.write(`unknown option "${mode}"; use no option to write the file, --check to compare, or --stdout to print.\n`);
  process.exit(2);
}
