// A tracer without ptrace, for bench/trace.mjs: a seccomp user-notification supervisor
// (seccomp_unotify(2), Linux >= 5.5). The child sets no_new_privs and installs a filter that
// returns SECCOMP_RET_USER_NOTIF for the same file calls bench/traceFloor.c stops on, with
// SECCOMP_FILTER_FLAG_NEW_LISTENER (seccomp(2)); it passes the listener fd to the parent over a
// unix socket pair (SCM_RIGHTS, unix(7)) and execs the command. The filter is inherited by every
// descendant, so no fork, clone or exec has to be followed. Per call the parent receives one
// notification (SECCOMP_IOCTL_NOTIF_RECV), reads the path argument from /proc/TID/mem (and a
// dirfd's path from /proc/TID/fd), checks the notification is still valid
// (SECCOMP_IOCTL_NOTIF_ID_VALID, the man page's advice against reading a recycled tid's memory)
// and lets the call go on in the kernel (SECCOMP_IOCTL_NOTIF_SEND with
// SECCOMP_USER_NOTIF_FLAG_CONTINUE): one round trip per call where ptrace needs two stops, but
// the supervisor never sees the call's result. It keeps nothing and writes no log.
//
//   cc -O2 -pthread -o traceNotify bench/traceNotify.c && ./traceNotify [-l] [-v] [-p] [-s] [-t THREADS] COMMAND [ARGS...]
//
//   -l          lookup: before letting a call go on, the supervisor stats (or, for the access
//               calls, faccessat(2)s) the path itself, through /proc/TID/cwd or /proc/TID/fd/N
//               for relative paths: what it would have to do to know the answer without an exit
//               stop. Racy by nature: the answer is the file system's a moment before the call.
//   -v          print each call's tid, number and path to stderr (to check what is read).
//   -p          read paths with process_vm_readv(2) instead of /proc/TID/mem.
//   -s          SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux 6.6, include/uapi/linux/seccomp.h;
//               not yet in every seccomp_unotify(2)): the kernel wakes the supervisor
//               synchronously, on the target's CPU, which suits a supervisor answering each
//               call at once.
//   -t THREADS  supervisor threads receiving from the one listener (default 1).
//
// x86-64 only.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

// Linux 6.6 (the kernel's include/uapi/linux/seccomp.h): wake the supervisor synchronously;
// older headers lack them.
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

#include "traceCalls.h"

/** Installs the filter in the calling process and returns the listener fd, or exits. */
static int install_filter(void) {
  struct sock_filter filter[FILTER_LENGTH];
  struct sock_fprog prog = traced_calls_filter(filter, SECCOMP_RET_USER_NOTIF);
  // seccomp(2): a filter needs no_new_privs (or CAP_SYS_ADMIN); it also keeps setuid programs
  // run by the check from gaining privileges.
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    perror("traceNotify: prctl(PR_SET_NO_NEW_PRIVS)");
    _exit(126);
  }
  int listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  if (listener < 0) {
    perror("traceNotify: seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER)");
    _exit(126);
  }
  return listener;
}

static void send_fd(int sock, int fd) {
  char byte = 0;
  struct iovec iov = {&byte, 1};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int))];
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
  struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
  if (sendmsg(sock, &msg, 0) != 1) {
    perror("traceNotify: sendmsg");
    _exit(126);
  }
}

static int recv_fd(int sock) {
  char byte;
  struct iovec iov = {&byte, 1};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int))];
  } control;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
  if (recvmsg(sock, &msg, 0) != 1) return -1;
  struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
  if (!cmsg || cmsg->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
  return fd;
}

/** A remote_read through /proc/TID/mem; `from` points at its fd. */
static ssize_t read_mem(const void *from, void *dst, size_t len, unsigned long addr) {
  return pread(*(const int *)from, dst, len, (off_t)addr);
}

static int listener;
static int lookup, verbose, vm_read;
static struct seccomp_notif_sizes sizes;
static long calls, invalid; // counted atomically: the supervisor threads share them

/** What the supervisor would need to know the answer without an exit stop: the path's own lookup. */
static void look_up(const struct seccomp_notif *req, const char *path) {
  long nr = req->data.nr;
  char where[4096 + 64];
  int dirfd = at_call(nr) ? (int)req->data.args[0] : AT_FDCWD;
  if (path[0] == '/') snprintf(where, sizeof where, "%s", path);
  else if (dirfd == AT_FDCWD) snprintf(where, sizeof where, "/proc/%u/cwd/%s", req->pid, path);
  else snprintf(where, sizeof where, "/proc/%u/fd/%d/%s", req->pid, dirfd, path);
  struct stat st;
  if (nr == SYS_access) (void)faccessat(AT_FDCWD, where, (int)req->data.args[1], 0);
  else if (nr == SYS_faccessat || nr == 439) (void)faccessat(AT_FDCWD, where, (int)req->data.args[2], 0);
  else (void)fstatat(AT_FDCWD, where, &st, nr == SYS_lstat ? AT_SYMLINK_NOFOLLOW : 0);
}

static void *supervise(void *unused) {
  (void)unused;
  struct seccomp_notif *req = malloc(sizes.seccomp_notif);
  struct seccomp_notif_resp *resp = malloc(sizes.seccomp_notif_resp);
  char path[4096], link[64], dir[4096];
  for (;;) {
    struct pollfd p = {.fd = listener, .events = POLLIN};
    if (poll(&p, 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    // seccomp_unotify(2): the listener reports end of file once the last task using the
    // filter has exited and been reaped.
    if (!(p.revents & POLLIN)) break;
    memset(req, 0, sizes.seccomp_notif); // RECV fails with EINVAL on a buffer that is not zeroed
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) != 0) continue; // another thread took it, or the target died
    __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
    long nr = req->data.nr;
    if (nr == SYS_getdents64 || nr == SYS_getdents || nr == SYS_fchdir) {
      snprintf(link, sizeof link, "/proc/%u/fd/%d", req->pid, (int)req->data.args[0]);
      (void)!readlink(link, dir, sizeof dir);
    } else if (nr != SYS_getcwd) {
      unsigned long arg = at_call(nr) ? req->data.args[1] : req->data.args[0];
      path[0] = 0;
      if (vm_read) {
        pid_t pid = (pid_t)req->pid;
        read_remote_string(read_vm, &pid, arg, path, sizeof path);
      }
      else {
        snprintf(link, sizeof link, "/proc/%u/mem", req->pid);
        int mem = open(link, O_RDONLY | O_CLOEXEC);
        if (mem >= 0) {
          read_remote_string(read_mem, &mem, arg, path, sizeof path);
          close(mem);
        }
      }
      if (at_call(nr) && (int)req->data.args[0] != AT_FDCWD && path[0] != '/') {
        snprintf(link, sizeof link, "/proc/%u/fd/%d", req->pid, (int)req->data.args[0]);
        (void)!readlink(link, dir, sizeof dir);
      }
      // The bytes read are only the call's if the target is still blocked in it.
      if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) != 0) {
        __atomic_fetch_add(&invalid, 1, __ATOMIC_RELAXED);
        continue;
      }
      if (lookup && path[0]) look_up(req, path);
      if (verbose) fprintf(stderr, "traceNotify: %u %ld %s\n", req->pid, nr, path);
    }
    memset(resp, 0, sizes.seccomp_notif_resp);
    resp->id = req->id;
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    (void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp); // ENOENT: the target was interrupted meanwhile
  }
  free(req);
  free(resp);
  return NULL;
}

static pid_t root_pid;
static int root_status;

static void *reap(void *unused) {
  (void)unused;
  while (waitpid(root_pid, &root_status, 0) < 0 && errno == EINTR) {}
  return NULL;
}

int main(int argc, char **argv) {
  int threads = 1, first = 1, sync_wake = 0;
  while (first < argc && argv[first][0] == '-') {
    if (strcmp(argv[first], "-l") == 0) lookup = 1, first++;
    else if (strcmp(argv[first], "-v") == 0) verbose = 1, first++;
    else if (strcmp(argv[first], "-p") == 0) vm_read = 1, first++;
    else if (strcmp(argv[first], "-s") == 0) sync_wake = 1, first++;
    else if (strcmp(argv[first], "-t") == 0 && first + 1 < argc) threads = atoi(argv[first + 1]), first += 2;
    else if (strcmp(argv[first], "--") == 0) {
      first++;
      break;
    } else break;
  }
  if (first >= argc || threads < 1) {
    fprintf(stderr, "usage: traceNotify [-l] [-v] [-p] [-s] [-t THREADS] COMMAND [ARGS...]\n");
    return 2;
  }
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) {
    perror("traceNotify: seccomp(SECCOMP_GET_NOTIF_SIZES)");
    return 126;
  }
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    perror("traceNotify: socketpair");
    return 126;
  }
  pid_t root = fork();
  if (root == 0) {
    close(pair[0]);
    int fd = install_filter();
    send_fd(pair[1], fd);
    close(fd);
    close(pair[1]);
    // This execve is itself notified: the parent is already receiving by then.
    execvp(argv[first], argv + first);
    perror("traceNotify: exec");
    _exit(127);
  }
  close(pair[1]);
  listener = recv_fd(pair[0]);
  close(pair[0]);
  if (listener < 0) {
    // The child could not install the filter (it said why) and exited.
    int status;
    waitpid(root, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 126;
  }
  if (sync_wake && ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) != 0)
    perror("traceNotify: SECCOMP_IOCTL_NOTIF_SET_FLAGS (Linux >= 6.6), going on without");
  pthread_t *workers = calloc((size_t)threads, sizeof *workers);
  for (int i = 1; i < threads; i++) pthread_create(&workers[i], NULL, supervise, NULL);
  // The root is reaped here, in its own thread's stead: the listener only ends once every task
  // using the filter has been reaped; orphaned descendants are reaped by init.
  root_pid = root;
  pthread_t reaper;
  pthread_create(&reaper, NULL, reap, NULL);
  supervise(NULL);
  pthread_join(reaper, NULL);
  // Not joined: another supervisor thread may be blocked in RECV, which the end of the listener
  // does not wake. Returning from main ends them.
  fprintf(stderr, "traceNotify: %ld notified calls, %ld no longer valid after the read%s\n",
          __atomic_load_n(&calls, __ATOMIC_RELAXED), __atomic_load_n(&invalid, __ATOMIC_RELAXED),
          lookup ? ", each path looked up" : "");
  return WIFEXITED(root_status) ? WEXITSTATUS(root_status) : 128 + WTERMSIG(root_status);
}
