import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLAIM_ERROR_CODES } from '../../src/core/claimError.js';
import { VOUCH_ERROR_CODES } from '../../src/core/errors.js';
import { documentSchemaFile, JSON_DOCUMENTS } from '../../src/core/json/documents.js';
import { REASON_CODES } from '../../src/core/reason.js';
import { explainOutput, inputsOutput, logOutput, proveOutput, runOutput, statusOutput } from '../../src/mcp/outputSchemas.js';
import { REPO } from '../helpers/project.js';

/*
 * Each --json document is defined once, in src/core/json/. These tests run in
 * process, with no build: the committed schemas/ are what the definitions
 * generate, the docs' examples are what they accept, and the code that prints
 * the documents takes only their types.
 */

const docs = readFileSync(join(REPO, 'docs', 'json.md'), 'utf8');

/** The examples docs/json.md shows for each document, by name. */
/** The first example of each document; `also` collects the further ones (`<!-- example: NAME (what) -->`). */
function docExamples(also: unknown[][] = []): Map<string, unknown> {
  const examples = new Map<string, unknown>();
  for (const [, name, text] of docs.matchAll(/<!-- (?:agent-)?example: ([\w-]+)(?: \([\w -]+\))? -->\n```json\n([\s\S]*?)\n```/g)) {
    if (examples.has(name as string)) also.push([name, JSON.parse(text as string)]);
    else examples.set(name as string, JSON.parse(text as string));
  }
  return examples;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('the JSON documents, defined once in src/core/json', () => {
  it('schemas/NAME.schema.json is exactly what the definition generates, for every document', () => {
    for (const document of JSON_DOCUMENTS) {
      const committed = readFileSync(join(REPO, 'schemas', `${document.name}.schema.json`), 'utf8');
      expect(committed, `schemas/${document.name}.schema.json is out of date: run "npm run build && npm run schema:generate"`).toBe(
        JSON.stringify(documentSchemaFile(document), null, 2) + '\n',
      );
    }
  });

  it('every output schema in schemas/ has a definition (config and claim are inputs, generated from their validators)', () => {
    const defined = JSON_DOCUMENTS.map((document) => `${document.name}.schema.json`);
    const inputs = ['config.schema.json', 'claim.schema.json'];
    expect(readdirSync(join(REPO, 'schemas')).sort()).toEqual([...defined, ...inputs].sort());
  });

  it("every example in docs/json.md is accepted by its document's zod definition", () => {
    const also: unknown[][] = [];
    const examples = docExamples(also);
    expect([...examples.keys()].sort()).toEqual(JSON_DOCUMENTS.map((document) => document.name).sort());
    for (const document of JSON_DOCUMENTS) {
      const parsed = document.schema.safeParse(examples.get(document.name));
      expect(parsed.error?.issues, document.name).toBeUndefined();
    }
    for (const [name, example] of also) {
      const parsed = JSON_DOCUMENTS.find((document) => document.name === name)?.schema.safeParse(example);
      expect(parsed?.error?.issues, `${name as string} (a further example)`).toBeUndefined();
      expect(parsed, `${name as string}: no such document`).toBeDefined();
    }
  });

  it('the definitions reject a broken document, so the test above can fail', () => {
    const status = structuredClone(docExamples().get('status')) as { checks: { freshness: string }[] };
    status.checks[0]!.freshness = 'FRESH';
    expect(JSON_DOCUMENTS.find((document) => document.name === 'status')!.schema.safeParse(status).success).toBe(false);
    const extra = { ...(docExamples().get('stop') as object), stoppedAt: 'now' };
    expect(JSON_DOCUMENTS.find((document) => document.name === 'stop')!.schema.safeParse(extra).success).toBe(false);
  });

  it("the MCP tools' outputSchemas are the documents' own definitions", () => {
    const named = (name: string) => JSON_DOCUMENTS.find((document) => document.name === name)!.schema;
    expect(statusOutput).toBe(named('status'));
    expect(explainOutput).toBe(named('explain'));
    expect(inputsOutput).toBe(named('explain-inputs'));
    expect(logOutput).toBe(named('log'));
    expect(runOutput).toBe(named('run'));
    expect(proveOutput).toBe(named('prove'));
  });

  it('code outside src/core/json and src/mcp imports the definitions as types only, so zod never loads on a command path', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(join(REPO, 'src'))) {
      const where = relative(REPO, file);
      if (where.startsWith('src/core/json/') || where.startsWith('src/mcp/')) continue;
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        if (/from '[./]*core\/json\//.test(line) && !line.startsWith('import type ')) offenders.push(`${where}: ${line}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});

describe('error codes', () => {
  const errorSchema = JSON.parse(readFileSync(join(REPO, 'schemas', 'error.schema.json'), 'utf8'));
  const branches: { properties: { code: { enum: string[] } } }[] = errorSchema.properties.error.oneOf;

  it('the error schema allows exactly the VouchErrorCode list, claim codes only with an origin', () => {
    const [plain, claim] = branches.map((branch) => branch.properties.code.enum);
    expect([...plain!, ...claim!].sort()).toEqual([...VOUCH_ERROR_CODES].sort());
    expect(claim).toEqual([...CLAIM_ERROR_CODES]);
    expect(new Set(VOUCH_ERROR_CODES).size).toBe(VOUCH_ERROR_CODES.length);
  });

  it('docs/json.md explains every error code a user can meet', () => {
    // state-newer is thrown and caught inside vouch: no user meets it.
    const missing = VOUCH_ERROR_CODES.filter((code) => code !== 'state-newer' && !docs.includes(`| \`${code}\` |`));
    expect(missing).toEqual([]);
  });

  it('docs/json.md explains every reason code', () => {
    expect(REASON_CODES.filter((code) => !docs.includes(`\`${code}\``))).toEqual([]);
  });
});
