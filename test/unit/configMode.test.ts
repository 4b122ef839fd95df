import { describe, expect, it } from 'vitest';
import { configJsonSchema, parseConfig } from '../../src/core/configSchema.js';
import { isVouchError } from '../../src/core/errors.js';

/* A check's "mode" in vouch.config.json: what its receipts are bound to (docs/config.md, "Evidence: declared or traced"). */

const configWith = (mode: unknown) => JSON.stringify({ schema: 1, checks: [{ name: 'test', kind: 'test', command: ['node', 'check.mjs'], mode }] });

function refusal(text: string): { code: string; message: string } {
  try {
    parseConfig(text, 'vouch.config.json');
  } catch (error) {
    if (isVouchError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('the config was accepted');
}

describe('a check\'s mode', () => {
  it('is "declared" or "traced", and may be left out', () => {
    expect(parseConfig(configWith('traced'), 'vouch.config.json').checks[0]?.mode).toBe('traced');
    expect(parseConfig(configWith('declared'), 'vouch.config.json').checks[0]?.mode).toBe('declared');
    const omitted = JSON.stringify({ schema: 1, checks: [{ name: 'test', kind: 'test', command: ['node', 'check.mjs'] }] });
    expect(parseConfig(omitted, 'vouch.config.json').checks[0]).not.toHaveProperty('mode');
  });

  it('anything else is refused, naming the field, the two modes, the default and where they are explained', () => {
    for (const wrong of ['trace', 'Traced', 'strace', true, 1, null]) {
      const { code, message } = refusal(configWith(wrong));
      expect(code).toBe('config-invalid');
      expect(message).toContain('$.checks[0].mode: expected one of "declared", "traced"');
      expect(message).toContain('"declared" (the default, also when "mode" is left out)');
      expect(message).toContain('"Evidence: declared or traced" in docs/config.md');
    }
  });

  it('the hint belongs to mode alone: another enum field is refused as before', () => {
    const { message } = refusal(JSON.stringify({ schema: 1, checks: [{ name: 'test', kind: 'tests', command: ['x'] }] }));
    expect(message).toContain('$.checks[0].kind: expected one of');
    expect(message).not.toContain('Evidence');
  });

  it('is in the generated JSON Schema, with its two values and a description', () => {
    const schema = configJsonSchema() as { properties: { checks: { items: { properties: Record<string, { enum?: string[]; description?: string }>; required: string[] } } } };
    const mode = schema.properties.checks.items.properties.mode;
    expect(mode?.enum).toEqual(['declared', 'traced']);
    expect(mode?.description).toMatch(/traced.*strace/);
    expect(schema.properties.checks.items.required).not.toContain('mode');
  });
});
