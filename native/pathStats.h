// lstat of many root-relative paths, on several threads: each regular file's identity, rendered.
#ifndef VOUCH_PATH_STATS_H
#define VOUCH_PATH_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

typedef struct {
  char **paths;      // borrowed
  size_t count;
  char **identities; // NULL where the path is not a regular file or could not be stat'ed
  uint8_t *executable;
} PathStats;

void path_stats(PathStats *stats, const char *root, int threads);
void path_stats_free(PathStats *stats);
// The longest identity: five 20-digit fields, two signed ones, a mode and six colons.
#define IDENTITY_MAX 160
// core/identity.ts identityOf: dev:ino:size:mode(octal):nlink:mtime_ns:ctime_ns. Writes at most
// IDENTITY_MAX bytes, no NUL, and returns how many.
size_t identity_format(char *out, const struct stat *stats);
// A decimal number, no NUL; returns the end.
char *decimal_format(char *out, unsigned long long value);

#endif
