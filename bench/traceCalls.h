// What bench/traceFloor.c and bench/traceNotify.c share: the file calls they trace, the seccomp
// filter that picks them out (seccomp(2)), and reading a path string out of the traced process.
// x86-64 only: the call numbers are those of asm/unistd_64.h.
#ifndef TRACE_CALLS_H
#define TRACE_CALLS_H

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifndef __x86_64__
#error "the bench tracers are x86-64 only"
#endif

// strace's %file, plus getdents64 and fchdir.
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
#define FILTER_LENGTH (4 + NTRACED + 2)

/** A call whose path is its second argument, relative to the dirfd in its first. */
static int at_call(long nr) {
  return nr == SYS_openat || nr == SYS_mkdirat || nr == SYS_mknodat || nr == SYS_fchownat || nr == SYS_futimesat ||
         nr == SYS_newfstatat || nr == SYS_unlinkat || nr == SYS_renameat || nr == SYS_linkat || nr == SYS_readlinkat ||
         nr == SYS_fchmodat || nr == SYS_faccessat || nr == SYS_utimensat || nr == SYS_renameat2 || nr == SYS_execveat ||
         nr == SYS_statx || nr == 437 || nr == 439;
}

/** Writes the filter into `filter` (FILTER_LENGTH entries): `action` for a traced call, SECCOMP_RET_ALLOW otherwise. */
static struct sock_fprog traced_calls_filter(struct sock_filter *filter, unsigned int action) {
  size_t n = 0;
  filter[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  filter[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
  filter[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  filter[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  for (size_t i = 0; i < NTRACED; i++) {
    // Match: jump to the action after the remaining comparisons and the RET_ALLOW.
    filter[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)TRACED[i], (unsigned char)(NTRACED - i), 0);
  }
  filter[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  filter[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action);
  return (struct sock_fprog){.len = (unsigned short)n, .filter = filter};
}

/** Reads up to `len` bytes at `addr` of the traced process into `dst`; returns the count, or <= 0. */
typedef ssize_t (*remote_read)(const void *from, void *dst, size_t len, unsigned long addr);

/** Reads a NUL-terminated string of the traced process, a page at a time (a read must not cross into an unmapped page). */
static size_t read_remote_string(remote_read read, const void *from, unsigned long addr, char *out, size_t max) {
  size_t len = 0;
  while (len < max - 1) {
    size_t chunk = 4096 - ((addr + len) & 4095);
    if (chunk > max - 1 - len) chunk = max - 1 - len;
    ssize_t got = read(from, out + len, chunk, addr + len);
    if (got <= 0) break;
    void *nul = memchr(out + len, 0, (size_t)got);
    if (nul) return (size_t)((char *)nul - out);
    len += (size_t)got;
  }
  out[len] = 0;
  return len;
}

/** A remote_read with process_vm_readv(2); `from` points at the pid. */
static ssize_t read_vm(const void *from, void *dst, size_t len, unsigned long addr) {
  struct iovec local = {dst, len}, remote = {(void *)addr, len};
  return process_vm_readv(*(const pid_t *)from, &local, 1, &remote, 1, 0);
}

#endif
