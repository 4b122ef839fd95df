import { existsSync, readFileSync } from 'node:fs';
import { observerHealth, type ObserverHealth } from '../../api/observer.js';
import { AGENT_HOSTS, HOST_LAYOUTS, type AgentHost } from './host.js';
import { agentProject, type AgentProject } from './project.js';
import { readRecord, recordPath } from './record.js';
import type { AgentSetupOptions } from './setup.js';
import { findConflicts, hookSources, readSettings, type Conflict } from './conflicts.js';
import type { HookMode } from '../../core/ledgerEntry.js';
import { desiredHookEntries, findVouchEntries, hookModeOf, type HookEntry } from './hookEntries.js';
import { installedHookMode } from './hookMode.js';
import { sectionText, skillText } from './instructions.js';
import { inspectItems, type InspectedItem } from './managedItem.js';
import { desiredMcpServer, mcpServerConflict, registeredServer } from './mcpServer.js';
import { realOrNull, resolveVouchCommand, type VouchCommand } from './vouchCommand.js';

export interface InstalledHook {
  /** Absolute path of the settings file. */
  path: string;
  event: string;
  matcher: string;
  command: string;
  /** The vouch entry script the hook will run, symlinks resolved; null when it cannot be found. */
  runs: string | null;
  sameInstall: boolean;
}

/** The MCP server named `vouch` in the host's project config, vouch's or not. */
export interface RegisteredServer {
  /** Absolute path of the config file. */
  path: string;
  registered: boolean;
  /** What it runs, when vouch can read it (any entry in .mcp.json; vouch's own table in config.toml); else null. */
  command: string | null;
  args: string[] | null;
}

export interface HostDoctor {
  host: AgentHost;
  recordPath: string;
  recorded: boolean;
  items: InspectedItem[];
  hooks: InstalledHook[];
  mcp: RegisteredServer;
  conflicts: Conflict[];
  /** The mode of the PreToolUse hooks found (docs/hooks.md, "Shadow mode"); null when none is installed. */
  mode: HookMode | null;
}

export interface DoctorReport {
  project: AgentProject;
  command: VouchCommand;
  observer: ObserverHealth;
  hosts: HostDoctor[];
}

/** Reads everything and writes nothing: not the record, not the state dir. */
export async function agentDoctor(options: Omit<AgentSetupOptions, 'host'> & { host: AgentHost | null }): Promise<DoctorReport> {
  const project = await agentProject(options, false);
  const command = resolveVouchCommand(options.entry, options.node, options.env, options.lookup);
  const hosts = (options.host === null ? [...AGENT_HOSTS] : [options.host]).map((host) => hostDoctor(host, project, command, options.env));
  return { project, command, observer: await observerHealth(project, options.env), hosts };
}

function hostDoctor(host: AgentHost, project: AgentProject, command: VouchCommand, env: NodeJS.ProcessEnv): HostDoctor {
  const layout = HOST_LAYOUTS[host];
  let recorded: HostDoctor['recorded'] = false;
  let recordedItems: Parameters<typeof inspectItems>[2] = [];
  try {
    const record = readRecord(project.stateDir, host);
    recorded = record !== null;
    recordedItems = record?.items ?? [];
  } catch {
    // An unreadable record: every item is judged as if none existed.
  }
  const facts = { host, program: command.program, options: project.commandOptions, checks: project.checks ?? [] };
  const desired = { hooks: desiredHookEntries(host, layout.hooks, command.hookProgram, installedHookMode(host, project.root) ?? 'enforce'), section: sectionText(facts), skill: skillText(facts), server: desiredMcpServer(command, project) };
  const items = inspectItems(layout, project.root, recordedItems, desired);
  const hooks: InstalledHook[] = [];
  const found: HookEntry[] = [];
  for (const path of hookSources(host, project.root, env.HOME)) {
    if (!existsSync(path)) continue;
    let settings: Record<string, unknown> | null;
    try {
      settings = readSettings(path, readFileSync(path, 'utf8'));
    } catch {
      continue;
    }
    if (settings === null || Array.isArray(settings)) continue;
    for (const entry of findVouchEntries(settings, host, layout.hooks.map((spec) => spec.event))) {
      found.push(entry);
      const text = String(entry.handler.command);
      const runs = installRun(text, host, command);
      hooks.push({ path, event: entry.event, matcher: entry.matcher, command: text, runs, sameInstall: runs !== null && runs === command.thisInstall });
    }
  }
  const server = items.find((item) => item.kind === 'server');
  const entry = server?.fileText ? registeredServer(host, server.fileText) : null;
  const mcp: RegisteredServer = {
    path: server?.absolutePath ?? '',
    // Whatever the state says about whose it is, a server named vouch is there.
    registered: server !== undefined && server.state !== 'missing' && server.state !== 'invalid',
    command: entry?.command ?? null,
    args: entry?.args ?? null,
  };
  const conflicts = [...findConflicts(host, project.root, env.HOME), ...items.flatMap((item) => mcpServerConflict(item) ?? [])];
  return { host, recordPath: recordPath(project.stateDir, host), recorded, items, hooks, mcp, conflicts, mode: hookModeOf(found) };
}

/** The entry script a hook command runs: the login shell's vouch for plain `vouch`, else the last path before `hook HOST`. */
function installRun(command: string, host: AgentHost, lookup: VouchCommand): string | null {
  const program = command.trim().replace(new RegExp(`\\s+hook\\s+${host}(\\s+--shadow)?$`), '');
  if (program === 'vouch') return lookup.lookup.resolved;
  const words = [...program.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((match) => (match[1] !== undefined ? match[1].replace(/'\\''/g, "'") : (match[2] ?? '')));
  const script = words.at(-1);
  return script && script.startsWith('/') ? realOrNull(script) : null;
}

