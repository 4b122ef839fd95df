// Samples, on a thread of its own, how many bytes wait unread in each inotify queue of this
// process, to tell when the kernel may have dropped events (src/observer/queueWatch.ts).
#ifndef VOUCH_QUEUE_WATCH_H
#define VOUCH_QUEUE_WATCH_H

#include <stdint.h>

#define QUEUE_WATCH_MAX_FDS 16

typedef struct {
  uint64_t samples;   // rounds of samples taken in the window
  uint64_t gaps;      // times two rounds were further apart than the longest gap allowed
  uint64_t over;      // samples of a queue holding more than the limit
  uint64_t failures;  // samples that failed (a descriptor closed or not a queue)
  int64_t max_bytes;  // the most bytes seen waiting in one queue
  int64_t longest_gap_ns;  // the longest time between two rounds in the window
  int64_t idle_ns;    // time since the last round, when the window was taken
  int fds;            // descriptors watched
} QueueWindow;

// Watches these descriptors from now on (starting the thread on the first call) and begins a
// new window. Returns 0, or an errno when the thread cannot start.
int queue_watch(const int *fds, int count, int64_t interval_ns, int64_t max_gap_ns, int64_t limit_bytes);

// What the current window saw, and a new window begins.
QueueWindow queue_watch_take(void);

// Whether the sampler runs in this process (the observer): its scans then yield to it.
int queue_watch_active(void);

#endif
