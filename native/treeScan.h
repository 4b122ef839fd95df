// One walk of an install tree: every entry lstat'ed once, on several threads.
#ifndef VOUCH_TREE_SCAN_H
#define VOUCH_TREE_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

enum {
  ENTRY_PLAIN = 0,   // a regular file, one link, ASCII name, settled: its line is final
  ENTRY_SPECIAL = 1, // anything JavaScript must look at itself (links, hard links, racy, odd names)
  ENTRY_DIR = 2,
};

typedef struct {
  const char *path; // root-relative, "/"-separated; NULL for a plain entry, whose line holds it
  uint32_t length;
  uint8_t kind;
  const char *line; // a plain entry's manifest line, rendered on the walking thread
  uint32_t line_length;
} TreeEntry;

typedef struct Block Block;

typedef struct {
  TreeEntry *entries;
  size_t count;
  int failed;            // a directory could not be listed: the caller redoes the walk itself
  char failure[512];
  Block *blocks;         // where the entries' paths and lines live
} TreeScan;

// Walks root/base. Plain entries come back sorted by path (byte order), each directory before
// what it holds. A file whose ctime falls within a tick of observed_at_ns (see
// core/identity.ts) is special. cache_file, when given, holds directory listings between scans
// (dirCache.h); NULL or "" reads every directory.
void tree_scan(TreeScan *scan, const char *root, const char *base, int64_t observed_at_ns, int threads, const char *cache_file);
void tree_scan_free(TreeScan *scan);

#endif
