// vouch_hook: the hook's front door, a small program instead of a Node process per shell command.
//
//   vouch_hook NODE MAIN hook HOST [--shadow]
//   vouch_hook NODE MAIN run CHECK [--if-due]     (what a rewritten command runs; clientRun.c)
//
// It reads the host's event from stdin and hands it, with its argv, cwd and environment, to a
// resident hook server (src/agents/hookServer.ts) over a unix socket, then prints the server's
// answer. The server runs the same decision as `NODE MAIN hook HOST`, in a process that has its
// modules loaded already. Whenever no server answers, this program execs exactly that command with
// the same stdin, so the agent gets the Node hook's answer; when there was no server at all, it
// adds `--serve SOCKET` and the Node hook starts one for the next call.
//
// The socket lives in a directory only this user can enter, named after a digest of NODE, MAIN
// and the whole environment: a server answers only for callers with its exact environment, and
// checks that again on every request.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clientRun.h"
#include "deadline.h"

extern char **environ;

// The Node hook gives up on stdin past these (src/cli/commands/hook.ts); so does this program.
#define STDIN_MAX_BYTES (16u * 1024 * 1024)
#define STDIN_TIMEOUT_MS 5000
#define ANSWER_MAX_BYTES (16u * 1024 * 1024)
// Under the 10 s a SessionStart handler is given (src/agents/setup/host.ts), so that the Node hook
// still has time to answer after a hung server.
#define DEFAULT_TIMEOUT_MS 5000
#define MAGIC "VHK1"

typedef struct {
  char *data;
  size_t length, capacity;
} Bytes;

static int grow(Bytes *bytes, size_t more) {
  if (bytes->length + more <= bytes->capacity) return 0;
  size_t capacity = bytes->capacity ? bytes->capacity : 4096;
  while (capacity < bytes->length + more) capacity *= 2;
  char *data = realloc(bytes->data, capacity);
  if (!data) return -1;
  bytes->data = data;
  bytes->capacity = capacity;
  return 0;
}

static int append(Bytes *bytes, const void *data, size_t length) {
  if (grow(bytes, length) != 0) return -1;
  memcpy(bytes->data + bytes->length, data, length);
  bytes->length += length;
  return 0;
}

static void put_u32(char *at, uint32_t value) {
  for (int i = 0; i < 4; i++) at[i] = (char)(unsigned char)(value >> (8 * i));
}

static int append_u32(Bytes *bytes, uint32_t value) {
  char le[4];
  put_u32(le, value);
  return append(bytes, le, 4);
}

static int append_field(Bytes *bytes, const void *data, size_t length) {
  if (length > UINT32_MAX) return -1;
  return append_u32(bytes, (uint32_t)length) || append(bytes, data, length);
}

static uint32_t read_u32(const unsigned char *at) { return (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24; }

// All of stdin: 0, or -1 when it fails, is too large or does not end in time (the Node hook then
// prints nothing and exits 0, and so does this program).
static int read_stdin(Bytes *input) {
  long long deadline = now_ms() + STDIN_TIMEOUT_MS;
  for (;;) {
    if (grow(input, 65536) != 0) return -1;
    ssize_t got = read(0, input->data + input->length, input->capacity - input->length);
    if (got > 0) {
      input->length += (size_t)got;
      if (input->length > STDIN_MAX_BYTES) return -1;
      continue;
    }
    if (got == 0) return 0;
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return -1;
    if (wait_for(0, POLLIN, deadline) != 1) return -1;
  }
}

// FNV-1a, 64 bits (http://www.isthe.com/chongo/tech/comp/fnv/): a name, not a secret; the server
// compares the whole environment itself.
static uint64_t fnv1a(uint64_t hash, const char *data, size_t length) {
  for (size_t i = 0; i < length; i++) {
    hash ^= (unsigned char)data[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

static int compare_entries(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static const char *env_value(const char *name) {
  const char *value = getenv(name);
  return value && value[0] == '/' ? value : NULL;
}

// Where the server for this NODE, MAIN and environment listens: a directory only this user can
// enter. 1 with `path` filled, 0 when there can be none here (no such directory can be named).
static int socket_path(char *path, size_t size, char *dir, size_t dir_size, const char *node, const char *main_script) {
  const char *runtime = env_value("XDG_RUNTIME_DIR");
  const char *cache = env_value("XDG_CACHE_HOME");
  const char *home = env_value("HOME");
  int n;
  if (runtime) n = snprintf(dir, dir_size, "%s/vouch", runtime);
  else if (cache) n = snprintf(dir, dir_size, "%s/vouch", cache);
  else if (home) n = snprintf(dir, dir_size, "%s/.cache/vouch", home);
  else return 0;
  if (n < 0 || (size_t)n >= dir_size) return 0;
  size_t count = 0;
  while (environ[count]) count++;
  const char **entries = malloc((count + 1) * sizeof *entries);
  if (!entries) return 0;
  memcpy(entries, environ, count * sizeof *entries);
  qsort(entries, count, sizeof *entries, compare_entries);
  uint64_t hash = 0xcbf29ce484222325ULL;
  hash = fnv1a(hash, node, strlen(node) + 1);
  hash = fnv1a(hash, main_script, strlen(main_script) + 1);
  for (size_t i = 0; i < count; i++) hash = fnv1a(hash, entries[i], strlen(entries[i]) + 1);
  free(entries);
  n = snprintf(path, size, "%s/hook-%016llx.sock", dir, (unsigned long long)hash);
  return n > 0 && (size_t)n < size && (size_t)n < sizeof(((struct sockaddr_un *)0)->sun_path);
}

typedef enum { ASK_ANSWERED, ASK_ABSENT, ASK_FAILED } AskOutcome;

// A directory or socket another user could have made is never trusted.
static AskOutcome check_owned(const char *dir, const char *path) {
  struct stat info;
  if (lstat(dir, &info) != 0) return errno == ENOENT ? ASK_ABSENT : ASK_FAILED;
  if (!S_ISDIR(info.st_mode) || info.st_uid != getuid() || (info.st_mode & 077) != 0) return ASK_FAILED;
  if (lstat(path, &info) != 0) return errno == ENOENT ? ASK_ABSENT : ASK_FAILED;
  if (!S_ISSOCK(info.st_mode) || info.st_uid != getuid()) return ASK_FAILED;
  return ASK_ANSWERED;
}

static AskOutcome send_request(int fd, const char *path, const Bytes *request, long long deadline) {
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  memcpy(address.sun_path, path, strlen(path) + 1);
  if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
    if (errno == ENOENT || errno == ECONNREFUSED) return ASK_ABSENT;
    return ASK_FAILED;
  }
  for (size_t sent = 0; sent < request->length;) {
    ssize_t wrote = send(fd, request->data + sent, request->length - sent, MSG_NOSIGNAL);
    if (wrote > 0) {
      sent += (size_t)wrote;
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN || wait_for(fd, POLLOUT, deadline) != 1) return ASK_FAILED;
  }
  return ASK_ANSWERED;
}

// Reads until the server closes, or `limit` bytes when limit is not 0.
static AskOutcome receive(int fd, Bytes *answer, size_t limit, long long deadline) {
  for (;;) {
    if (limit && answer->length >= limit) return ASK_ANSWERED;
    if (grow(answer, 65536) != 0) return ASK_FAILED;
    size_t room = answer->capacity - answer->length;
    if (limit && room > limit - answer->length) room = limit - answer->length;
    ssize_t got = recv(fd, answer->data + answer->length, room, 0);
    if (got > 0) {
      answer->length += (size_t)got;
      if (answer->length > ANSWER_MAX_BYTES) return ASK_FAILED;
      continue;
    }
    if (got == 0) return limit ? ASK_FAILED : ASK_ANSWERED;
    if (errno == EINTR) continue;
    if (errno != EAGAIN || wait_for(fd, POLLIN, deadline) != 1) return ASK_FAILED;
  }
}

static AskOutcome exchange(int fd, const char *path, const Bytes *request, Bytes *answer, long long deadline) {
  AskOutcome sent = send_request(fd, path, request, deadline);
  return sent == ASK_ANSWERED ? receive(fd, answer, 0, deadline) : sent;
}

// The server's answer: MAGIC, kind (0 answered, 1 ask the Node hook), exit code, stdout, stderr.
// Returns the exit code, or -1 when the answer says to fall back or is malformed.
static int print_answer(const Bytes *answer) {
  const unsigned char *at = (const unsigned char *)answer->data;
  size_t left = answer->length;
  if (left < 16 || memcmp(at, MAGIC, 4) != 0) return -1;
  uint32_t kind = read_u32(at + 4), code = read_u32(at + 8);
  if (kind != 0 || code > 255) return -1;
  at += 12;
  left -= 12;
  uint32_t out_length = read_u32(at);
  if (out_length > left - 4 || left - 4 - out_length < 4) return -1;
  const char *out = (const char *)at + 4;
  at += 4 + out_length;
  left -= 4 + out_length;
  uint32_t err_length = read_u32(at);
  if (err_length != left - 4) return -1;
  const char *err = (const char *)at + 4;
  if (write_fully(1, out, out_length) != 0) return 0;
  write_fully(2, err, err_length);
  return (int)code;
}

// A well-formed hook call: its fallback says it came through this program.
static int through_client = 0;

// Runs the Node hook with the stdin this program read: what the host would have run without it.
// `--client` tells it that this program runs, so that its rewrites run through it too.
static void fall_back(char **argv, int argc, const Bytes *input, const char *serve) {
  // Every argument as given, however many: the Node hook judges a malformed call itself.
  char **args = calloc((size_t)argc + 4, sizeof *args);
  if (!args) _exit(0);
  int n = 0;
  for (int i = 1; i < argc; i++) args[n++] = argv[i];
  if (through_client) args[n++] = "--client";
  if (serve) {
    args[n++] = "--serve";
    args[n++] = (char *)serve;
  }
  args[n] = NULL;
  if (input) {
    int fd = memfd_create("vouch-hook-stdin", 0);
    if (fd < 0 || write_fully(fd, input->data, input->length) != 0 || lseek(fd, 0, SEEK_SET) != 0 || dup2(fd, 0) < 0) _exit(0);
    if (fd != 0) close(fd);
  }
  // execvp: a NODE given without a slash is looked up on PATH, as a shell would.
  execvp(args[0], args);
  // No Node to run: the hook fails open, as the Node hook does on any failure.
  _exit(0);
}

// The request: MAGIC, the length of the rest, then NODE, MAIN, the arguments after them, cwd, the
// environment and stdin, each as a field. 0 when made.
static int make_request(Bytes *request, int argc, char **argv, const Bytes *input) {
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return -1;
  int failed = append(request, MAGIC, 4) || append_u32(request, 0);
  failed = failed || append_field(request, argv[1], strlen(argv[1])) || append_field(request, argv[2], strlen(argv[2]));
  Bytes args = {0};
  for (int i = 3; i < argc && !failed; i++) failed = append(&args, argv[i], strlen(argv[i]) + 1);
  failed = failed || append_field(request, args.data, args.length) || append_field(request, cwd, strlen(cwd));
  Bytes env = {0};
  for (char **entry = environ; *entry && !failed; entry++) failed = append(&env, *entry, strlen(*entry) + 1);
  failed = failed || append_field(request, env.data, env.length) || append_field(request, input->data, input->length);
  free(args.data);
  free(env.data);
  if (failed || request->length - 8 > UINT32_MAX) return -1;
  put_u32(request->data + 4, (uint32_t)(request->length - 8));
  return 0;
}

static long long deadline_from_env(void) {
  const char *timeout_text = getenv("VOUCH_HOOK_CLIENT_TIMEOUT_MS");
  long timeout = timeout_text ? strtol(timeout_text, NULL, 10) : 0;
  return now_ms() + (timeout > 0 ? timeout : DEFAULT_TIMEOUT_MS);
}

// `NODE MAIN run ARGS...` as typed, with `--serve SOCKET` when no server answered there.
static void run_fall_back(int argc, char **argv, const char *serve) {
  char **args = calloc((size_t)argc + 3, sizeof *args);
  if (!args) _exit(70);
  int n = 0;
  for (int i = 1; i < argc; i++) args[n++] = argv[i];
  if (serve) {
    args[n++] = "--serve";
    args[n++] = (char *)serve;
  }
  args[n] = NULL;
  execvp(args[0], args);
  fprintf(stderr, "vouch: cannot start %s: %s\n", args[0], strerror(errno));
  _exit(127);
}

// `vouch_hook NODE MAIN run CHECK [--if-due]`: what a rewritten command runs. The server decides
// and keeps the receipt; the check runs here (clientRun.c). Without a server, Node runs it.
static int run_mode(int argc, char **argv) {
  const char *off = getenv("VOUCH_HOOK_SERVER");
  if (off && strcmp(off, "0") == 0) run_fall_back(argc, argv, NULL);
  char dir[4096], path[4096];
  if (!socket_path(path, sizeof path, dir, sizeof dir, argv[1], argv[2])) run_fall_back(argc, argv, NULL);
  AskOutcome owned = check_owned(dir, path);
  if (owned != ASK_ANSWERED) run_fall_back(argc, argv, owned == ASK_ABSENT ? path : NULL);
  Bytes request = {0}, empty = {0};
  if (make_request(&request, argc, argv, &empty) != 0) run_fall_back(argc, argv, NULL);
  long long deadline = deadline_from_env();
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) run_fall_back(argc, argv, NULL);
  AskOutcome sent = send_request(fd, path, &request, deadline);
  if (sent != ASK_ANSWERED) run_fall_back(argc, argv, sent == ASK_ABSENT ? path : NULL);
  Bytes head = {0};
  if (receive(fd, &head, 8, deadline) != ASK_ANSWERED || memcmp(head.data, MAGIC, 4) != 0 || read_u32((unsigned char *)head.data + 4) != 2) {
    close(fd);
    run_fall_back(argc, argv, NULL);
  }
  int code = client_run(fd, argv[4]);
  close(fd);
  if (code == CLIENT_RUN_FALL_BACK) run_fall_back(argc, argv, NULL);
  return code;
}

int main(int argc, char **argv) {
  if (argc >= 5 && strcmp(argv[3], "run") == 0) return run_mode(argc, argv);
  if (argc < 5) {
    fputs("vouch_hook: run as \"vouch_hook NODE MAIN hook claude|codex [--shadow]\"; \"vouch agent setup\" writes it\n", stderr);
    return 0;
  }
  const char *host = argv[4];
  int well_formed = argc <= 6 && strcmp(argv[3], "hook") == 0 && (strcmp(host, "claude") == 0 || strcmp(host, "codex") == 0) &&
                    (argc == 5 || strcmp(argv[5], "--shadow") == 0);
  through_client = well_formed;
  const char *off = getenv("VOUCH_HOOK_SERVER");
  // The Node hook answers a terminal and a malformed call itself (with a usage line).
  if (!well_formed || isatty(0) || (off && strcmp(off, "0") == 0)) fall_back(argv, argc, NULL, NULL);

  Bytes input = {0};
  int flags = fcntl(0, F_GETFL);
  if (flags >= 0) fcntl(0, F_SETFL, flags | O_NONBLOCK);
  if (read_stdin(&input) != 0) return 0;
  if (flags >= 0) fcntl(0, F_SETFL, flags);

  char dir[4096], path[4096];
  if (!socket_path(path, sizeof path, dir, sizeof dir, argv[1], argv[2])) fall_back(argv, argc, &input, NULL);
  AskOutcome owned = check_owned(dir, path);
  if (owned != ASK_ANSWERED) fall_back(argv, argc, &input, owned == ASK_ABSENT ? path : NULL);

  Bytes request = {0};
  if (make_request(&request, argc, argv, &input) != 0) fall_back(argv, argc, &input, NULL);
  long long deadline = deadline_from_env();
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) fall_back(argv, argc, &input, NULL);
  Bytes answer = {0};
  AskOutcome asked = exchange(fd, path, &request, &answer, deadline);
  close(fd);
  if (asked != ASK_ANSWERED) fall_back(argv, argc, &input, asked == ASK_ABSENT ? path : NULL);
  int code = print_answer(&answer);
  if (code < 0) fall_back(argv, argc, &input, NULL);
  return code;
}
