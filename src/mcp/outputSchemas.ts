import { explainDocument } from '../core/json/explain.js';
import { explainInputsDocument } from '../core/json/explainInputs.js';
import { logDocument } from '../core/json/log.js';
import { proveDocument } from '../core/json/prove.js';
import { runDocument } from '../core/json/run.js';
import { statusDocument } from '../core/json/status.js';

/**
 * The tools' outputSchemas. Each tool's structuredContent is exactly the
 * document `vouch COMMAND --json` prints (docs/json.md), so each outputSchema
 * is that document's one definition in src/core/json/, the same one
 * schemas/*.schema.json is generated from. The SDK takes zod and lists it as
 * JSON Schema; test/e2e/mcp.test.ts checks real tool output against both.
 */
export const statusOutput = statusDocument;
export const explainOutput = explainDocument;
export const inputsOutput = explainInputsDocument;
export const logOutput = logDocument;
export const runOutput = runDocument;
export const proveOutput = proveDocument;
