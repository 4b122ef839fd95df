import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoWorkspace, readClaim } from '../helpers/claims.js';
import { CLI, cleanEnv, REPO, tempProject, type TempProject } from '../helpers/project.js';

/** Printed by the check on its stdout: were it to reach the server's stdout, the protocol would break. */
const MARKER = 'CHECK-OUTPUT-ON-STDOUT';

const CHECK_SCRIPT = `import { readFileSync } from 'node:fs';
console.log('${MARKER}');
const bad = readFileSync('src/a.txt', 'utf8').includes('bad');
if (bad) console.error('assertion failed: src/a.txt says bad');
process.exit(bad ? 1 : 0);
`;

const CONFIG = JSON.stringify({
  schema: 1,
  checks: [
    { name: 'unit', kind: 'test', command: ['node', 'check.mjs'] },
    { name: 'lint', kind: 'lint', command: ['node', '-e', 'process.exit(0)'] },
  ],
});

/** The same environment the CLI runs with, so that both see the same context. */
function serverEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(cleanEnv()).filter((pair): pair is [string, string] => pair[1] !== undefined));
}

interface Connection {
  client: Client;
  stderr: () => string;
  /** Protocol errors the client saw, such as a line on stdout that is not JSON-RPC. */
  errors: Error[];
}

async function connect(cwd: string, args: string[] = []): Promise<Connection> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', ...args], cwd, env: serverEnv(), stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'vouch-test', version: '0' });
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  return { client, stderr: () => stderr, errors };
}

/** The repo's JSON Schemas for --json output: the full contract, stricter than the tools' outputSchemas. */
function contractValidator() {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/);
  for (const name of ['status', 'run', 'explain', 'explain-inputs', 'log']) {
    ajv.addSchema(JSON.parse(readFileSync(join(REPO, 'schemas', `${name}.schema.json`), 'utf8')), `${name}.schema.json`);
  }
  return (name: string, value: unknown) => {
    const validate = ajv.getSchema(`${name}.schema.json`);
    if (!validate) throw new Error(`${name}.schema.json did not compile`);
    expect(validate(value) ? null : ajv.errorsText(validate.errors), `${name}.schema.json rejected ${JSON.stringify(value)}`).toBeNull();
  };
}

const expectContract = contractValidator();

function text(result: CallToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
}

describe('vouch mcp, driven by the SDK stdio client', () => {
  let project: TempProject;
  let server: Connection;

  /** Calls a tool that must answer; the client has already checked structuredContent against the tool's outputSchema. */
  async function call(name: string, args: Record<string, unknown>, contract = name): Promise<{ structured: any; text: string }> {
    const result = (await server.client.callTool({ name, arguments: args })) as CallToolResult;
    expect(result.isError, `${name} failed: ${text(result)}\nstderr: ${server.stderr()}`).toBeFalsy();
    expect(result.content).toHaveLength(1);
    expectContract(contract, result.structuredContent);
    return { structured: result.structuredContent, text: text(result) };
  }

  async function refused(name: string, args: Record<string, unknown>): Promise<string> {
    const result = (await server.client.callTool({ name, arguments: args })) as CallToolResult;
    expect(result.isError, `${name} should have been refused: ${JSON.stringify(result)}`).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    return text(result);
  }

  beforeAll(async () => {
    project = tempProject('mcp', { '.gitignore': 'node_modules/\n', 'check.mjs': CHECK_SCRIPT, 'src/a.txt': 'ok\n', 'vouch.config.json': CONFIG });
    server = await connect(project.root);
  });
  afterAll(async () => {
    await server?.client.close();
    project?.remove();
  });

  it('initialize: names itself and offers tools', () => {
    expect(server.client.getServerVersion()?.name).toBe('vouch');
    expect(server.client.getServerCapabilities()?.tools).toBeDefined();
  });

  it('tools/list: six tools, each with an outputSchema; all but run and prove are read-only', async () => {
    const { tools } = await server.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['explain', 'inputs', 'log', 'prove', 'run', 'status']);
    for (const tool of tools) {
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(tool.name !== 'run' && tool.name !== 'prove');
      expect(tool.description, tool.name).toBeTruthy();
    }
    const run = tools.find((tool) => tool.name === 'run');
    expect(run?.inputSchema.required).toEqual(['checks']);
  });

  it('status before any run: UNVERIFIED never-run, as the CLI says', async () => {
    const { structured, text } = await call('status', {});
    const cli = project.json(['status']);
    expect(structured.checks).toEqual(cli.checks);
    expect(structured).toMatchObject({ schema: 1, root: cli.root, config_path: cli.config_path });
    expect(structured.checks.map((c: any) => [c.name, c.freshness, c.reasons[0].code])).toEqual([
      ['unit', 'UNVERIFIED', 'never-run'],
      ['lint', 'UNVERIFIED', 'never-run'],
    ]);
    expect(text).toContain('unit: UNVERIFIED');
  });

  it("run: records receipts; the check's stdout stays off the protocol and goes to the log", async () => {
    const { structured, text } = await call('run', { checks: ['unit', 'lint'] });
    expect(structured).toMatchObject({ exit_code: 0, runs: [{ name: 'unit', action: 'ran', receipt: { result: 'PASS' } }, { name: 'lint', action: 'ran' }] });
    expect(text).toMatch(/^unit PASS \(exit 0\)/);
    expect(text).not.toContain(MARKER);
    expect(readFileSync(structured.runs[0].receipt.log_path, 'utf8')).toContain(MARKER);
    expect(server.stderr()).not.toContain(MARKER);
    expect(server.errors).toEqual([]);
  });

  it('run reports progress to a client that asks for it; the last check\'s end is in the result, not in a notification', async () => {
    const progress: string[] = [];
    const result = (await server.client.callTool({ name: 'run', arguments: { checks: ['unit', 'lint'] } }, undefined, {
      onprogress: (p) => progress.push(`${p.progress}/${p.total} ${p.message}`),
      resetTimeoutOnProgress: true,
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    // A notification read in the same chunk as the result reaches the SDK's client too late.
    expect(progress).toEqual([expect.stringMatching(/^0\/2 running unit \(run /), '1/2 unit PASS', expect.stringMatching(/^1\/2 running lint \(run /)]);
    expect(server.errors).toEqual([]);
  });

  it('status after the run: CURRENT PASS reusable, equal to the CLI answer', async () => {
    const { structured } = await call('status', { checks: ['unit'] });
    expect(structured.checks).toEqual(project.json(['status', 'unit']).checks);
    expect(structured.checks[0]).toMatchObject({ name: 'unit', freshness: 'CURRENT', result: 'PASS', reuse_eligible: true });
  });

  it('run with if_due skips a current check', async () => {
    const before = project.json(['log']).receipts.length;
    const { structured, text } = await call('run', { checks: ['unit'], if_due: true });
    expect(structured.runs).toEqual([expect.objectContaining({ name: 'unit', action: 'skipped', exit_code: 0, receipt: null })]);
    expect(structured.runs[0].status).toMatchObject({ freshness: 'CURRENT', reuse_eligible: true });
    expect(text).toContain('unit skipped: CURRENT PASS');
    expect(project.json(['log']).receipts).toHaveLength(before);
    // The skip carries what the run said: its summary, and its stored output byte for byte (the marker the check printed).
    const receipt = project.json(['log', 'unit']).receipts[0];
    const stored = readFileSync(receipt.log_path, 'utf8');
    expect(structured.runs[0].summary).toEqual({ line: expect.stringContaining(`check "unit" PASSED in run ${receipt.run_id}`), counts: [], saved_ms: expect.any(Number) });
    expect(structured.runs[0].summary.saved_ms).toBeLessThanOrEqual(receipt.duration_ms);
    expect(structured.runs[0].output).toMatchObject({ part: 'the last 40 lines', notes: [], omitted_lines: 0 });
    expect(structured.runs[0].output.text).toBe(stored.split(/(?<=\n)/).slice(-40).join(''));
    expect(structured.runs[0].output.text).toContain(MARKER);
    expect(text).toContain(`  check "unit" PASSED in run ${receipt.run_id}`);
    expect(text).toContain(`  | ${MARKER}`);
  });

  it('explain of a stale check names the changed file, as the CLI does', async () => {
    project.write('src/a.txt', 'changed\n');
    const { structured, text } = await call('explain', { check: 'unit' });
    expect(structured).toEqual(project.json(['explain', 'unit']));
    expect(structured.check.freshness).toBe('STALE');
    expect(structured.input_changes).toEqual([expect.objectContaining({ change: 'modified', path: 'src/a.txt', origin: 'source' })]);
    expect(text).toContain('unit: STALE');
    expect(text).toContain('modified src/a.txt');
  });

  it('inputs: what the receipt depends on, exactly as explain --inputs --json prints it, counted in the text', async () => {
    const { structured, text } = await call('inputs', { check: 'unit' }, 'explain-inputs');
    expect(structured).toEqual(project.json(['explain', 'unit', '--inputs']));
    expect(structured).toMatchObject({ check: 'unit', mode: 'declared', receipt: expect.objectContaining({ run_id: expect.any(String) }) });
    const source = structured.groups.find((group: { kind: string }) => group.kind === 'source');
    expect(source.paths).toContain('src/a.txt');
    expect(text).toMatch(/^unit: receipt \S+ \((PASS|FAIL)\), inputs as declared$/m);
    expect(text).toContain(`${source.count} source file`);
    expect(await refused('inputs', { check: 'nope' })).toContain('check: no check named "nope"; checks: unit, lint');
  });

  it('run of a failing check: an answer, not a tool error, with the end of its output in the text', async () => {
    project.write('src/a.txt', 'bad\n');
    const { structured, text } = await call('run', { checks: ['unit'] });
    expect(structured).toMatchObject({ exit_code: 1, runs: [{ action: 'ran', exit_code: 1, receipt: { result: 'FAIL' } }] });
    expect(text).toContain('assertion failed: src/a.txt says bad');
    expect(text).toContain(structured.runs[0].receipt.log_path);
    expect(text).toMatch(/exit code 1$/);
  });

  it('log: newest first, equal to the CLI answer, limit and check honoured', async () => {
    const all = await call('log', {});
    expect(all.structured).toEqual(project.json(['log']));
    expect(all.structured.receipts.map((r: any) => [r.check, r.result])).toEqual([
      ['unit', 'FAIL'],
      ['lint', 'PASS'],
      ['unit', 'PASS'],
      ['lint', 'PASS'],
      ['unit', 'PASS'],
    ]);
    const one = await call('log', { check: 'unit', limit: 1 });
    expect(one.structured).toEqual(project.json(['log', 'unit', '--limit', '1']));
    expect(one.text).toMatch(/^unit FAIL \(exit 1\)/);
  });

  it('refuses an unknown check, naming the member and the configured checks', async () => {
    expect(await refused('status', { checks: ['unit', 'x'] })).toContain('checks[1]: no check named "x"; checks: unit, lint');
    expect(await refused('explain', { check: 'nope' })).toContain('check: no check named "nope"; checks: unit, lint');
    expect(await refused('log', { check: 'nope' })).toContain('check: no check named "nope"');
  });

  it('run never runs anything but a configured check', async () => {
    const before = project.json(['log']).receipts.length;
    const command = 'node -e "require(\'fs\').writeFileSync(\'pwned\', \'\')"';
    expect(await refused('run', { checks: ['lint', command] })).toContain(`checks[1]: no check named "${command}"; checks: unit, lint`);
    expect(await refused('run', { checks: [] })).toContain('checks: name at least one check');
    // Nothing ran: not the configured check before the bad name, and not the command.
    expect(project.json(['log']).receipts).toHaveLength(before);
    expect(() => readFileSync(join(project.root, 'pwned'))).toThrow();
  });

  it('nothing but protocol messages came over stdout, all along', () => {
    expect(server.errors).toEqual([]);
  });

  it('refuses malformed input, naming the member', async () => {
    expect(await refused('log', { limit: 0 })).toContain('limit');
    expect(await refused('run', { checks: 'unit' })).toContain('checks');
  });
});

describe('vouch mcp without a config', () => {
  it('starts, and every tool says how to fix it', async () => {
    const empty = tempProject('mcp-empty', {}, { git: false });
    const server = await connect(empty.root);
    try {
      const result = (await server.client.callTool({ name: 'status', arguments: {} })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/^config-not-found: no vouch\.config\.json in .* run "vouch init"/);
      const run = (await server.client.callTool({ name: 'run', arguments: { checks: ['test'] } })) as CallToolResult;
      expect(run.isError).toBe(true);
      expect(text(run)).toContain('config-not-found');
    } finally {
      await server.client.close();
      empty.remove();
    }
  });

  it('an invalid config: the error names the JSON path', async () => {
    const broken = tempProject('mcp-broken', { 'vouch.config.json': JSON.stringify({ schema: 1, checks: [{ name: 'a', kind: 'nope', command: ['node'] }] }) }, { git: false });
    const server = await connect(broken.root);
    try {
      const result = (await server.client.callTool({ name: 'log', arguments: {} })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/^config-invalid: .*checks\[0\]\.kind/s);
    } finally {
      await server.client.close();
      broken.remove();
    }
  });

  it('--config names the project from anywhere', async () => {
    const elsewhere = tempProject('mcp-config', { 'vouch.config.json': CONFIG, 'check.mjs': CHECK_SCRIPT, 'src/a.txt': 'ok\n' }, { git: false });
    const empty = tempProject('mcp-cwd', {}, { git: false });
    const server = await connect(empty.root, ['--config', join(elsewhere.root, 'vouch.config.json')]);
    try {
      const result = (await server.client.callTool({ name: 'status', arguments: {} })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect((result.structuredContent as any).root).toBe(elsewhere.root);
    } finally {
      await server.client.close();
      elsewhere.remove();
      empty.remove();
    }
  });
});

describe('vouch mcp prove, on the bundled example', () => {
  let app: TempProject;
  let server: Connection;
  const validateProve = (() => {
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
    const validate = ajv.compile(JSON.parse(readFileSync(join(REPO, 'schemas', 'prove.schema.json'), 'utf8')));
    return (value: unknown) => expect(validate(value) ? null : ajv.errorsText(validate.errors)).toBeNull();
  })();
  const claimInput = (name: string) => {
    const { $schema, ...claim } = readClaim(app, name);
    expect($schema).toBeDefined();
    return claim;
  };

  beforeAll(async () => {
    app = demoWorkspace('mcp-prove');
    server = await connect(app.root);
  });
  afterAll(async () => {
    await server?.client.close();
    app?.remove();
  });

  it('lists prove with its input members and an outputSchema', async () => {
    const { tools } = await server.client.listTools();
    const prove = tools.find((tool) => tool.name === 'prove');
    expect(prove?.inputSchema.required).toEqual(['case', 'control']);
    expect(Object.keys(prove?.inputSchema.properties ?? {}).sort()).toEqual(['case', 'control', 'project']);
    expect(prove?.outputSchema?.type).toBe('object');
  });

  it('mints the same receipt as the CLI, and ends its text with it; the second prove is warm', async () => {
    const first = (await server.client.callTool({ name: 'prove', arguments: claimInput('discount-cap') })) as CallToolResult;
    expect(first.isError, text(first)).toBeFalsy();
    const report = first.structuredContent as any;
    validateProve(report);
    expect(report.receipt).toMatch(/^vouch-claim:[0-9a-f]{64}:runtime:/);
    expect(text(first).split('\n').at(-1)).toBe(`receipt ${report.receipt}`);
    const cli = app.json(['prove', 'claims/discount-cap.json']);
    expect(cli.receipt).toBe(report.receipt);
    const second = (await server.client.callTool({ name: 'prove', arguments: claimInput('discount-cap') })) as CallToolResult;
    expect((second.structuredContent as any).cold).toBe(false);
    expect((second.structuredContent as any).receipt).toBe(report.receipt);
  });

  it('a control that breaks at the wrong stage is an answer with no receipt, not a tool error', async () => {
    const result = (await server.client.callTool({ name: 'prove', arguments: claimInput('wrong-stage') })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as any).receipt).toBeNull();
    expect(text(result).split('\n').at(-1)).toBe('no receipt');
    expect(text(result)).toContain('why: the control also breaks at the type stage');
  });

  it('refused input names the member it refused', async () => {
    const badStage = claimInput('discount-cap');
    badStage.control.stage = 'compile';
    const typed = (await server.client.callTool({ name: 'prove', arguments: badStage })) as CallToolResult;
    expect(typed.isError).toBe(true);
    expect(text(typed)).toMatch(/control[.,"\s]*stage/);

    const hostile = claimInput('discount-cap');
    hostile.case.drafts[0].path = '../../etc/passwd';
    const refused = (await server.client.callTool({ name: 'prove', arguments: hostile })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(text(refused)).toBe('[claimant] refused: case.drafts[0].path leaves the workspace: "../../etc/passwd"');

    const same = claimInput('discount-cap');
    same.control.drafts = same.case.drafts;
    const identical = (await server.client.callTool({ name: 'prove', arguments: same })) as CallToolResult;
    expect(text(identical)).toMatch(/^\[claimant\] refused: control\.drafts are byte-identical to case\.drafts/);
  });

  it('nothing but protocol messages came over stdout, and the tree is untouched', () => {
    expect(server.errors).toEqual([]);
    expect(app.git('status', '--porcelain', '--ignored')).toBe('');
  });
});
