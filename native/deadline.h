// Waiting on one descriptor until a deadline in milliseconds of CLOCK_MONOTONIC: shared by the
// observer call (observerCall.c) and the hook client (hookClient.c), which is built on its own.
#ifndef VOUCH_DEADLINE_H
#define VOUCH_DEADLINE_H

#include <errno.h>
#include <poll.h>
#include <time.h>

static inline long long now_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

// Waits for events on fd until the deadline: 1 when ready, 0 on timeout, -1 on error.
static inline int wait_for(int fd, short events, long long deadline) {
  for (;;) {
    long long left = deadline - now_ms();
    if (left <= 0) return 0;
    struct pollfd entry = {.fd = fd, .events = events};
    int ready = poll(&entry, 1, (int)left);
    if (ready > 0) return 1;
    if (ready == 0) return 0;
    if (errno != EINTR) return -1;
  }
}

#endif
