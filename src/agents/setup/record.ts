import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { VouchError } from '../../core/errors.js';
import { readStateFile, writeStateFile } from '../../store/stateDir.js';
import type { AgentHost } from './host.js';

export type ItemKind = 'hooks' | 'section' | 'file' | 'server';

/** What setup wrote for one managed item, so a later run can tell vouch's content from the user's edits. */
export interface RecordedItem {
  kind: ItemKind;
  /** Root-relative, with `/`. */
  path: string;
  /** sha256 of the managed content as written: the hook entries' canonical JSON, the section, the file, or the MCP server entry (canonical JSON in .mcp.json, the marked table in config.toml). */
  digest: string;
  /** Setup created the file, so removal may delete it once nothing else is left in it. */
  createdFile: boolean;
  /** Directories setup created for it, deepest last; removal takes them away when empty. */
  createdDirs: string[];
  /** Sections and config.toml's table: what setup put before it when it appended it. */
  separator: string;
}

export interface AgentRecord {
  schema: 1;
  host: AgentHost;
  version: string;
  writtenAt: string;
  items: RecordedItem[];
}

/** On disk, in snake_case like every JSON vouch writes for others to read (docs/agent-setup.md). */
interface StoredRecord {
  schema: 1;
  host: AgentHost;
  version: string;
  written_at: string;
  items: Array<{ kind: ItemKind; path: string; digest: string; created_file: boolean; created_dirs: string[]; separator: string }>;
}

export function recordPath(stateDir: string, host: AgentHost): string {
  return join(stateDir, `agent-${host}.json`);
}

export function readRecord(stateDir: string, host: AgentHost): AgentRecord | null {
  const path = recordPath(stateDir, host);
  // Never through a link: a repository's state dir may hold one to a file elsewhere.
  const text = readStateFile(path);
  if (text === null) return null;
  try {
    const stored = JSON.parse(text) as StoredRecord;
    if (stored.schema !== 1 || stored.host !== host || !Array.isArray(stored.items)) throw new Error('not a record of this format');
    return {
      schema: 1,
      host,
      version: stored.version,
      writtenAt: stored.written_at,
      items: stored.items.map((item) => ({ kind: item.kind, path: item.path, digest: item.digest, createdFile: item.created_file, createdDirs: item.created_dirs, separator: item.separator })),
    };
  } catch (error) {
    throw new VouchError('agent-record-invalid', `${path} is not a valid record of what setup wrote (${(error as Error).message}); delete it, and setup will treat vouch's content that matches what it writes now as its own`);
  }
}

/** Written whole and renamed into place (the state dir exists, ensured by the caller): a crash leaves the old record or the new one. */
export function writeRecord(stateDir: string, record: AgentRecord): void {
  const path = recordPath(stateDir, record.host);
  const stored: StoredRecord = {
    schema: 1,
    host: record.host,
    version: record.version,
    written_at: record.writtenAt,
    items: record.items.map((item) => ({ kind: item.kind, path: item.path, digest: item.digest, created_file: item.createdFile, created_dirs: item.createdDirs, separator: item.separator })),
  };
  writeStateFile(path, JSON.stringify(stored, null, 2) + '\n', stateDir);
}

export function deleteRecord(stateDir: string, host: AgentHost): void {
  rmSync(recordPath(stateDir, host), { force: true });
}
