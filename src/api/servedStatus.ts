import { loadAddon } from '../fs/nativeAddon.js';
import { addonDeadline, deadlineFrom, MAX_ANSWER_CHARS } from '../observer/callLimits.js';
import { listedObserver } from '../observer/listedObserver.js';
import type { ServedStatus, StatusCall } from '../observer/protocol.js';
import { buildId, type Build } from './buildId.js';
import { locateProject, type ProjectOptions } from './projectPlace.js';

/**
 * A whole `vouch status` answered by the project's running observer, or null, and the caller's
 * own process answers: no observer, none that serves a status (an older one), another build or
 * Node, or anything it would not answer from its index alone. What comes back is what this
 * process would have printed (cli/statusServer.ts runs the same command there). An observer that
 * did not answer within the deadline is `unavailable`: the caller looks directly, and says why.
 *
 * Loads no more than the project's place, the record's listing and the addon's blocking call:
 * what a status costs over Node's start is mostly what it loads.
 */
export function askServedStatus(options: ProjectOptions, argv: string[], env: NodeJS.ProcessEnv, build: Build): ServedStatus | { unavailable: string } | null {
  try {
    const addon = loadAddon();
    if (addon === null) return null;
    const place = locateProject(options);
    const observer = listedObserver(place.stateDir, place.configPath);
    if (observer === null) return null;
    const call: StatusCall = { argv, cwd: options.cwd, env: env as Record<string, string>, node: process.version, version: build.version, build: buildId(build) };
    const request = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'status', params: call }) + '\n';
    const deadlineMs = deadlineFrom(env);
    const reply = addon.callObserver(observer.socket, request, addonDeadline(deadlineMs), MAX_ANSWER_CHARS);
    // A hung observer costs one deadline, not two: the caller's own process does not ask it again.
    if (reply.outcome === 'timeout') return { unavailable: `the observer did not answer "status" within ${deadlineMs} ms` };
    if (reply.outcome !== 'answered') return null;
    const message = JSON.parse(reply.reply) as { id?: unknown; result?: Partial<ServedStatus> };
    const result = message.id === 1 ? message.result : undefined;
    if (typeof result?.stdout !== 'string' || typeof result.stderr !== 'string' || !Number.isInteger(result.code)) return null;
    return { stdout: result.stdout, stderr: result.stderr, code: result.code! };
  } catch {
    // Whatever failed here, the caller's own process looks again and says what is wrong.
    return null;
  }
}
