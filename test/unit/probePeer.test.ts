import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { probeHoldsFor, traceContextOf, type TraceContext } from '../../src/exec/trace/probePeer.js';

/* Whether a resident server's trace probe speaks for the client that would start the tracer. */

const context = (more: Partial<TraceContext> = {}): TraceContext => ({
  tracerPid: '0',
  status: { Seccomp: '0', Seccomp_filters: '0', NoNewPrivs: '0' },
  namespaces: { user: 'user:[4026531837]', pid: 'pid:[4026531836]', mnt: 'mnt:[4026531841]' },
  ...more,
});

describe('probeHoldsFor', () => {
  it('holds for a client as this process is, and for nothing that differs in what ptrace depends on', () => {
    expect(probeHoldsFor(context(), context())).toBe(true);
    expect(probeHoldsFor(context(), context({ tracerPid: '4242' }))).toBe(false);
    expect(probeHoldsFor(context(), context({ status: { Seccomp: '2', Seccomp_filters: '1', NoNewPrivs: '1' } }))).toBe(false);
    expect(probeHoldsFor(context(), context({ status: { Seccomp: '0', Seccomp_filters: '0', NoNewPrivs: '1' } }))).toBe(false);
    expect(probeHoldsFor(context(), context({ namespaces: { user: 'user:[1]', pid: 'pid:[4026531836]', mnt: 'mnt:[4026531841]' } }))).toBe(false);
    expect(probeHoldsFor(context(), context({ namespaces: { user: 'user:[4026531837]', pid: 'pid:[2]', mnt: 'mnt:[4026531841]' } }))).toBe(false);
    // A field this kernel does not report is the same only when neither reports it.
    const older = context({ status: { Seccomp: '0', Seccomp_filters: null, NoNewPrivs: '0' } });
    expect(probeHoldsFor(older, older)).toBe(true);
    expect(probeHoldsFor(context(), older)).toBe(false);
  });

  it('does not hold when either side could not be read', () => {
    expect(probeHoldsFor(null, context())).toBe(false);
    expect(probeHoldsFor(context(), null)).toBe(false);
    expect(traceContextOf(2 ** 22 + 1)).toBeNull();
  });

  it.runIf(process.platform === 'linux')('reads this process and a child of it as the same', async () => {
    const self = traceContextOf('self');
    expect(self).not.toBeNull();
    expect(self!.tracerPid).toBe('0');
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 5000)'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => child.once('spawn', resolve));
      expect(probeHoldsFor(self, traceContextOf(child.pid!))).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
