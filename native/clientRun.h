// A `vouch run` answered by the resident server, its check started by the hook client (clientRun.c).
#ifndef VOUCH_CLIENT_RUN_H
#define VOUCH_CLIENT_RUN_H

#include <stddef.h>

// client_run's answer when the server stopped before the check started: run the Node command instead.
#define CLIENT_RUN_FALL_BACK (-1)

// Follows the server's frames on `sock` once it has taken the run (header kind 2): the exit code to
// exit with, or CLIENT_RUN_FALL_BACK.
int client_run(int sock, const char *check);

// Writes all of `data` to `fd`, again after EINTR and short writes: 0, or -1 with errno set.
int write_fully(int fd, const void *data, size_t length);

#endif
