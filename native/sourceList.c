#define _GNU_SOURCE
#include "sourceList.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
  char *data;
  size_t length, capacity;
} Bytes;

static void bytes_read(Bytes *bytes, int fd, int *open) {
  if (bytes->capacity - bytes->length < 65536) {
    size_t capacity = bytes->capacity ? bytes->capacity * 2 : 262144;
    char *grown = realloc(bytes->data, capacity);
    if (!grown) abort();
    bytes->data = grown;
    bytes->capacity = capacity;
  }
  ssize_t count = read(fd, bytes->data + bytes->length, bytes->capacity - bytes->length);
  if (count > 0) bytes->length += (size_t)count;
  else if (count == 0 || (errno != EINTR && errno != EAGAIN)) *open = 0;
}

// Both pipes are drained together: git blocks on a full stderr as readily as on a full stdout.
static void drain(int out_fd, int err_fd, Bytes *out, Bytes *err) {
  int out_open = 1, err_open = 1;
  while (out_open || err_open) {
    struct pollfd fds[2] = {{.fd = out_open ? out_fd : -1, .events = POLLIN}, {.fd = err_open ? err_fd : -1, .events = POLLIN}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents) bytes_read(out, out_fd, &out_open);
    if (fds[1].revents) bytes_read(err, err_fd, &err_open);
  }
}

void source_list(SourceList *list, const char *root, char *const envp[], int threads) {
  list->exit_status = -1;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    list->spawn_errno = errno;
    return;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    list->spawn_errno = errno;
    close(out_pipe[0]);
    close(out_pipe[1]);
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  char *argv[] = {"git", "-C", (char *)root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", NULL};
  pid_t pid;
  int spawned = posix_spawnp(&pid, "git", &actions, NULL, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (spawned != 0) {
    list->spawn_errno = spawned;
    close(out_pipe[0]);
    close(err_pipe[0]);
    return;
  }
  Bytes out = {0}, err = {0};
  drain(out_pipe[0], err_pipe[0], &out, &err);
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  pid_t waited;
  do waited = waitpid(pid, &status, 0);
  while (waited < 0 && errno == EINTR);
  list->out = out.data;
  list->out_length = out.length;
  list->err = err.data;
  list->err_length = err.length;
  // Reaped by someone else, git's status is unknown: its output is not trusted.
  if (waited < 0) {
    list->spawn_errno = errno;
    return;
  }
  if (WIFSIGNALED(status)) {
    list->term_signal = WTERMSIG(status);
    return;
  }
  list->exit_status = WEXITSTATUS(status);
  if (list->exit_status != 0) return;

  // Every path git wrote ends in a NUL; anything after the last one is not a path.
  size_t count = 0;
  for (size_t index = 0; index < out.length; index++) count += out.data[index] == '\0';
  list->stats.paths = calloc(count ? count : 1, sizeof(char *));
  if (!list->stats.paths) abort();
  for (size_t index = 0, start = 0; index < out.length; index++) {
    if (out.data[index] != '\0') continue;
    list->stats.paths[list->stats.count++] = out.data + start;
    start = index + 1;
  }
  path_stats(&list->stats, root, threads);
}

void source_list_free(SourceList *list) {
  path_stats_free(&list->stats);
  free(list->stats.paths);
  free(list->out);
  free(list->err);
  memset(list, 0, sizeof *list);
}
