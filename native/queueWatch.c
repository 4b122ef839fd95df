// inotify(7): "ioctl(fd, FIONREAD, &numbytes) returns the number of bytes available to read",
// and when the queue holds max_queued_events events the kernel drops what follows (IN_Q_OVERFLOW,
// which @parcel/watcher does not report). A queue sampled at short intervals and never found
// near its limit cannot have overflowed in between, unless events came faster than any machine
// makes them; a round late (this thread descheduled, the process stopped) proves nothing, and
// is counted as a gap.
#include "queueWatch.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t thread;
static int started;
static int watched[QUEUE_WATCH_MAX_FDS];
static int watched_count;
static int64_t interval, max_gap, limit;
static QueueWindow window;
static int64_t last_round;

static int64_t now_ns(void) {
  struct timespec at;
  clock_gettime(CLOCK_MONOTONIC, &at);
  return (int64_t)at.tv_sec * 1000000000 + at.tv_nsec;
}

static void *loop(void *unused) {
  (void)unused;
  for (;;) {
    pthread_mutex_lock(&lock);
    int64_t now = now_ns();
    if (last_round != 0 && now - last_round > max_gap) window.gaps++;
    if (last_round != 0 && now - last_round > window.longest_gap_ns) window.longest_gap_ns = now - last_round;
    for (int i = 0; i < watched_count; i++) {
      int waiting = 0;
      if (ioctl(watched[i], FIONREAD, &waiting) != 0) {
        window.failures++;
        continue;
      }
      if (waiting > window.max_bytes) window.max_bytes = waiting;
      if (waiting > limit) window.over++;
    }
    window.samples++;
    last_round = now;
    struct timespec pause = {interval / 1000000000, interval % 1000000000};
    pthread_mutex_unlock(&lock);
    nanosleep(&pause, NULL);
  }
  return NULL;
}

int queue_watch(const int *fds, int count, int64_t interval_ns, int64_t max_gap_ns, int64_t limit_bytes) {
  if (count > QUEUE_WATCH_MAX_FDS) count = QUEUE_WATCH_MAX_FDS;
  pthread_mutex_lock(&lock);
  memcpy(watched, fds, sizeof(int) * (size_t)count);
  watched_count = count;
  interval = interval_ns;
  max_gap = max_gap_ns;
  limit = limit_bytes;
  memset(&window, 0, sizeof window);
  last_round = 0;
  int error = 0;
  if (!started) {
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    error = pthread_create(&thread, &attributes, loop, NULL);
    pthread_attr_destroy(&attributes);
    started = error == 0;
  }
  pthread_mutex_unlock(&lock);
  return error;
}

QueueWindow queue_watch_take(void) {
  pthread_mutex_lock(&lock);
  QueueWindow taken = window;
  taken.fds = watched_count;
  taken.idle_ns = last_round == 0 ? -1 : now_ns() - last_round;
  if (taken.idle_ns > taken.longest_gap_ns) taken.longest_gap_ns = taken.idle_ns;
  memset(&window, 0, sizeof window);
  pthread_mutex_unlock(&lock);
  return taken;
}

int queue_watch_active(void) {
  pthread_mutex_lock(&lock);
  int active = started;
  pthread_mutex_unlock(&lock);
  return active;
}
