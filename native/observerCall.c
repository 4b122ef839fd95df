#include "observerCall.h"
#include "deadline.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static void fail(ObserverReply *reply, CallOutcome outcome, int error_number) {
  reply->outcome = outcome;
  reply->error_number = error_number;
}

static void exchange(ObserverReply *reply, int fd, const char *socket_path, const char *request, size_t request_length,
                     long long deadline, size_t max_bytes) {
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  size_t path_length = strlen(socket_path);
  if (path_length >= sizeof address.sun_path) return fail(reply, CALL_ERROR, ENAMETOOLONG);
  memcpy(address.sun_path, socket_path, path_length + 1);
  if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
    if (errno == ENOENT || errno == ECONNREFUSED) return fail(reply, CALL_REFUSED, errno);
    // EAGAIN on a Unix socket is a full backlog, and the socket is left unconnected: an error, as
    // node:net reports it. Only a connect in progress is waited for.
    if (errno != EINPROGRESS) return fail(reply, CALL_ERROR, errno);
    int ready = wait_for(fd, POLLOUT, deadline);
    if (ready == 0) return fail(reply, CALL_TIMEOUT, 0);
    int error = 0;
    socklen_t size = sizeof error;
    if (ready < 0) error = errno;
    else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0) error = errno;
    if (error == ECONNREFUSED || error == ENOENT) return fail(reply, CALL_REFUSED, error);
    if (error) return fail(reply, CALL_ERROR, error);
  }
  for (size_t sent = 0; sent < request_length;) {
    ssize_t wrote = send(fd, request + sent, request_length - sent, MSG_NOSIGNAL);
    if (wrote > 0) {
      sent += (size_t)wrote;
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EPIPE || errno == ECONNRESET) return fail(reply, CALL_CLOSED, errno);
    if (errno != EAGAIN) return fail(reply, CALL_ERROR, errno);
    int ready = wait_for(fd, POLLOUT, deadline);
    if (ready <= 0) return fail(reply, ready == 0 ? CALL_TIMEOUT : CALL_ERROR, ready == 0 ? 0 : errno);
  }
  size_t capacity = 64 * 1024, length = 0;
  char *buffer = malloc(capacity);
  if (!buffer) return fail(reply, CALL_ERROR, ENOMEM);
  for (;;) {
    if (length == capacity) {
      if (capacity >= max_bytes + 1) {
        free(buffer);
        return fail(reply, CALL_OVERSIZED, 0);
      }
      capacity = capacity * 2 > max_bytes + 1 ? max_bytes + 1 : capacity * 2;
      char *grown = realloc(buffer, capacity);
      if (!grown) {
        free(buffer);
        return fail(reply, CALL_ERROR, ENOMEM);
      }
      buffer = grown;
    }
    ssize_t got = recv(fd, buffer + length, capacity - length, 0);
    if (got > 0) {
      char *end = memchr(buffer + length, '\n', (size_t)got);
      length += (size_t)got;
      if (end) {
        reply->reply_length = (size_t)(end - buffer);
        if (reply->reply_length > max_bytes) break;
        reply->reply = buffer;
        reply->outcome = CALL_ANSWERED;
        return;
      }
      continue;
    }
    if (got == 0) {
      free(buffer);
      return fail(reply, CALL_CLOSED, 0);
    }
    if (errno == EINTR) continue;
    if (errno == ECONNRESET) {
      free(buffer);
      return fail(reply, CALL_CLOSED, errno);
    }
    if (errno != EAGAIN) {
      int error = errno;
      free(buffer);
      return fail(reply, CALL_ERROR, error);
    }
    int ready = wait_for(fd, POLLIN, deadline);
    if (ready <= 0) {
      int error = errno;
      free(buffer);
      return fail(reply, ready == 0 ? CALL_TIMEOUT : CALL_ERROR, ready == 0 ? 0 : error);
    }
  }
  free(buffer);
  fail(reply, CALL_OVERSIZED, 0);
}

void observer_call(ObserverReply *reply, const char *socket_path, const char *request, size_t request_length, int deadline_ms,
                   size_t max_bytes) {
  memset(reply, 0, sizeof *reply);
  long long deadline = now_ms() + (deadline_ms > 0 ? deadline_ms : 0);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(reply, CALL_ERROR, errno);
  exchange(reply, fd, socket_path, request, request_length, deadline, max_bytes);
  close(fd);
}
