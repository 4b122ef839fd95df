#!/usr/bin/env node
// Writes every schemas/*.schema.json from the code: config and claim from
// their validators, so the schemas editors use and the checks vouch runs cannot
// disagree; and each --json output document from its one definition in
// src/core/json/, which also types the serializers and the MCP tools' outputs.
// Reads the built modules: run "npm run build" first.
//
//   node scripts/generate-config-schema.mjs            write the files
//   node scripts/generate-config-schema.mjs --check    exit 1 if a file is out of date
//   node scripts/generate-config-schema.mjs --stdout   print them instead
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

async function built(module) {
  const path = join(repo, 'dist', 'core', module);
  if (!existsSync(path)) {
    process.stderr.write(`${relative(repo, path)} is missing; run "npm run build" first, then run this again.\n`);
    process.exit(2);
  }
  return import(pathToFileURL(path).href);
}

const outputs = [];
const add = (target, title, description, { $schema, ...rest }) => {
  // title and description lead, after $schema, whatever the generator put there.
  const schema = { $schema, title, description };
  for (const [key, value] of Object.entries(rest)) if (key !== 'title' && key !== 'description') schema[key] = value;
  outputs.push({ target: join(repo, 'schemas', target), text: JSON.stringify(schema, null, 2) + '\n' });
};
for (const entry of SCHEMAS) add(entry.target, entry.title, entry.description, (await built(entry.module))[entry.make]());
const { JSON_DOCUMENTS, documentSchemaFile } = await built('json/documents.js');
for (const document of JSON_DOCUMENTS) add(`${document.name}.schema.json`, document.title, document.description, documentSchemaFile(document));

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
  process.stderr.write(`unknown option "${mode}"; use no option to write the files, --check to compare, or --stdout to print.\n`);
  process.exit(2);
}
