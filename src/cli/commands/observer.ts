import { observerInfo, type ObserverInfo } from '../../api/observer.js';
import type { ObserverDocument } from '../../core/json/observer.js';
import { formatDuration, iso, table } from '../format.js';
import type { CliIo } from '../io.js';
import { runObserverControl } from '../observerControl.js';

export const help = `Usage: vouch observer [--json]

Reports on this checkout's observer: pid, uptime, version, watched paths,
index size, memory, events handled, overflows, rescans, patches, and whether its
index can be trusted right now (healthy) and if not, why.

Options:
  --json             machine-readable (docs/json.md)
  --config FILE      use this config
  --state-dir DIR    where receipts are kept
  --root DIR         the project root, instead of the config's "root"

Examples:
  vouch observer
  vouch observer --json
`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  return runObserverControl('observer', argv, io, { ask: observerInfo, json, text });
}

function json(info: ObserverInfo | null): ObserverDocument {
  if (!info) return { schema: 1, running: false };
  return {
    schema: 1,
    running: true,
    pid: info.pid,
    version: info.version,
    uptime_ms: info.uptimeMs,
    healthy: info.healthy,
    reasons: info.reasons,
    watched_paths: info.watchedPaths,
    index_files: info.indexFiles,
    memory_rss_bytes: info.memoryRssBytes,
    events: info.events,
    overflows: info.overflows,
    rescans: info.rescans,
    rescans_by_reason: Object.entries(info.rescansBy ?? {}).map(([reason, count]) => ({ reason, count: count ?? 0 })),
    last_rescan: info.lastRescan && { at: iso(info.lastRescan.at), duration_ms: info.lastRescan.durationMs, reason: info.lastRescan.reason },
    patches: info.patches,
    last_patch: info.lastPatch && { at: iso(info.lastPatch.at), duration_ms: info.lastPatch.durationMs, paths: info.lastPatch.paths },
    evidence_looks: info.evidenceLooks,
    // Clients find an observer by its record, which it writes only once ready: readyMs is set by then.
    ready_ms: info.readyMs!,
    socket: info.socket,
  };
}

function text(info: ObserverInfo | null): string {
  if (!info) return 'no observer is running; "vouch start" starts one\n';
  const rows = [
    ['pid', String(info.pid)],
    ['version', info.version],
    ['uptime', formatDuration(info.uptimeMs)],
    ['healthy', info.healthy ? 'yes' : `no: ${info.reasons.map((reason) => reason.message).join('; ')}`],
    ['watched paths', String(info.watchedPaths)],
    ['index', `${info.indexFiles} files`],
    ['memory', `${Math.round(info.memoryRssBytes / 1024 / 1024)} MB`],
    ['events', String(info.events)],
    ['overflows', String(info.overflows)],
    ['rescans', `${info.rescans}${Object.keys(info.rescansBy ?? {}).length > 0 ? ` (${Object.entries(info.rescansBy).map(([reason, count]) => `${reason} ${count}`).join(', ')})` : ''}`],
    ['last rescan', info.lastRescan ? `${iso(info.lastRescan.at)}, ${formatDuration(info.lastRescan.durationMs)} (${info.lastRescan.reason})` : '-'],
    ['patches', String(info.patches)],
    ['last patch', info.lastPatch ? `${iso(info.lastPatch.at)}, ${formatDuration(info.lastPatch.durationMs)} (${info.lastPatch.paths} ${info.lastPatch.paths === 1 ? 'path' : 'paths'})` : '-'],
    ['evidence', `${info.evidenceLooks.full} whole, ${info.evidenceLooks.partial} partial looks (${info.evidenceLooks.entries} entries)`],
    ['socket', info.socket],
  ];
  return table(rows);
}
