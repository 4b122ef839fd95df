import { describe, expect, it } from 'vitest';
import { classifyProbe, probeTracing, probeTracingSoon, traceAvailability, tracedArgv } from '../../src/exec/trace/tracer.js';

/*
 * What the tracer's probe makes of strace's own words, without running strace: each way
 * tracing can be refused is a reason code, and only a clean run says "available".
 */

describe('the trace probe', () => {
  it('EPERM from ptrace is ptrace-refused, with the likely cause', () => {
    const answer = classifyProbe(1, 'strace: test_ptrace_get_syscall_info: PTRACE_TRACEME: Operation not permitted\nstrace: ptrace(PTRACE_TRACEME, ...): Operation not permitted\n');
    expect(answer).toMatchObject({ available: false, code: 'ptrace-refused' });
    expect(!answer.available && answer.message).toContain('PTRACE_TRACEME: Operation not permitted');
  });

  it('a seccomp failure, or a strace too old for --seccomp-bpf, is seccomp-unsupported', () => {
    expect(classifyProbe(0, 'strace: seccomp filter could not be installed\n')).toMatchObject({ available: false, code: 'seccomp-unsupported' });
    expect(classifyProbe(1, "strace: unrecognized option '--seccomp-bpf'\n")).toMatchObject({ available: false, code: 'seccomp-unsupported' });
  });

  it('any other failure is probe-failed, and only a clean exit is available', () => {
    expect(classifyProbe(1, 'strace: something else\n')).toMatchObject({ available: false, code: 'probe-failed', message: expect.stringContaining('something else') });
    expect(classifyProbe(0, '')).toEqual({ available: true, strace: 'strace' });
  });

  it('is not-linux elsewhere, before looking for strace', () => {
    expect(probeTracing('darwin')).toMatchObject({ available: false, code: 'not-linux' });
  });

  it('started early, answers as the probe waited for does here, and is the answer kept for the process', async () => {
    const soon = probeTracingSoon();
    expect(probeTracingSoon()).toBe(soon);
    const answer = await soon;
    expect(answer).toEqual(probeTracing());
    expect(traceAvailability()).toBe(answer);
  });

  it('wraps the command with the flags the log parser reads', () => {
    expect(tracedArgv(['node', 'x.js'], '/logs/1.log')).toEqual(['strace', '-f', '-qq', '--seccomp-bpf', '-y', '-s', '4096', '-e', 'trace=%file,%process,getdents64,?getdents,fchdir,?io_uring_setup,bind,connect', '-e', 'inject=io_uring_setup:error=ENOSYS', '-e', 'signal=none', '-e', 'abbrev=!execve,execveat', '-o', '/logs/1.log', '--', 'node', 'x.js']);
  });
});
