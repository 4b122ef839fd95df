// inotify(7) watches one directory, not a tree: a new directory is watched when its creation is
// read, and listed then, since whatever was made in it before its watch raised no event; a
// directory moved within the tree keeps its watch (one per inode: inotify_add_watch(2) returns the
// existing one) under its new path; one moved out is no longer watched. IN_Q_OVERFLOW, which
// @parcel/watcher does not report, is a batch of its own.
#define _GNU_SOURCE
#include "treeWatch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define MASK (IN_ATTRIB | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MODIFY | IN_MOVE_SELF | IN_MOVED_FROM | IN_MOVED_TO | IN_DONT_FOLLOW | IN_ONLYDIR | IN_EXCL_UNLINK)

#define BATCH_EVENTS 4096

typedef struct {
  uint32_t cookie;
  char *path;
} MovedFrom;

struct TreeWatch {
  char *root;
  int fd;
  int wake[2];
  pthread_t thread;
  volatile int stopping;
  TreeWatchSink sink;
  void *context;
  char **paths;  // by watch descriptor: the directory's path, or NULL
  int capacity;
  int root_wd;
  MovedFrom *moved;  // directories moved away in the batch being read, until their other half comes
  size_t moved_count, moved_capacity;
  TreeWatchBatch *batch;
  size_t batch_capacity;
  int failed;  // an errno to report after the batch being read (ENOSPC: a new directory found the watch limit)
};

static TreeWatchBatch *new_batch(TreeWatchKind kind) {
  TreeWatchBatch *batch = calloc(1, sizeof *batch);
  if (batch) batch->kind = kind;
  return batch;
}

void tree_watch_free_batch(TreeWatchBatch *batch) {
  if (!batch) return;
  for (size_t i = 0; i < batch->count; i++) free(batch->events[i].path);
  free(batch->events);
  free(batch->message);
  free(batch);
}

static void send(TreeWatch *watch, TreeWatchBatch *batch) {
  if (batch) watch->sink(watch->context, batch);
}

static void send_error(TreeWatch *watch, int error_number, const char *what) {
  TreeWatchBatch *batch = new_batch(TW_ERROR);
  if (!batch) return;
  batch->error_number = error_number;
  size_t length = strlen(what) + 64;
  batch->message = malloc(length);
  if (batch->message) snprintf(batch->message, length, "%s%s%s", what, error_number ? ": " : "", error_number ? strerror(error_number) : "");
  send(watch, batch);
}

/** Events were lost (the kernel's queue overflowed, or memory ran out): the batch being read says only that. */
static void lose(TreeWatch *watch) {
  TreeWatchBatch *batch = watch->batch;
  if (!batch) {
    watch->batch = new_batch(TW_OVERFLOW);
    return;
  }
  for (size_t i = 0; i < batch->count; i++) free(batch->events[i].path);
  free(batch->events);
  batch->events = NULL;
  batch->count = 0;
  batch->kind = TW_OVERFLOW;
  watch->batch_capacity = 0;
}

/** Appends an event to the batch being read; false when memory ran out (the batch is then an overflow). */
static int push(TreeWatch *watch, TreeWatchType type, const char *path) {
  if (!watch->batch) watch->batch = new_batch(TW_EVENTS);
  TreeWatchBatch *batch = watch->batch;
  // Without even a batch to say so, the loss is told at the next flush (`failed`).
  if (!batch) {
    watch->failed = ENOMEM;
    return 0;
  }
  if (batch->kind != TW_EVENTS) return 1;
  if (batch->count == watch->batch_capacity) {
    size_t capacity = watch->batch_capacity ? watch->batch_capacity * 2 : 64;
    TreeWatchEvent *grown = realloc(batch->events, capacity * sizeof *grown);
    if (!grown) goto lost;
    batch->events = grown;
    watch->batch_capacity = capacity;
  }
  char *copy = strdup(path);
  if (!copy) goto lost;
  batch->events[batch->count++] = (TreeWatchEvent){type, copy};
  return 1;
lost:
  lose(watch);
  return 0;
}

static void flush(TreeWatch *watch) {
  TreeWatchBatch *batch = watch->batch;
  watch->batch = NULL;
  watch->batch_capacity = 0;
  if (batch && (batch->count > 0 || batch->kind != TW_EVENTS)) send(watch, batch);
  else tree_watch_free_batch(batch);
  if (watch->failed) {
    send_error(watch, watch->failed, watch->failed == ENOSPC ? "inotify_add_watch" : "watching a new directory");
    watch->failed = 0;
  }
}

static char *join(const char *dir, const char *name, size_t name_length) {
  size_t dir_length = strlen(dir);
  char *path = malloc(dir_length + 1 + name_length + 1);
  if (!path) return NULL;
  memcpy(path, dir, dir_length);
  path[dir_length] = '/';
  memcpy(path + dir_length + 1, name, name_length);
  path[dir_length + 1 + name_length] = '\0';
  return path;
}

static int set_path(TreeWatch *watch, int wd, const char *path) {
  if (wd >= watch->capacity) {
    int capacity = watch->capacity ? watch->capacity : 1024;
    while (capacity <= wd) capacity *= 2;
    char **grown = realloc(watch->paths, (size_t)capacity * sizeof *grown);
    if (!grown) return ENOMEM;
    memset(grown + watch->capacity, 0, (size_t)(capacity - watch->capacity) * sizeof *grown);
    watch->paths = grown;
    watch->capacity = capacity;
  }
  char *copy = strdup(path);
  if (!copy) return ENOMEM;
  free(watch->paths[wd]);
  watch->paths[wd] = copy;
  return 0;
}

static int within(const char *path, const char *dir, size_t dir_length) {
  return strncmp(path, dir, dir_length) == 0 && (path[dir_length] == '\0' || path[dir_length] == '/');
}

/** A directory moved within the tree: its watches, and those below it, under the new path. */
static int rename_tree(TreeWatch *watch, const char *from, const char *to) {
  size_t from_length = strlen(from), to_length = strlen(to);
  for (int wd = 0; wd < watch->capacity; wd++) {
    char *path = watch->paths[wd];
    if (!path || !within(path, from, from_length)) continue;
    size_t rest = strlen(path + from_length);
    char *renamed = malloc(to_length + rest + 1);
    if (!renamed) return ENOMEM;
    memcpy(renamed, to, to_length);
    memcpy(renamed + to_length, path + from_length, rest + 1);
    free(path);
    watch->paths[wd] = renamed;
  }
  return 0;
}

/** A directory moved out of the tree: no longer watched, nor anything below it. */
static void drop_tree(TreeWatch *watch, const char *dir) {
  size_t length = strlen(dir);
  for (int wd = 0; wd < watch->capacity; wd++) {
    if (!watch->paths[wd] || !within(watch->paths[wd], dir, length)) continue;
    inotify_rm_watch(watch->fd, wd);
    free(watch->paths[wd]);
    watch->paths[wd] = NULL;
  }
}

/**
 * Watches a directory and every directory below it; with `announce`, each entry found is a create
 * event (made before its directory's watch, it raised none). 0, or the errno that stops the
 * watching (ENOSPC: the watch limit). A directory gone meanwhile is skipped.
 */
static int watch_tree(TreeWatch *watch, const char *dir, int announce, uint32_t mask) {
  if (watch->stopping) return 0;
  int wd = inotify_add_watch(watch->fd, dir, mask);
  if (wd < 0) return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 : errno;
  int error = set_path(watch, wd, dir);
  if (error) return error;
  DIR *stream = opendir(dir);
  // Unreadable: watched, but what is below it is not (the observer's coverage check names it).
  if (!stream) return 0;
  struct dirent *entry;
  while (!error && (entry = readdir(stream)) != NULL) {
    const char *name = entry->d_name;
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
    char *path = join(dir, name, strlen(name));
    if (!path) {
      error = ENOMEM;
      break;
    }
    if (announce && !push(watch, TW_CREATE, path)) error = ENOMEM;
    int is_dir = entry->d_type == DT_DIR;
    if (entry->d_type == DT_UNKNOWN) {
      struct stat stats;
      is_dir = lstat(path, &stats) == 0 && S_ISDIR(stats.st_mode);
    }
    if (!error && is_dir) error = watch_tree(watch, path, announce, MASK);
    free(path);
  }
  closedir(stream);
  return error;
}

/** Well-formed UTF-8 (RFC 3629): what JavaScript decodes to the same bytes again. */
static int valid_utf8(const unsigned char *text, size_t length) {
  for (size_t i = 0; i < length;) {
    unsigned char c = text[i];
    size_t more = c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : (c >> 4) == 0xe ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 4;
    if (more == 4 || i + more >= length) return 0;
    for (size_t k = 1; k <= more; k++)
      if ((text[i + k] & 0xc0) != 0x80) return 0;
    unsigned char next = more ? text[i + 1] : 0;
    // Overlong forms, UTF-16 surrogates, and code points past U+10FFFF.
    if ((c == 0xe0 && next < 0xa0) || (c == 0xed && next >= 0xa0) || (c == 0xf0 && next < 0x90) || (c == 0xf4 && next >= 0x90)) return 0;
    i += more + 1;
  }
  return 1;
}

static void remember_moved(TreeWatch *watch, uint32_t cookie, const char *path) {
  if (watch->moved_count == watch->moved_capacity) {
    size_t capacity = watch->moved_capacity ? watch->moved_capacity * 2 : 8;
    MovedFrom *grown = realloc(watch->moved, capacity * sizeof *grown);
    if (!grown) return;
    watch->moved = grown;
    watch->moved_capacity = capacity;
  }
  char *copy = strdup(path);
  if (copy) watch->moved[watch->moved_count++] = (MovedFrom){cookie, copy};
}

/** The path a directory moved away from under this cookie, taken from the list; NULL when none. */
static char *take_moved(TreeWatch *watch, uint32_t cookie) {
  for (size_t i = 0; i < watch->moved_count; i++) {
    if (watch->moved[i].cookie != cookie) continue;
    char *path = watch->moved[i].path;
    watch->moved[i] = watch->moved[--watch->moved_count];
    return path;
  }
  return NULL;
}

static void handle(TreeWatch *watch, const struct inotify_event *event) {
  if (event->mask & IN_Q_OVERFLOW) {
    lose(watch);
    return;
  }
  if (event->wd < 0 || event->wd >= watch->capacity || !watch->paths[event->wd]) return;
  const char *dir = watch->paths[event->wd];
  // A file system unmounted under the tree: what is below the mount point now raised no event.
  if (event->mask & IN_UNMOUNT) {
    lose(watch);
    return;
  }
  if (event->mask & IN_IGNORED) {
    free(watch->paths[event->wd]);
    watch->paths[event->wd] = NULL;
    return;
  }
  if (event->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
    // The directory's parent says so for any other; the root's own is the observer's to notice.
    if (event->wd == watch->root_wd) push(watch, TW_DELETE, dir);
    return;
  }
  size_t name_length = event->len ? strnlen(event->name, event->len) : 0;
  // A name that is not UTF-8 cannot reach JavaScript unchanged: its directory stands for it.
  if (name_length > 0 && !valid_utf8((const unsigned char *)event->name, name_length)) {
    push(watch, TW_UPDATE, dir);
    return;
  }
  char *path = name_length ? join(dir, event->name, name_length) : strdup(dir);
  if (!path) {
    push(watch, TW_UPDATE, dir);
    return;
  }
  if (event->mask & (IN_CREATE | IN_MOVED_TO)) {
    push(watch, TW_CREATE, path);
    if (event->mask & IN_ISDIR) {
      // Moved within the tree: its watches follow it. It is walked again all the same: a directory
      // below it that a walk reached by its old path after the move was never watched.
      char *from = (event->mask & IN_MOVED_TO) ? take_moved(watch, event->cookie) : NULL;
      int error = from ? rename_tree(watch, from, path) : 0;
      if (!error) error = watch_tree(watch, path, 1, MASK);
      free(from);
      // A directory not watched whole raises no events from below: the observer must watch again.
      if (error) watch->failed = error;
    }
  } else if (event->mask & (IN_DELETE | IN_MOVED_FROM)) {
    push(watch, TW_DELETE, path);
    if ((event->mask & IN_MOVED_FROM) && (event->mask & IN_ISDIR)) remember_moved(watch, event->cookie, path);
  } else if (event->mask & (IN_MODIFY | IN_ATTRIB)) {
    push(watch, TW_UPDATE, path);
  }
  free(path);
}

/** Directories moved away whose other half did not come with them: moved out of the tree. */
static void settle_moved(TreeWatch *watch) {
  for (size_t i = 0; i < watch->moved_count; i++) {
    drop_tree(watch, watch->moved[i].path);
    free(watch->moved[i].path);
  }
  watch->moved_count = 0;
}

static void *loop(void *argument) {
  TreeWatch *watch = argument;
  // The root must be there, and is followed when it is a link (as a shell's cd does); below it, a
  // link is never followed, and a directory gone meanwhile is only skipped.
  watch->root_wd = inotify_add_watch(watch->fd, watch->root, MASK & ~IN_DONT_FOLLOW);
  int error = watch->root_wd < 0 ? errno : watch_tree(watch, watch->root, 0, MASK & ~IN_DONT_FOLLOW);
  if (error) {
    send_error(watch, error, "inotify_add_watch");
    return NULL;
  }
  send(watch, new_batch(TW_READY));
  // Aligned as inotify(7)'s example: events are read whole, never split across reads.
  char buffer[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
  struct pollfd fds[2] = {{watch->fd, POLLIN, 0}, {watch->wake[0], POLLIN, 0}};
  while (!watch->stopping) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      send_error(watch, errno, "poll");
      return NULL;
    }
    if (fds[1].revents || watch->stopping) break;
    // Read until the queue is empty, then hand over: one batch per burst, in the kernel's order.
    for (;;) {
      ssize_t length = read(watch->fd, buffer, sizeof buffer);
      if (length < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN) send_error(watch, errno, "read");
        break;
      }
      for (char *at = buffer; at < buffer + length;) {
        const struct inotify_event *event = (const struct inotify_event *)at;
        handle(watch, event);
        at += sizeof(struct inotify_event) + event->len;
      }
      // A queue that never empties is handed over in parts, in order, each as it fills.
      if (watch->batch && watch->batch->count >= BATCH_EVENTS) flush(watch);
    }
    settle_moved(watch);
    flush(watch);
  }
  return NULL;
}

TreeWatch *tree_watch_start(const char *root, TreeWatchSink sink, void *context) {
  TreeWatch *watch = calloc(1, sizeof *watch);
  if (!watch) return NULL;
  watch->root = strdup(root);
  watch->sink = sink;
  watch->context = context;
  watch->root_wd = -1;
  watch->wake[0] = watch->wake[1] = -1;
  watch->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  int saved = errno;
  if (!watch->root || watch->fd < 0 || pipe2(watch->wake, O_CLOEXEC) != 0 || (saved = pthread_create(&watch->thread, NULL, loop, watch)) != 0) {
    if (watch->fd >= 0) close(watch->fd);
    if (watch->wake[0] >= 0) close(watch->wake[0]), close(watch->wake[1]);
    free(watch->root);
    free(watch);
    errno = saved ? saved : errno;
    return NULL;
  }
  return watch;
}

void tree_watch_stop(TreeWatch *watch) {
  if (!watch) return;
  watch->stopping = 1;
  ssize_t written = write(watch->wake[1], "x", 1);
  (void)written;
  pthread_join(watch->thread, NULL);
  close(watch->fd);
  close(watch->wake[0]);
  close(watch->wake[1]);
  for (int wd = 0; wd < watch->capacity; wd++) free(watch->paths[wd]);
  free(watch->paths);
  for (size_t i = 0; i < watch->moved_count; i++) free(watch->moved[i].path);
  free(watch->moved);
  tree_watch_free_batch(watch->batch);
  free(watch->root);
  free(watch);
}
