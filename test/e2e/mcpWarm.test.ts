import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { demoWorkspace, readClaim } from '../helpers/claims.js';
import { CLI, cleanEnv, type TempProject } from '../helpers/project.js';

/**
 * A Vitest config that says when it starts loading, then waits for a gate file
 * before it finishes: warming the runtime stage cannot end until the test opens
 * the gate, so whatever the server answers before that, it answered while warming.
 */
function gatedConfig(marker: string, gate: string): string {
  return `// @ts-nocheck
import { existsSync, writeFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

writeFileSync(${JSON.stringify(marker)}, 'loading');
const until = Date.now() + 60_000;
while (!existsSync(${JSON.stringify(gate)}) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));

export default defineConfig({ test: { include: ['test/**/*.test.ts'] } });
`;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > 60_000) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function env(): Record<string, string> {
  return Object.fromEntries(Object.entries(cleanEnv()).filter((pair): pair is [string, string] => pair[1] !== undefined));
}

describe('vouch mcp answers the handshake before it warms the prover', () => {
  let app: TempProject | undefined;
  let client: Client | undefined;
  let signals: string | undefined;

  afterEach(async () => {
    await client?.close();
    app?.remove();
    if (signals !== undefined) rmSync(signals, { recursive: true, force: true });
  });

  it('initialize and tools/list are answered while warming waits; the first prove waits for it and says it was cold', async () => {
    app = demoWorkspace('mcp-warm');
    signals = mkdtempSync(join(tmpdir(), 'vouch-mcp-warm-'));
    const marker = join(signals, 'config-loading');
    const gate = join(signals, 'gate');
    app.write('vitest.config.ts', gatedConfig(marker, gate));
    const { $schema, ...claim } = readClaim(app, 'discount-cap');
    expect($schema).toBeDefined();

    const order: string[] = [];
    client = new Client({ name: 'vouch-test', version: '0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], cwd: app.root, env: env(), stderr: 'pipe' }));
    order.push('initialize');

    // Warming begins after the handshake, in the background, and is held in the Vitest config.
    await until(() => existsSync(marker), 'the server to start warming (the Vitest config to load)');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('prove');
    order.push('tools/list');

    const proved = client.callTool({ name: 'prove', arguments: claim }, undefined, { timeout: 120_000 }).then((result) => {
      order.push('prove');
      return result as CallToolResult;
    });
    // Another call is answered while the prove waits for the warming it needs.
    const log = (await client.callTool({ name: 'log', arguments: {} })) as CallToolResult;
    expect(log.isError).toBe(true); // no vouch.config.json here: an answer all the same
    order.push('log');
    expect(existsSync(gate)).toBe(false);
    expect(order).toEqual(['initialize', 'tools/list', 'log']);

    writeFileSync(gate, 'open');
    const first = await proved;
    expect(first.isError, JSON.stringify(first.content)).toBeFalsy();
    expect((first.structuredContent as any).receipt).toMatch(/^vouch-claim:[0-9a-f]{64}:runtime:/);
    // It waited for the warming under way, so it says it was cold.
    expect((first.structuredContent as any).cold).toBe(true);
    expect(order).toEqual(['initialize', 'tools/list', 'log', 'prove']);

    const second = (await client.callTool({ name: 'prove', arguments: claim }, undefined, { timeout: 120_000 })) as CallToolResult;
    expect((second.structuredContent as any).cold).toBe(false);
    expect((second.structuredContent as any).receipt).toBe((first.structuredContent as any).receipt);
  });

  it('--no-warm leaves the stages unloaded until the first prove', async () => {
    app = demoWorkspace('mcp-no-warm');
    signals = mkdtempSync(join(tmpdir(), 'vouch-mcp-warm-'));
    const marker = join(signals, 'config-loading');
    const gate = join(signals, 'gate');
    app.write('vitest.config.ts', gatedConfig(marker, gate));
    writeFileSync(gate, 'open');
    client = new Client({ name: 'vouch-test', version: '0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--no-warm'], cwd: app.root, env: env(), stderr: 'pipe' }));
    await client.listTools();
    // Give a background warming ample time to have reached the config, were there one.
    await client.callTool({ name: 'log', arguments: {} });
    await sleep(1500);
    expect(existsSync(marker)).toBe(false);
    const { $schema: _schema, ...claim } = readClaim(app, 'discount-cap');
    const first = (await client.callTool({ name: 'prove', arguments: claim }, undefined, { timeout: 120_000 })) as CallToolResult;
    expect((first.structuredContent as any).receipt).toMatch(/^vouch-claim:/);
    expect(existsSync(marker)).toBe(true);
  });
});
