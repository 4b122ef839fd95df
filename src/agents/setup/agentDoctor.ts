import { existsSync, readFileSync } from 'node:fs';
import { processAlive } from '../../fs/processStart.js';
import { callObserver, deadlineFrom } from '../../observer/client.js';
import { observerFiles, readRecord as readObserverRecord } from '../../observer/observerFiles.js';
import { AGENT_HOSTS, HOST_LAYOUTS, type AgentHost } from './agentHost.js';
import { agentProject, type AgentProject } from './agentProject.js';
import { readRecord, recordPath } from './agentRecord.js';
import type { AgentSetupOptions } from './agentSetup.js';
import { findConflicts, hookSources, type Conflict } from './conflicts.js';
import { desiredHookEntries, findVouchEntries } from './hookEntries.js';
import { sectionText, skillText } from './instructions.js';
import { inspectItems, type InspectedItem } from './managedItem.js';
import { realOrNull, resolveVouchCommand, type VouchCommand } from './vouchCommand.js';

export interface ObserverHealth {
  running: boolean;
  /** The socket answered an info call within the deadline; null when none runs. */
  reachable: boolean | null;
  healthy: boolean | null;
  pid: number | null;
  socket: string | null;
  error: string | null;
}

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

export interface HostDoctor {
  host: AgentHost;
  recordPath: string;
  recorded: boolean;
  items: InspectedItem[];
  hooks: InstalledHook[];
  conflicts: Conflict[];
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
  const desired = { hooks: desiredHookEntries(host, layout.hooks, command.program), section: sectionText(facts), skill: skillText(facts) };
  const items = inspectItems(layout, project.root, recordedItems, desired);
  const hooks: InstalledHook[] = [];
  for (const path of hookSources(host, project.root, env.HOME)) {
    if (!existsSync(path)) continue;
    let settings: unknown;
    try {
      settings = JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      continue;
    }
    if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) continue;
    for (const entry of findVouchEntries(settings as Record<string, unknown>, host, layout.hooks.map((spec) => spec.event))) {
      const text = String(entry.handler.command);
      const runs = installRun(text, host, command);
      hooks.push({ path, event: entry.event, matcher: entry.matcher, command: text, runs, sameInstall: runs !== null && runs === command.thisInstall });
    }
  }
  return { host, recordPath: recordPath(project.stateDir, host), recorded, items, hooks, conflicts: findConflicts(host, project.root, env.HOME) };
}

/** The entry script a hook command runs: the login shell's vouch for plain `vouch`, else the last path before `hook HOST`. */
function installRun(command: string, host: AgentHost, lookup: VouchCommand): string | null {
  const program = command.trim().replace(new RegExp(`\\s+hook\\s+${host}$`), '');
  if (program === 'vouch') return lookup.lookup.resolved;
  const words = [...program.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((match) => (match[1] !== undefined ? match[1].replace(/'\\''/g, "'") : (match[2] ?? '')));
  const script = words.at(-1);
  return script && script.startsWith('/') ? realOrNull(script) : null;
}

async function observerHealth(project: AgentProject, env: NodeJS.ProcessEnv): Promise<ObserverHealth> {
  // Not findObserver: it deletes a dead observer's files, and doctor writes nothing.
  const record = readObserverRecord(observerFiles(project.stateDir, project.configPath));
  if (!record || !processAlive(record.pid, record.processStart)) return { running: false, reachable: null, healthy: null, pid: null, socket: null, error: null };
  const { pid, socket } = record;
  try {
    const info = await callObserver(socket, 'info', {}, deadlineFrom(env));
    return { running: true, reachable: true, healthy: info.healthy, pid, socket, error: info.healthy ? null : info.reasons.map((reason) => reason.message).join('; ') };
  } catch (error) {
    return { running: true, reachable: false, healthy: null, pid, socket, error: `${(error as Error).message}; restart it with "vouch stop" and "vouch start"` };
  }
}
