import { createInterface } from 'node:readline';
import { AGENT_HOSTS, HOST_LAYOUTS, isAgentHost } from '../../agents/setup/host.js';
import type { DoctorReport } from '../../agents/setup/doctor.js';
import type { AgentPlan } from '../../agents/setup/setup.js';
import type { FileChange } from '../../agents/setup/changePlan.js';
import type { Conflict } from '../../agents/setup/conflicts.js';
import { hookCommand } from '../../agents/setup/hookEntries.js';
import { shellQuote } from '../../agents/shellQuote.js';
import { unifiedDiff } from '../../agents/setup/unifiedDiff.js';
import type { VouchCommand } from '../../agents/setup/vouchCommand.js';
import { VouchError } from '../../core/errors.js';
import type { AgentDoctorDocument } from '../../core/json/agentDoctor.js';
import type { AgentRemoveDocument } from '../../core/json/agentRemove.js';
import type { AgentSetupDocument, CommandJson, ConflictJson } from '../../core/json/agentSetup.js';
import { writeJson, type CliIo } from '../io.js';
import { parseCommand } from '../options.js';
import { VERSION } from '../version.js';

export const help = `Usage: vouch agent setup claude|codex [--dry-run | --apply] [--shadow | --enforce] [--no-mcp] [--json]
       vouch agent remove claude|codex [--dry-run | --apply] [--json]
       vouch agent doctor [claude|codex] [--json]

Sets up, removes or checks what vouch gives a coding agent, so that it asks
vouch before rerunning a check (docs/agent-setup.md):

  claude  hooks in .claude/settings.local.json (PreToolUse on Bash, SessionStart),
          a short managed section in CLAUDE.md, a skill in .claude/skills/vouch/,
          and vouch's MCP server ("vouch mcp") as mcpServers.vouch in .mcp.json
  codex   hooks in .codex/hooks.json, a short managed section in AGENTS.md,
          a skill in .agents/skills/vouch/, and vouch's MCP server as a marked
          [mcp_servers.vouch] table in .codex/config.toml (Codex runs the hooks
          once you trust them in /hooks)

What setup writes is recorded in the state dir (.vouch/agent-HOST.json), so a
later setup updates its own content in place. Content of vouch's that you
edited is never overwritten or removed: it is reported, with what to do.
Text outside vouch's markers, and settings, hooks and MCP servers of your
own, are kept; a server named "vouch" that vouch did not write is reported
as a conflict and left as is.

In a terminal, setup and remove show the changes and ask. Elsewhere (an
agent, a script) they need --apply; --dry-run shows the changes and writes
nothing. doctor only reads.

Options:
  --dry-run          show what would change; write nothing
  --apply            write without asking
  --no-mcp           setup: do not register the MCP server (one registered
                     before stays, and remove still takes it out)
  --shadow           setup: shadow mode. The hooks decide and record every
                     command as usual, but let it run as typed; "vouch savings"
                     shows what they would have saved (docs/hooks.md)
  --enforce          setup: the hooks deny and rewrite (the default; switches
                     shadow mode off). Without either, setup keeps the mode
                     the hooks are in
  --json             machine-readable (docs/json.md, "vouch agent")
  --config FILE      use this config
  --state-dir DIR    where receipts and the setup record are kept
  --root DIR         the project root, instead of the config's "root"

Examples:
  vouch agent setup claude
  vouch agent setup codex --dry-run
  vouch agent setup codex --apply --no-mcp
  vouch agent setup claude --apply --json
  vouch agent setup claude --apply --shadow    # record only, then: vouch savings
  vouch agent setup claude --apply --enforce
  vouch agent remove claude --apply
  vouch agent doctor

Exit codes: 0 done (or a dry run, or nothing to do, or you said no);
1 some of vouch's content was edited and was left as is (the rest was done);
2 a usage or config error.
`;

const OPERATIONS = ['setup', 'remove', 'doctor'] as const;

export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand('agent', argv, {
    'dry-run': { type: 'boolean', default: false },
    apply: { type: 'boolean', default: false },
    'no-mcp': { type: 'boolean', default: false },
    shadow: { type: 'boolean', default: false },
    enforce: { type: 'boolean', default: false },
  });
  const [operation, hostName, ...extra] = positionals;
  if (operation === undefined || !(OPERATIONS as readonly string[]).includes(operation)) {
    throw new VouchError('usage', `${operation === undefined ? 'no operation given' : `unknown operation "${operation}"`}; use one of: vouch agent setup claude|codex, vouch agent remove claude|codex, vouch agent doctor. See "vouch agent --help"`);
  }
  if (extra.length > 0) throw new VouchError('usage', `vouch agent ${operation} takes one agent, but got ${positionals.slice(1).map((p) => `"${p}"`).join(' ')}. See "vouch agent --help"`);
  if (hostName !== undefined && !isAgentHost(hostName)) {
    throw new VouchError('usage', `unknown agent "${hostName}"; use one of: ${AGENT_HOSTS.join(', ')}. See "vouch agent --help"`);
  }
  const base = {
    cwd: io.cwd,
    config: values.config,
    stateDir: values['state-dir'],
    root: values.root,
    env: io.env,
    entry: process.argv[1] ?? '',
    node: process.execPath,
    version: VERSION,
  };
  if ((values.shadow || values.enforce) && operation !== 'setup') throw new VouchError('usage', `--shadow and --enforce are options of setup, which writes the hooks in that mode; vouch agent ${operation} takes neither`);
  if (values.shadow && values.enforce) throw new VouchError('usage', '--shadow and --enforce contradict each other; pass one');
  if (values['no-mcp'] && operation !== 'setup') throw new VouchError('usage', `--no-mcp is an option of setup; vouch agent ${operation} takes it out only if setup added it. Leave --no-mcp out`);
  if (operation === 'doctor') {
    if (values['dry-run'] || values.apply) throw new VouchError('usage', 'vouch agent doctor only reads, so it takes neither --dry-run nor --apply; leave them out');
    const { agentDoctor } = await import('../../agents/setup/doctor.js');
    const report = await agentDoctor({ ...base, host: hostName ?? null });
    if (values.json) writeJson(io, doctorJson(report));
    else io.stdout.write(doctorText(report));
    return 0;
  }
  if (hostName === undefined) throw new VouchError('usage', `say which agent: vouch agent ${operation} claude, or vouch agent ${operation} codex`);
  if (values['dry-run'] && values.apply) throw new VouchError('usage', '--dry-run and --apply contradict each other; pass one');
  const interactive = !values['dry-run'] && !values.apply;
  if (interactive && (values.json || process.stdin.isTTY !== true)) {
    const why = values.json ? 'with --json it cannot ask' : 'it is not run in a terminal, so it cannot ask';
    throw new VouchError('usage', `vouch agent ${operation} ${hostName} writes files, and ${why}; pass --apply to write, or --dry-run to see the changes`);
  }
  const setup = await import('../../agents/setup/setup.js');
  const options = { ...base, host: hostName, mcp: !values['no-mcp'], ...(values.shadow ? { mode: 'shadow' as const } : values.enforce ? { mode: 'enforce' as const } : {}) };
  const plan = operation === 'setup' ? await setup.planAgentSetup(options) : await setup.planAgentRemove(options);
  const mode: 'apply' | 'dry-run' | 'interactive' = values['dry-run'] ? 'dry-run' : values.apply ? 'apply' : 'interactive';
  let applied = false;
  if (mode === 'apply') {
    setup.applyAgentPlan(plan);
    applied = true;
  } else if (mode === 'interactive') {
    io.stdout.write(planText(plan, 'preview'));
    if (plan.changes.length === 0) {
      // Only the record can change (intact content adopted, or refusals kept): bookkeeping in the state dir, not worth a question.
      setup.applyAgentPlan(plan);
      io.stdout.write('No file needs a change.\n');
      return exitCode(plan);
    }
    if (await ask(io, 'Apply these changes? [y/N] ')) {
      setup.applyAgentPlan(plan);
      applied = true;
      io.stdout.write(doneText(plan));
    } else io.stdout.write('Nothing was written.\n');
    return exitCode(plan);
  }
  if (values.json) writeJson(io, planJson(plan, mode, applied));
  else io.stdout.write(planText(plan, mode === 'dry-run' ? 'dry-run' : 'applied') + (applied ? doneText(plan) : dryRunText(plan)));
  return exitCode(plan);
}

function exitCode(plan: AgentPlan): number {
  return plan.items.some((item) => item.action === 'refused') ? 1 : 0;
}

async function ask(io: CliIo, question: string): Promise<boolean> {
  io.stdout.write(question);
  const readline = createInterface({ input: process.stdin });
  try {
    // End of input is a "no", not a hang.
    const answer = await new Promise<string>((resolve) => {
      readline.once('line', resolve);
      readline.once('close', () => resolve(''));
    });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    readline.close();
  }
}

function changeKind(change: FileChange): 'create' | 'modify' | 'delete' {
  return change.before === null ? 'create' : change.after === null ? 'delete' : 'modify';
}

function commandJson(command: VouchCommand): CommandJson {
  return {
    program: command.program,
    this_install: command.thisInstall,
    node: command.node,
    same_install: command.sameInstall,
    hook_client: command.hookClient,
    lookup: { shell: command.lookup.shell, found: command.lookup.found, resolved: command.lookup.resolved, error: command.lookup.error },
  };
}

function conflictJson(conflict: Conflict): ConflictJson {
  return { code: conflict.code, path: conflict.path, tool: conflict.tool, message: conflict.message };
}

function planJson(plan: AgentPlan, mode: 'apply' | 'dry-run', applied: boolean): AgentSetupDocument | AgentRemoveDocument {
  const common = {
    schema: 1 as const,
    operation: plan.operation,
    host: plan.host,
    root: plan.project.root,
    config_path: plan.project.configPath,
    record_path: plan.recordPath,
    mode,
    applied,
    items: plan.items.map((item) => ({ id: item.id, kind: item.kind, path: item.path, state: item.state, action: item.action, message: item.message })),
    files: plan.changes.map((change) => ({ path: change.path, change: changeKind(change), diff: unifiedDiff(change.path, change.before, change.after) })),
    refused: plan.items.filter((item) => item.action === 'refused').length,
    notes: plan.notes,
  };
  // Spelled again so that the type narrows; a key given again keeps its place in the JSON.
  if (plan.operation === 'remove') return { ...common, operation: plan.operation };
  if (!plan.command) throw new Error('unreachable: setup always resolves the command');
  const server = plan.items.some((item) => item.id === 'mcp' && item.action !== 'skipped') ? plan.server : null;
  return { ...common, operation: plan.operation, command: { ...commandJson(plan.command), hook_command: hookCommand(plan.command.hookProgram, plan.host, plan.mode), hook_mode: plan.mode, mcp_server: server }, conflicts: plan.conflicts.map(conflictJson) };
}

const ACTION_MARK: Record<string, string> = { create: '+', update: '~', unchanged: '=', refused: '!', skipped: ' ', remove: '-', none: ' ' };

function planText(plan: AgentPlan, when: 'preview' | 'dry-run' | 'applied'): string {
  const layout = HOST_LAYOUTS[plan.host];
  const lines: string[] = [];
  const verb = plan.operation === 'setup' ? 'Setting up' : 'Removing';
  lines.push(`${verb} vouch for ${layout.title} in ${plan.project.root}${when === 'dry-run' ? ' (dry run: nothing is written)' : ''}`);
  if (plan.operation === 'setup' && plan.command) {
    lines.push(`Hooks run: ${hookCommand(plan.command.hookProgram, plan.host, plan.mode)} (${plan.mode === 'shadow' ? 'shadow mode: decide and record, never deny or rewrite' : 'enforce mode'})`);
  }
  if (plan.operation === 'setup' && plan.server && plan.items.some((item) => item.id === 'mcp' && item.action !== 'skipped')) {
    lines.push(`MCP server runs: ${[plan.server.command, ...plan.server.args].map(shellQuote).join(' ')}`);
  }
  lines.push('');
  for (const item of plan.items) lines.push(`  ${ACTION_MARK[item.action] ?? ' '} ${item.message}`);
  if (plan.conflicts.length > 0) {
    lines.push('');
    lines.push('Conflicts:');
    for (const conflict of plan.conflicts) lines.push(`  ! ${conflict.message}`);
  }
  if (when !== 'applied' && plan.changes.length > 0) {
    lines.push('');
    for (const change of plan.changes) lines.push(unifiedDiff(change.path, change.before, change.after).trimEnd());
  }
  if (plan.notes.length > 0) {
    lines.push('');
    for (const note of plan.notes) lines.push(`Note: ${note}`);
  }
  lines.push('');
  return lines.join('\n');
}

function doneText(plan: AgentPlan): string {
  const refused = plan.items.filter((item) => item.action === 'refused').length;
  const wrote = plan.changes.length === 0 ? 'No file was changed' : `Wrote ${plan.changes.length} file${plan.changes.length === 1 ? '' : 's'}`;
  const record = plan.record.length > 0 ? `recorded in ${plan.recordPath}` : plan.hadRecord ? `removed the record ${plan.recordPath}` : 'nothing is recorded';
  const tail = refused > 0 ? ` ${refused} item${refused === 1 ? ' was' : 's were'} left as is (see "!" above).` : '';
  return `${wrote}; ${record}.${tail}\n`;
}

function dryRunText(plan: AgentPlan): string {
  return `Dry run: nothing was written. To write it: vouch agent ${plan.operation} ${plan.host} --apply\n`;
}

function doctorJson(report: DoctorReport): AgentDoctorDocument {
  const project = report.project;
  return {
    schema: 1 as const,
    root: project.root,
    config_path: project.configPath,
    state_dir: project.stateDir,
    config: { valid: project.checks !== null, checks: (project.checks ?? []).map((check) => check.name), error: project.configError },
    command: commandJson(report.command),
    observer: { ...report.observer },
    hosts: report.hosts.map((host) => ({
      host: host.host,
      record_path: host.recordPath,
      recorded: host.recorded,
      items: host.items.map((item) => ({ id: item.id, kind: item.kind, path: item.path, state: item.state, problem: item.problem })),
      hooks: host.hooks.map((hook) => ({ path: hook.path, event: hook.event, matcher: hook.matcher, command: hook.command, runs: hook.runs, same_install: hook.sameInstall })),
      mcp_server: { path: host.mcp.path, registered: host.mcp.registered, command: host.mcp.command, args: host.mcp.args },
      conflicts: host.conflicts.map(conflictJson),
      mode: host.mode,
    })),
    behavior_verified: false,
  };
}

function doctorText(report: DoctorReport): string {
  const { project, command, observer } = report;
  const lines: string[] = [];
  lines.push(`Project: ${project.root}`);
  lines.push(`Config: ${project.configPath}${project.checks ? ` (${project.checks.length} check${project.checks.length === 1 ? '' : 's'}: ${project.checks.map((check) => check.name).join(', ')})` : ` is not usable: ${project.configError?.message ?? ''}`}`);
  const lookup = command.lookup;
  const found = lookup.error ?? (lookup.found === null ? 'no vouch' : `${lookup.found}${lookup.resolved && lookup.resolved !== lookup.found ? ` -> ${lookup.resolved}` : ''}`);
  lines.push(`Login shell (${lookup.shell}) finds: ${found}`);
  lines.push(`This install: ${command.thisInstall}${command.sameInstall ? ' (the same)' : ' (not the one on PATH, so setup writes it by path)'}`);
  lines.push(`Hook client: ${command.hookClient ?? 'none built here, so each hook call starts Node ("npm run build:native" builds it, on Linux)'}`);
  lines.push(
    `Observer: ${
      !observer.running
        ? observer.error !== null
          ? `not running: ${observer.error}`
          : 'not running ("vouch start" starts one; hooks work without it)'
        : observer.reachable
          ? `pid ${observer.pid}, socket answers, ${observer.healthy ? 'healthy' : `unhealthy: ${observer.error ?? ''}`}`
          : `pid ${observer.pid}, socket ${observer.socket} does not answer: ${observer.error ?? ''}`
    }`,
  );
  for (const host of report.hosts) {
    lines.push('');
    lines.push(`${HOST_LAYOUTS[host.host].title} (${host.host}): ${host.recorded ? `set up, record ${host.recordPath}` : 'no setup record'}`);
    for (const item of host.items) lines.push(`  ${item.path}: ${item.state}${item.problem ? ` (${item.problem})` : ''}`);
    if (host.hooks.length === 0) lines.push(`  hooks: none installed ("vouch agent setup ${host.host}" installs them)`);
    else if (host.mode === 'shadow') lines.push(`  mode: shadow (decide and record, never deny or rewrite; "vouch savings" reports, "vouch agent setup ${host.host} --enforce" turns them on)`);
    else if (host.mode === 'enforce') lines.push('  mode: enforce');
    for (const hook of host.hooks) {
      const runs = hook.runs === null ? 'an install that cannot be found; run setup again' : hook.sameInstall ? 'this install' : `another install: ${hook.runs}`;
      lines.push(`  hook ${hook.event} [${hook.matcher}] in ${hook.path}: ${hook.command} (runs ${runs})`);
    }
    const mcp = host.mcp;
    const runs = mcp.command === null ? '' : ` (${[mcp.command, ...(mcp.args ?? [])].map(shellQuote).join(' ')})`;
    lines.push(mcp.registered ? `  MCP server "vouch" registered in ${mcp.path}${runs}` : `  MCP server: not registered in ${mcp.path} ("vouch agent setup ${host.host}" registers it)`);
    for (const conflict of host.conflicts) lines.push(`  ! ${conflict.message}`);
  }
  lines.push('');
  lines.push('Behavior verified: no. Intact files do not prove the agent follows them; watch a session (VOUCH_HOOK_LOG=FILE logs each hook decision).');
  return lines.join('\n') + '\n';
}
