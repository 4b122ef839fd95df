// One request to the observer over its unix socket, answered synchronously: a command-line process
// has nothing else to do meanwhile, and Node's net and stream modules cost more to load than the
// whole exchange (src/observer/client.ts).
#ifndef VOUCH_OBSERVER_CALL_H
#define VOUCH_OBSERVER_CALL_H

#include <stddef.h>

typedef enum {
  CALL_ANSWERED,
  CALL_REFUSED,   // no socket, or nobody listening on it
  CALL_TIMEOUT,   // no whole line before the deadline
  CALL_CLOSED,    // the observer closed the connection before a whole line
  CALL_OVERSIZED, // the line is longer than max_bytes
  CALL_ERROR,     // any other failure; error_number says which
} CallOutcome;

typedef struct {
  CallOutcome outcome;
  int error_number;
  char *reply; // CALL_ANSWERED: the first line, without its newline (malloc'd)
  size_t reply_length;
} ObserverReply;

// Connects to socket_path, writes request (which ends in a newline), and reads until the first
// newline, all within deadline_ms.
void observer_call(ObserverReply *reply, const char *socket_path, const char *request, size_t request_length, int deadline_ms,
                   size_t max_bytes);

#endif
