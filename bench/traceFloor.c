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

#ifndef __x86_64__
#error "traceFloor is x86-64 only"
#endif

// strace's %file, plus getdents64 and fchdir (x86-64 numbers, from asm/unistd_64.h).
static const int TRACED[] = {
  SYS_open, SYS_stat, SYS_lstat, SYS_access, SYS_execve, SYS_truncate, SYS_getdents, SYS_getcwd, SYS_chdir, SYS_fchdir,
  SYS_rename, SYS_mkdir, SYS_rmdir, SYS_creat, SYS_link, SYS_unlink, SYS_symlink, SYS_readlink, SYS_chmod, SYS_chown,
  SYS_lchown, SYS_utime, SYS_mknod, SYS_statfs, SYS_chroot, SYS_setxattr, SYS_lsetxattr, SYS_getxattr, SYS_lgetxattr,
  SYS_listxattr, SYS_llistxattr, SYS_removexattr, SYS_lremovexattr, SYS_getdents64, SYS_utimes, SYS_inotify_add_watch,
  SYS_openat, SYS_mkdirat, SYS_mknodat, SYS_fchownat, SYS_futimesat, SYS_newfstatat, SYS_unlinkat, SYS_renameat,
  SYS_linkat, SYS_symlinkat, SYS_readlinkat, SYS_fchmodat, SYS_faccessat, SYS_utimensat, SYS_renameat2, SYS_execveat,
  SYS_statx, 437 /* openat2 */, 439 /* faccessat2 */,
};
#define NTRACED (sizeof TRACED / sizeof TRACED[0])

static int at_call(long nr) {
  return nr == SYS_openat || nr == SYS_mkdirat || nr == SYS_mknodat || nr == SYS_fchownat || nr == SYS_futimesat ||
         nr == SYS_newfstatat || nr == SYS_unlinkat || nr == SYS_renameat || nr == SYS_linkat || nr == SYS_readlinkat ||
         nr == SYS_fchmodat || nr == SYS_faccessat || nr == SYS_utimensat || nr == SYS_renameat2 || nr == SYS_execveat ||
         nr == SYS_statx || nr == 437 || nr == 439;
}

static void install_filter(void) {
  struct sock_filter filter[4 + NTRACED + 2];
  size_t n = 0;
  filter[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  filter[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
  filter[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  filter[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  for (size_t i = 0; i < NTRACED; i++) {
    // Match: jump to the RET_TRACE after the remaining comparisons and the RET_ALLOW.
    filter[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)TRACED[i], (unsigned char)(NTRACED - i), 0);
  }
  filter[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  filter[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE);
  struct sock_fprog prog = {.len = (unsigned short)n, .filter = filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
    perror("traceFloor: seccomp");
    _exit(126);
  }
}

/** Reads a NUL-terminated string of the tracee, a page at a time (a read must not cross into an unmapped page). */
static size_t read_string(pid_t pid, unsigned long addr, char *out, size_t max) {
  size_t len = 0;
  while (len < max - 1) {
    size_t chunk = 4096 - ((addr + len) & 4095);
    if (chunk > max - 1 - len) chunk = max - 1 - len;
    struct iovec local = {out + len, chunk}, remote = {(void *)(addr + len), chunk};
    ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got <= 0) break;
    void *nul = memchr(out + len, 0, (size_t)got);
    if (nul) return (size_t)((char *)nul - out);
    len += (size_t)got;
  }
  out[len] = 0;
  return len;
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
        read_string(pid, arg, path, sizeof path);
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
