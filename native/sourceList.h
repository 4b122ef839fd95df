// The project's source files as git lists them, and an lstat of each, all off the JavaScript thread.
#ifndef VOUCH_SOURCE_LIST_H
#define VOUCH_SOURCE_LIST_H

#include <stddef.h>

#include "pathStats.h"

typedef struct {
  int spawn_errno;    // git could not be started (errno), else 0
  int exit_status;    // -1 when git was killed by a signal
  int term_signal;
  char *out;          // git's stdout: NUL-terminated paths
  size_t out_length;
  char *err;          // git's stderr
  size_t err_length;
  PathStats stats;    // one per path in out, in its order; paths point into out
} SourceList;

// Runs `git ls-files -z --cached --others --exclude-standard` in root with envp (which the caller
// builds, so that nothing here reads the environment while JavaScript may change it), then lstat's
// every path on `threads` threads when git succeeded.
void source_list(SourceList *list, const char *root, char *const envp[], int threads);
void source_list_free(SourceList *list);

#endif
