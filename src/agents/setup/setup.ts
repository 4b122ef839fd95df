import { ensureStateDir } from '../../store/stateDir.js';
import { HOST_LAYOUTS, type AgentHost } from './host.js';
import { ignoredByGit } from './ignoredByGit.js';
import { agentProject, type AgentProject, type AgentProjectOptions } from './project.js';
import { deleteRecord, readRecord, recordPath, writeRecord, type RecordedItem } from './record.js';
import { applyChanges } from './applyChanges.js';
import { planRemove, planSetup, type FileChange, type ItemPlan } from './changePlan.js';
import { findConflicts, type Conflict } from './conflicts.js';
import type { HookMode } from '../../core/ledgerEntry.js';
import { desiredHookEntries } from './hookEntries.js';
import { installedHookMode } from './hookMode.js';
import { sectionText, skillText } from './instructions.js';
import { inspectItems, type Desired, type ItemId } from './managedItem.js';
import { desiredMcpServer, mcpServerConflict, type McpServerEntry } from './mcpServer.js';
import { resolveVouchCommand, type LookupFn, type VouchCommand } from './vouchCommand.js';

export interface AgentSetupOptions extends AgentProjectOptions {
  host: AgentHost;
  env: NodeJS.ProcessEnv;
  /** The running vouch's entry script and Node: what hooks run when the login shell's vouch is another. */
  entry: string;
  node: string;
  version: string;
  /** Replaces the login-shell lookup (tests). */
  lookup?: LookupFn;
  /** Setup registers vouch's MCP server unless this is false (`--no-mcp`). */
  mcp?: boolean;
  /** The hooks' mode (`--shadow`, `--enforce`); by default the mode installed now, else enforce. */
  mode?: HookMode;
}

/** What setup or removal would do, computed without writing anything. */
export interface AgentPlan {
  operation: 'setup' | 'remove';
  host: AgentHost;
  project: AgentProject;
  recordPath: string;
  command: VouchCommand | null;
  /** The MCP server entry setup registers; null for removal. */
  server: McpServerEntry | null;
  items: ItemPlan[];
  changes: FileChange[];
  conflicts: Conflict[];
  notes: string[];
  /** The record as it will be once the plan is applied; empty means it is deleted. */
  record: RecordedItem[];
  /** A record existed before this call. */
  hadRecord: boolean;
  version: string;
  /** The mode the hooks are written in (setup), or were found in (remove). */
  mode: HookMode;
}

function desiredFor(options: AgentSetupOptions, project: AgentProject, command: VouchCommand, mode: HookMode): Desired {
  const layout = HOST_LAYOUTS[options.host];
  const facts = { host: options.host, program: command.program, options: project.commandOptions, checks: project.checks ?? [] };
  return { hooks: desiredHookEntries(options.host, layout.hooks, command.hookProgram, mode), section: sectionText(facts), skill: skillText(facts), server: desiredMcpServer(command, project) };
}

export async function planAgentSetup(options: AgentSetupOptions): Promise<AgentPlan> {
  const project = await agentProject(options, true);
  const layout = HOST_LAYOUTS[options.host];
  const command = resolveVouchCommand(options.entry, options.node, options.env, options.lookup);
  const mode = options.mode ?? installedHookMode(options.host, project.root) ?? 'enforce';
  const desired = desiredFor(options, project, command, mode);
  const record = readRecord(project.stateDir, options.host);
  const items = inspectItems(layout, project.root, record?.items ?? [], desired);
  const leaveOut = new Set<ItemId>(options.mcp === false ? ['mcp'] : []);
  const server = desiredMcpServer(command, project);
  const plan = planSetup(options.host, project.root, items, { hooks: desired.hooks, server }, leaveOut);
  const notes: string[] = [];
  if (!command.sameInstall) {
    const found = command.lookup.found === null ? 'finds no vouch' : `finds another vouch (${command.lookup.resolved ?? command.lookup.found})`;
    notes.push(`A login shell (${command.lookup.shell}) ${found}, so the hooks and instructions run this install by path: ${command.program}. Run setup again after installing vouch on PATH to use plain "vouch".`);
  }
  if (options.host === 'codex') {
    notes.push('Codex runs project hooks only after you trust them: open /hooks in Codex and trust the vouch hooks. Changing them (an upgrade) asks again.');
  } else {
    notes.push('Start a new Claude Code session to load the hooks and the skill; Claude Code runs project hooks only once you have trusted the workspace.');
    const hooksFile = HOST_LAYOUTS.claude.hooksFile;
    // The hooks name this machine's vouch; the local settings file is meant never to be committed.
    if (ignoredByGit(project.root, hooksFile) === false) {
      notes.push(`${hooksFile} is not ignored by git, so the hooks vouch writes there (which name this machine's vouch) could be committed; add "${hooksFile}" to .gitignore.`);
    }
  }
  if (!leaveOut.has('mcp')) notes.push(...mcpNotes(options.host, command));
  if (mode === 'shadow') {
    notes.push(`Shadow mode: the hooks decide and record every command as usual, but let it run as typed. "vouch savings" shows what they would have saved; "vouch agent setup ${options.host} --enforce" turns them on.`);
  }
  return { operation: 'setup', host: options.host, project, recordPath: recordPath(project.stateDir, options.host), command, server, ...plan, hadRecord: record !== null, conflicts: [...findConflicts(options.host, project.root, options.env.HOME), ...items.flatMap((item) => mcpServerConflict(item) ?? [])], notes, version: options.version, mode };
}

/** What it takes for the host to start the server setup registers. */
function mcpNotes(host: AgentHost, command: VouchCommand): string[] {
  const layout = HOST_LAYOUTS[host];
  const notes =
    host === 'codex'
      ? [`Codex reads the MCP server in ${layout.mcpFile} only in a project you trust; start a new Codex session to load it.`]
      : [`Claude Code asks you to approve the MCP server in ${layout.mcpFile} the first time it starts in this project.`];
  // The hooks go in a local file for this reason; the MCP file is the project's, often committed.
  if (!command.sameInstall) notes.push(`${layout.mcpFile} names this machine's vouch by path; if you commit it, install vouch on PATH and run setup again first, so it says plain "vouch".`);
  return notes;
}

export async function planAgentRemove(options: AgentSetupOptions): Promise<AgentPlan> {
  const project = await agentProject(options, false);
  const layout = HOST_LAYOUTS[options.host];
  const record = readRecord(project.stateDir, options.host);
  // Without a record, only content equal to what setup would write now is known to be vouch's.
  const command = record === null && project.checks !== null ? resolveVouchCommand(options.entry, options.node, options.env, options.lookup) : null;
  const mode = installedHookMode(options.host, project.root) ?? 'enforce';
  const desired: Desired = command ? desiredFor(options, project, command, mode) : { hooks: [], section: '', skill: '', server: null };
  const items = inspectItems(layout, project.root, record?.items ?? [], desired);
  const plan = planRemove(options.host, project.root, items);
  return { operation: 'remove', host: options.host, project, recordPath: recordPath(project.stateDir, options.host), command, server: null, ...plan, hadRecord: record !== null, conflicts: [], notes: [], version: options.version, mode };
}

/** Writes the plan's files, then the record of what vouch now owns (deleted when it owns nothing). */
export function applyAgentPlan(plan: AgentPlan): void {
  applyChanges(plan.changes);
  if (plan.record.length === 0) {
    deleteRecord(plan.project.stateDir, plan.host);
    return;
  }
  ensureStateDir(plan.project.stateDir);
  writeRecord(plan.project.stateDir, { schema: 1, host: plan.host, version: plan.version, writtenAt: new Date().toISOString(), items: plan.record });
}
