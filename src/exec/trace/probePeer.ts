import { readFileSync, readlinkSync } from 'node:fs';

/*
 * Whether this process's trace probe (tracer.ts) speaks for another process: the native client
 * that asked a resident server to run a traced check, and starts the tracer as its own child.
 * What decides whether ptrace works for that child is inherited from the client, so the server
 * takes the run only when it is as here: the client has no tracer (a traced process's children
 * are traced too, and a process has one tracer at most), the same seccomp mode and number of
 * filters, the same no_new_privs, and the same user, pid and mount namespaces. A sandbox the
 * agent's shell runs in and the server does not is one of those. Anything that cannot be read
 * is a difference, and the run goes to Node, which probes in the caller's own process tree.
 * Fields as proc(5) documents them (/proc/PID/status, /proc/PID/ns).
 */

const STATUS_FIELDS = ['Seccomp', 'Seccomp_filters', 'NoNewPrivs'] as const;
const NAMESPACES = ['user', 'pid', 'mnt'] as const;

export interface TraceContext {
  tracerPid: string | null;
  /** Each field's value, or null where this kernel does not report it. */
  status: Record<(typeof STATUS_FIELDS)[number], string | null>;
  namespaces: Record<(typeof NAMESPACES)[number], string>;
}

/** A process's context as tracing sees it, or null when any part cannot be read. */
export function traceContextOf(pid: number | 'self', proc = '/proc'): TraceContext | null {
  try {
    const text = readFileSync(`${proc}/${pid}/status`, 'utf8');
    const field = (name: string) => new RegExp(`^${name}:\\s*(\\S+)`, 'm').exec(text)?.[1] ?? null;
    return {
      tracerPid: field('TracerPid'),
      status: Object.fromEntries(STATUS_FIELDS.map((name) => [name, field(name)])) as TraceContext['status'],
      namespaces: Object.fromEntries(NAMESPACES.map((name) => [name, readlinkSync(`${proc}/${pid}/ns/${name}`)])) as TraceContext['namespaces'],
    };
  } catch {
    return null;
  }
}

/** Whether a probe made in `self` holds for a tracer started by `peer`. */
export function probeHoldsFor(self: TraceContext | null, peer: TraceContext | null): boolean {
  if (self === null || peer === null || peer.tracerPid !== '0') return false;
  return STATUS_FIELDS.every((name) => self.status[name] === peer.status[name]) && NAMESPACES.every((name) => self.namespaces[name] === peer.namespaces[name]);
}
