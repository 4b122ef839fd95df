#define _GNU_SOURCE
#include "pathStats.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  PathStats *stats;
  int root_fd;
  size_t from, to;
} Slice;

static char *put_unsigned(char *out, unsigned long long value, unsigned base) {
  char digits[24];
  int count = 0;
  do {
    digits[count++] = (char)('0' + value % base);
    value /= base;
  } while (value);
  while (count) *out++ = digits[--count];
  return out;
}

static char *put_signed(char *out, long long value) {
  if (value < 0) {
    *out++ = '-';
    return put_unsigned(out, 0ULL - (unsigned long long)value, 10);
  }
  return put_unsigned(out, (unsigned long long)value, 10);
}

// By hand rather than snprintf: this runs once for every installed file, and printf's
// machinery was a fifth of a warm scan.
size_t identity_format(char *out, const struct stat *stats) {
  char *at = out;
  at = put_unsigned(at, (unsigned long long)stats->st_dev, 10);
  *at++ = ':';
  at = put_unsigned(at, (unsigned long long)stats->st_ino, 10);
  *at++ = ':';
  at = put_signed(at, (long long)stats->st_size);
  *at++ = ':';
  at = put_unsigned(at, (unsigned)(stats->st_mode & 07777), 8);
  *at++ = ':';
  at = put_unsigned(at, (unsigned long long)stats->st_nlink, 10);
  *at++ = ':';
  at = put_signed(at, (long long)stats->st_mtim.tv_sec * 1000000000LL + stats->st_mtim.tv_nsec);
  *at++ = ':';
  at = put_signed(at, (long long)stats->st_ctim.tv_sec * 1000000000LL + stats->st_ctim.tv_nsec);
  return (size_t)(at - out);
}

char *decimal_format(char *out, unsigned long long value) {
  return put_unsigned(out, value, 10);
}

static void *stat_slice(void *argument) {
  Slice *slice = argument;
  PathStats *stats = slice->stats;
  char identity[IDENTITY_MAX];
  for (size_t index = slice->from; index < slice->to; index++) {
    struct stat found;
    if (fstatat(slice->root_fd, stats->paths[index], &found, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(found.st_mode)) continue;
    size_t length = identity_format(identity, &found);
    stats->identities[index] = strndup(identity, length);
    stats->executable[index] = (found.st_mode & 0111) != 0;
  }
  return NULL;
}

void path_stats(PathStats *stats, const char *root, int threads) {
  stats->identities = calloc(stats->count ? stats->count : 1, sizeof(char *));
  stats->executable = calloc(stats->count ? stats->count : 1, 1);
  if (!stats->identities || !stats->executable) abort();
  int root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) return; // every path is left to JavaScript, which names the problem
  if (threads < 1) threads = 1;
  if (threads > 16) threads = 16;
  Slice slices[16];
  pthread_t ids[16];
  int started[16] = {0};
  for (int index = 0; index < threads; index++) {
    slices[index] = (Slice){.stats = stats, .root_fd = root_fd, .from = stats->count * index / threads, .to = stats->count * (index + 1) / threads};
  }
  for (int index = 1; index < threads; index++) started[index] = pthread_create(&ids[index], NULL, stat_slice, &slices[index]) == 0;
  stat_slice(&slices[0]);
  for (int index = 1; index < threads; index++) {
    if (started[index]) pthread_join(ids[index], NULL);
    else stat_slice(&slices[index]);
  }
  close(root_fd);
}

void path_stats_free(PathStats *stats) {
  if (stats->identities) {
    for (size_t index = 0; index < stats->count; index++) free(stats->identities[index]);
  }
  free(stats->identities);
  free(stats->executable);
  stats->identities = NULL;
  stats->executable = NULL;
}
