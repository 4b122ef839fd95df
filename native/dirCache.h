// Directory listings kept between scans, each bound to its directory's identity. Creating,
// removing or renaming an entry changes a directory's mtime and ctime, so a directory whose
// identity is unchanged, and was not racy when listed, still holds the names it held. The files
// themselves are stat'ed every time: an in-place write changes no directory.
#ifndef VOUCH_DIR_CACHE_H
#define VOUCH_DIR_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  const char *name;
  uint16_t length;
  uint8_t is_dir;
} DirChild;

typedef struct {
  const char *path;
  uint32_t path_length;
  uint64_t dev, ino;
  int64_t mtime_ns, ctime_ns;
  uint32_t child_count;
  DirChild *children;
} DirListing;

typedef struct {
  char *data; // the file as read; loaded names point into it
  DirListing *listings;
  size_t count;
  size_t *slots; // open addressing: index + 1, or 0
  size_t slot_count;
} DirCache;

// Loads the cache file; a missing, foreign or damaged file gives an empty cache.
void dir_cache_load(DirCache *cache, const char *file);
const DirListing *dir_cache_find(const DirCache *cache, const char *path, uint32_t length);
// Replaces the file atomically (a temporary file, then rename). Failures are ignored: the cache
// only saves work.
void dir_cache_save(const char *file, const DirListing *const *listings, size_t count);
void dir_cache_free(DirCache *cache);

#endif
