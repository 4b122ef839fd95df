import { probeHoldsFor, traceContextOf } from '../exec/trace/probePeer.js';
import { probeTracingSoon } from '../exec/trace/tracer.js';
import { loadAddon } from '../fs/nativeAddon.js';

/**
 * Whether a traced check can run in this process for the process at the other end of a Unix
 * socket (`fd`), which would start the tracer: tracing works here, and what decides whether it
 * works for that process is as here (exec/trace/probePeer.ts). False when the peer cannot be
 * told (no addon, or a kernel that does not say).
 */
export async function traceHoldsForPeer(fd: number): Promise<boolean> {
  const pid = loadAddon()?.peerPid?.(fd) ?? -1;
  if (pid <= 0 || !probeHoldsFor(traceContextOf('self'), traceContextOf(pid))) return false;
  return (await probeTracingSoon()).available;
}
