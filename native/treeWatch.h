// A recursive inotify watcher (src/observer/nativeTreeWatcher.ts): every directory under a root
// watched, each event handed on as soon as the kernel queues it. @parcel/watcher holds each batch
// at least 50 ms (its debounce), and every answer that waits for a barrier waited that long.
#ifndef VOUCH_TREE_WATCH_H
#define VOUCH_TREE_WATCH_H

#include <stddef.h>

typedef enum { TW_CREATE, TW_UPDATE, TW_DELETE } TreeWatchType;

// What a batch carries: events; the first walk done (ready); a failure (the message says which);
// events lost (the kernel's queue overflowed, or the reader fell too far behind).
typedef enum { TW_EVENTS, TW_READY, TW_ERROR, TW_OVERFLOW } TreeWatchKind;

typedef struct {
  TreeWatchType type;
  char *path;
} TreeWatchEvent;

typedef struct {
  TreeWatchKind kind;
  int error_number;  // TW_ERROR: the errno, when one caused it
  char *message;     // TW_ERROR
  TreeWatchEvent *events;
  size_t count;
} TreeWatchBatch;

typedef struct TreeWatch TreeWatch;

// Called on the watcher's thread with each batch; the callee owns it (tree_watch_free_batch).
typedef void (*TreeWatchSink)(void *context, TreeWatchBatch *batch);

// Starts watching `root` on a thread of its own: the first batch is TW_READY once every directory
// is watched, or TW_ERROR. NULL when the thread cannot start (errno says why).
TreeWatch *tree_watch_start(const char *root, TreeWatchSink sink, void *context);

// Stops the thread and closes the inotify instance (which drops every watch); no batch follows.
void tree_watch_stop(TreeWatch *watch);

void tree_watch_free_batch(TreeWatchBatch *batch);

#endif
