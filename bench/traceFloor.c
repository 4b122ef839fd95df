// The floor of a native tracer, for bench/trace.mjs: the smallest tracer vouch could ship in
// its C addon instead of strace. It installs a seccomp filter that returns SECCOMP_RET_TRACE
// for the file calls strace is asked for (seccomp(2)), stops each traced process on those
// calls only, reads the path argument with process_vm_readv(2) (and a dirfd's path from
// /proc/PID/fd when the path is relative to one), lets the call finish (PTRACE_SYSCALL) and
// reads its result: the work a native tracer must do per call. It keeps nothing and writes
// no log, so it measures the cost of the stops and the reads alone. Forks, clones and execs
// are followed with ptrace's own options (ptrace(2), PTRACE_O_TRACECLONE ...), so unlike
// strace it does not stop on wait4, exit or clone themselves. x86-64 only.
//
//   cc -O2 -o traceFloor bench/traceFloor.c && ./traceFloor COMMAND [ARGS...]

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "traceCalls.h"

static void install_filter(void) {
  struct sock_filter filter[FILTER_LENGTH];
  struct sock_fprog prog = traced_calls_filter(filter, SECCOMP_RET_TRACE);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
    perror("traceFloor: seccomp");
    _exit(126);
  }
}

static unsigned char *seen;      // pids met (their first stop is the attach SIGSTOP)
static unsigned char *insyscall; // pids stopped between a call's entry and its exit

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: traceFloor COMMAND [ARGS...]\n");
    return 2;
  }
  seen = calloc(1 << 22, 1);
  insyscall = calloc(1 << 22, 1);
  pid_t root = fork();
  if (root == 0) {
    // Refused (another tracer, a seccomp policy, yama): say so and fail, or the SIGSTOP below would never be waited for.
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) {
      perror("traceFloor: ptrace(PTRACE_TRACEME)");
      _exit(126);
    }
    raise(SIGSTOP);
    install_filter();
    execvp(argv[1], argv + 1);
    perror("traceFloor: exec");
    _exit(127);
  }
  int status;
  waitpid(root, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  ptrace(PTRACE_SETOPTIONS, root, 0,
         PTRACE_O_TRACESECCOMP | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
             PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL);
  seen[root] = 1;
  ptrace(PTRACE_CONT, root, 0, 0);
  long calls = 0;
  int exit_code = 0;
  char path[4096], link[64], dir[4096];
  for (;;) {
    pid_t pid = waitpid(-1, &status, __WALL);
    if (pid < 0) break;
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      if (pid == root) exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      continue;
    }
    if (!WIFSTOPPED(status)) continue;
    int sig = WSTOPSIG(status), event = status >> 16;
    if (!seen[pid]) {
      seen[pid] = 1;
      if (sig == SIGSTOP) {
        ptrace(PTRACE_CONT, pid, 0, 0);
        continue;
      }
    }
    if (sig == SIGTRAP && event == PTRACE_EVENT_SECCOMP) {
      struct user_regs_struct regs;
      ptrace(PTRACE_GETREGS, pid, 0, &regs);
      long nr = (long)regs.orig_rax;
      calls++;
      if (nr != SYS_getdents64 && nr != SYS_getdents && nr != SYS_fchdir) {
        unsigned long arg = at_call(nr) ? regs.rsi : regs.rdi;
        read_remote_string(read_vm, &pid, arg, path, sizeof path);
        if (at_call(nr) && (int)regs.rdi != AT_FDCWD && path[0] != '/') {
          snprintf(link, sizeof link, "/proc/%d/fd/%d", pid, (int)regs.rdi);
          (void)!readlink(link, dir, sizeof dir);
        }
      } else {
        snprintf(link, sizeof link, "/proc/%d/fd/%d", pid, (int)regs.rdi);
        (void)!readlink(link, dir, sizeof dir);
      }
      insyscall[pid] = 1;
      ptrace(PTRACE_SYSCALL, pid, 0, 0);
      continue;
    }
    if (sig == (SIGTRAP | 0x80)) {
      struct user_regs_struct regs;
      ptrace(PTRACE_GETREGS, pid, 0, &regs); // the result, in rax
      insyscall[pid] = 0;
      ptrace(PTRACE_CONT, pid, 0, 0);
      continue;
    }
    if (sig == SIGTRAP && event != 0) {
      // A fork, clone or exec event: carry on to the call's exit if we were waiting for it.
      ptrace(insyscall[pid] ? PTRACE_SYSCALL : PTRACE_CONT, pid, 0, 0);
      continue;
    }
    ptrace(PTRACE_CONT, pid, 0, sig);
  }
  fprintf(stderr, "traceFloor: %ld traced calls\n", calls);
  return exit_code;
}
