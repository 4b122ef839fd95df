// A `vouch run` answered by the resident server (src/cli/runServer.ts), with the check's process
// started here, in the caller's own process tree.
//
// The server decides, takes the run's lock, observes the inputs and keeps the receipt; this
// program starts the check, streams its output to the caller and into the run's log, forwards the
// signals a terminal sends, and reports how the check ended. The check is this program's child,
// so a server that dies mid-run costs the receipt, never the check or its output.
//
// After the header ("VHK1", u32 kind 2), the server sends frames: a type byte, a u32 length and
// the payload. 'o' and 'e' are bytes for stdout and stderr, 'x' a u32 exit code (the last frame),
// 's' the check to start: five fields (u32 length and bytes each): executable, argv and
// environment (NUL-terminated entries), cwd, and the log's path. To 's' this program answers 'l'
// (the log could not be opened: a message), 'f' (the check could not start: a message) or 'p' (u32
// process group), then 'd' once the check has ended:
// i32 exit code (-1 when killed), u32 signal, u32 the first signal forwarded (0 for none), and
// why the log is incomplete (an errno name, or empty).
#define _GNU_SOURCE
#include "clientRun.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

// As src/exec/runLog.ts keeps of a log it cannot write to the end.
#define LOG_KEPT_BYTES (64 * 1024)
#define FRAME_MAX_BYTES (64u * 1024 * 1024)

static uint32_t get_u32(const unsigned char *at) { return (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24; }

static void set_u32(unsigned char *at, uint32_t value) {
  for (int i = 0; i < 4; i++) at[i] = (unsigned char)(value >> (8 * i));
}

int write_fully(int fd, const void *data, size_t length) {
  const char *at = data;
  while (length > 0) {
    ssize_t wrote = write(fd, at, length);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    at += wrote;
    length -= (size_t)wrote;
  }
  return 0;
}

static int read_fully(int fd, void *into, size_t length) {
  char *at = into;
  while (length > 0) {
    ssize_t got = read(fd, at, length);
    if (got > 0) {
      at += got;
      length -= (size_t)got;
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == EAGAIN) {
      struct pollfd entry = {.fd = fd, .events = POLLIN};
      if (poll(&entry, 1, -1) < 0 && errno != EINTR) return -1;
      continue;
    }
    return -1;
  }
  return 0;
}

static int send_frame(int sock, char type, const void *payload, uint32_t length) {
  unsigned char head[5] = {(unsigned char)type};
  set_u32(head + 1, length);
  if (send(sock, head, 5, MSG_NOSIGNAL) != 5) return -1;
  const char *at = payload;
  while (length > 0) {
    ssize_t sent = send(sock, at, length, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        struct pollfd entry = {.fd = sock, .events = POLLOUT};
        poll(&entry, 1, -1);
        continue;
      }
      return -1;
    }
    at += sent;
    length -= (uint32_t)sent;
  }
  return 0;
}

// The n-th field of a payload of length-prefixed fields; 0 when it is there.
static int field(const unsigned char *payload, uint32_t length, int n, const char **data, uint32_t *size) {
  uint32_t at = 0;
  for (int i = 0;; i++) {
    if (length - at < 4) return -1;
    uint32_t next = get_u32(payload + at);
    if (next > length - at - 4) return -1;
    if (i == n) {
      *data = (const char *)payload + at + 4;
      *size = next;
      return 0;
    }
    at += 4 + next;
  }
}

// NUL-terminated entries as a NULL-terminated array (pointing into `data`, which must end in NUL).
static char **entries(const char *data, uint32_t size) {
  size_t count = 0;
  for (uint32_t i = 0; i < size; i++) count += data[i] == '\0';
  char **list = calloc(count + 1, sizeof *list);
  if (!list) return NULL;
  size_t n = 0;
  for (uint32_t i = 0; i < size; i += (uint32_t)strlen(data + i) + 1) list[n++] = (char *)data + i;
  return list;
}

static char *copy_text(const char *data, uint32_t size) {
  char *text = malloc((size_t)size + 1);
  if (!text) return NULL;
  memcpy(text, data, size);
  text[size] = '\0';
  return text;
}

typedef struct {
  int fd;
  size_t written;
  const char *failure;
} Log;

static void log_write(Log *log, const char *data, size_t length) {
  if (log->fd < 0) return;
  if (write_fully(log->fd, data, length) == 0) {
    log->written += length;
    return;
  }
  // As runLog.ts does: the head stays readable, and the space goes back for the receipt.
  log->failure = strerrorname_np(errno);
  if (!log->failure) log->failure = "EIO";
  if (ftruncate(log->fd, (off_t)(log->written < LOG_KEPT_BYTES ? log->written : LOG_KEPT_BYTES)) != 0) {
    // the log stays as it is; the receipt says it is incomplete either way
  }
  close(log->fd);
  log->fd = -1;
}

typedef struct {
  int exit_code;  // -1 when killed by a signal
  int signal;
  int interrupted;
} Ended;

// Starts the check the 's' frame describes, streams it and waits for it. 0 when it ran, 1 when
// it could not start (told to the server), -1 on a malformed frame or a lost server.
static int run_check(int sock, const unsigned char *payload, uint32_t length, Ended *ended, int *server_gone) {
  const char *exe, *argv_data, *env_data, *cwd_data, *log_data;
  uint32_t exe_size, argv_size, env_size, cwd_size, log_size;
  if (field(payload, length, 0, &exe, &exe_size) || field(payload, length, 1, &argv_data, &argv_size) || field(payload, length, 2, &env_data, &env_size) ||
      field(payload, length, 3, &cwd_data, &cwd_size) || field(payload, length, 4, &log_data, &log_size))
    return -1;
  if (argv_size == 0 || argv_data[argv_size - 1] != '\0' || (env_size > 0 && env_data[env_size - 1] != '\0')) return -1;
  char *executable = copy_text(exe, exe_size), *cwd = copy_text(cwd_data, cwd_size), *log_path = copy_text(log_data, log_size);
  char **argv = entries(argv_data, argv_size), **envp = entries(env_data, env_size);
  if (!executable || !cwd || !log_path || !argv || !envp) return -1;

  // The server made the log, empty and owner-only, through no link; it is opened here the same way.
  Log log = {.fd = open(log_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC), .written = 0, .failure = NULL};
  if (log.fd < 0) {
    char message[512];
    int n = snprintf(message, sizeof message, "cannot open the run's log %s: %s", log_path, strerror(errno));
    // 'l', not 'f': vouch's own failure before the check started, which leaves no receipt, as a log
    // that cannot be opened does in `vouch run` (src/exec/runCheck.ts).
    return send_frame(sock, 'l', message, (uint32_t)(n < 0 ? 0 : n)) == 0 ? 1 : -1;
  }

  int out[2], err[2], status[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(status, O_CLOEXEC)) return -1;
  // The signals a terminal sends come through a signalfd while the check runs: blocked here, and
  // unblocked in the child before exec.
  sigset_t forwarded, previous;
  sigemptyset(&forwarded);
  int names[] = {SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGCONT};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) sigaddset(&forwarded, names[i]);
  sigprocmask(SIG_BLOCK, &forwarded, &previous);
  int signals = signalfd(-1, &forwarded, SFD_CLOEXEC);

  pid_t pid = fork();
  if (pid == 0) {
    // setsid(2): the check leads its own process group, which signals and a lost caller reach whole.
    setsid();
    int null = open("/dev/null", O_RDONLY);
    // No terminal on stdin, as src/exec/spawnCheck.ts: a runner that would watch runs once.
    if (null < 0 || dup2(null, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0 || chdir(cwd) != 0) {
      int failure = errno;
      write_fully(status[1], &failure, sizeof failure);
      _exit(127);
    }
    // The check gets the default SIGPIPE this program ignores, as libuv's children do.
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &previous, NULL);
    execve(executable, argv, envp);
    int failure = errno;
    write_fully(status[1], &failure, sizeof failure);
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  close(status[1]);
  int failure = 0;
  ssize_t got = pid < 0 ? -1 : read(status[0], &failure, sizeof failure);
  close(status[0]);
  if (pid < 0 || got == (ssize_t)sizeof failure) {
    if (pid < 0) failure = errno;
    else waitpid(pid, NULL, 0);
    // Node's words for it (spawnCheck.ts reports child_process's error): "spawn PATH ENOENT".
    const char *code = strerrorname_np(failure);
    char message[4200];
    int n = snprintf(message, sizeof message, "spawn %s %s", executable, code ? code : "EIO");
    char line[4400];
    int m = snprintf(line, sizeof line, "vouch: cannot start %s: %s\n", argv[0], message);
    log_write(&log, line, (size_t)(m < 0 ? 0 : m));
    if (log.fd >= 0) close(log.fd);
    close(out[0]);
    close(err[0]);
    if (signals >= 0) close(signals);
    sigprocmask(SIG_SETMASK, &previous, NULL);
    return send_frame(sock, 'f', message, (uint32_t)(n < 0 ? 0 : n)) == 0 ? 1 : -1;
  }
  unsigned char group[4];
  set_u32(group, (uint32_t)pid);
  if (send_frame(sock, 'p', group, 4) != 0) *server_gone = 1;

  int interrupted = 0;
  int open_pipes = 2;
  char buffer[65536];
  while (open_pipes > 0) {
    struct pollfd fds[4] = {
        {.fd = out[0], .events = POLLIN},
        {.fd = err[0], .events = POLLIN},
        {.fd = signals, .events = POLLIN},
        {.fd = *server_gone ? -1 : sock, .events = POLLIN},
    };
    if (poll(fds, 4, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; i++) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(fds[i].fd);
        if (i == 0) out[0] = -1;
        else err[0] = -1;
        open_pipes--;
        continue;
      }
      // A closed stdout (a pager quit) must not stop the check's log or the run.
      write_fully(i == 0 ? 1 : 2, buffer, (size_t)n);
      log_write(&log, buffer, (size_t)n);
    }
    if (fds[2].revents & POLLIN) {
      struct signalfd_siginfo info;
      if (read(signals, &info, sizeof info) == (ssize_t)sizeof info) {
        int sig = (int)info.ssi_signo;
        if (sig == SIGTSTP) {
          // Ctrl-Z: the check, out of the terminal's foreground group, is stopped with this program.
          kill(-pid, SIGSTOP);
          raise(SIGSTOP);
        } else if (sig == SIGCONT) {
          kill(-pid, SIGCONT);
        } else {
          if (!interrupted) interrupted = sig;
          kill(-pid, sig);
        }
      }
    }
    if (fds[3].fd >= 0 && (fds[3].revents & (POLLIN | POLLHUP | POLLERR))) {
      // The server says nothing while the check runs: readable means it is gone.
      char ignored;
      if (recv(sock, &ignored, 1, MSG_PEEK | MSG_DONTWAIT) <= 0) *server_gone = 1;
    }
  }
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (log.fd >= 0 && close(log.fd) != 0 && !log.failure) log.failure = strerrorname_np(errno);
  if (signals >= 0) close(signals);
  sigprocmask(SIG_SETMASK, &previous, NULL);
  ended->exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
  ended->signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
  ended->interrupted = interrupted;

  const char *why = log.failure ? log.failure : "";
  size_t why_size = strlen(why);
  unsigned char *done = malloc(12 + 4 + why_size);
  if (!done) return -1;
  set_u32(done, (uint32_t)ended->exit_code);
  set_u32(done + 4, (uint32_t)ended->signal);
  set_u32(done + 8, (uint32_t)ended->interrupted);
  set_u32(done + 12, (uint32_t)why_size);
  memcpy(done + 16, why, why_size);
  if (!*server_gone && send_frame(sock, 'd', done, (uint32_t)(16 + why_size)) != 0) *server_gone = 1;
  free(done);
  return 0;
}

int client_run(int sock, const char *check) {
  // A reader that quits early (`| head -5`) must cost neither the check nor its receipt: the output
  // goes on into the log, as `vouch run` does.
  signal(SIGPIPE, SIG_IGN);
  int started = 0, server_gone = 0;
  Ended ended = {0};
  unsigned char head[5];
  for (;;) {
    if (server_gone || read_fully(sock, head, 5) != 0) break;
    uint32_t length = get_u32(head + 1);
    if (length > FRAME_MAX_BYTES) break;
    unsigned char *payload = malloc(length ? length : 1);
    if (!payload || read_fully(sock, payload, length) != 0) {
      free(payload);
      break;
    }
    switch (head[0]) {
      case 'o':
      case 'e':
        write_fully(head[0] == 'o' ? 1 : 2, payload, length);
        break;
      case 'x': {
        int code = length == 4 ? (int)get_u32(payload) : 70;
        free(payload);
        return code > 255 ? 255 : code;
      }
      case 's': {
        if (started) {
          free(payload);
          goto lost;
        }
        int outcome = run_check(sock, payload, length, &ended, &server_gone);
        if (outcome < 0 && !server_gone) {
          free(payload);
          goto lost;
        }
        started = outcome == 0;
        break;
      }
      default:
        free(payload);
        goto lost;
    }
    free(payload);
  }
lost:
  // Before the check started nothing ran: the caller runs the Node command instead.
  if (!started) return CLIENT_RUN_FALL_BACK;
  fprintf(stderr, "vouch: the resident server ended while %s ran, so no receipt was kept; \"vouch run %s\" runs it again\n", check, check);
  return ended.exit_code >= 0 ? ended.exit_code : 128 + ended.signal;
}
