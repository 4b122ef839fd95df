#define _GNU_SOURCE
#include "dirCache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

// 2: each listing's children in the order its paths sort (treeScan.c git_order).
static const char MAGIC[8] = {'V', 'O', 'U', 'C', 'H', 'D', 'C', '2'};

static uint64_t fnv1a(const void *data, size_t size, uint64_t hash) {
  const unsigned char *bytes = data;
  for (size_t index = 0; index < size; index++) hash = (hash ^ bytes[index]) * 1099511628211ULL;
  return hash;
}

static const uint64_t FNV_OFFSET = 14695981039346656037ULL;

typedef struct {
  const char *data;
  size_t size, at;
  int bad;
} Reader;

static void take(Reader *reader, void *out, size_t size) {
  if (reader->bad || reader->size - reader->at < size) {
    reader->bad = 1;
    memset(out, 0, size);
    return;
  }
  memcpy(out, reader->data + reader->at, size);
  reader->at += size;
}

static const char *take_bytes(Reader *reader, size_t size) {
  if (reader->bad || reader->size - reader->at < size) {
    reader->bad = 1;
    return NULL;
  }
  const char *start = reader->data + reader->at;
  reader->at += size;
  return start;
}

static void index_listings(DirCache *cache) {
  cache->slot_count = 16;
  while (cache->slot_count < cache->count * 2) cache->slot_count *= 2;
  cache->slots = calloc(cache->slot_count, sizeof(size_t));
  if (!cache->slots) abort();
  for (size_t index = 0; index < cache->count; index++) {
    const DirListing *listing = &cache->listings[index];
    size_t slot = fnv1a(listing->path, listing->path_length, FNV_OFFSET) & (cache->slot_count - 1);
    while (cache->slots[slot]) slot = (slot + 1) & (cache->slot_count - 1);
    cache->slots[slot] = index + 1;
  }
}

static void empty(DirCache *cache) {
  dir_cache_free(cache);
  index_listings(cache);
}

void dir_cache_load(DirCache *cache, const char *file) {
  memset(cache, 0, sizeof *cache);
  // The cache lives in the state dir, which a repository may have filled: a link there is never
  // followed, and anything but a regular file (a FIFO would block a plain open) is no cache.
  int fd = file && *file ? open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) : -1;
  struct stat stats;
  if (fd < 0 || fstat(fd, &stats) != 0 || !S_ISREG(stats.st_mode) || stats.st_size < (off_t)(sizeof MAGIC + 16) || stats.st_size > (1LL << 31)) {
    if (fd >= 0) close(fd);
    empty(cache);
    return;
  }
  size_t size = (size_t)stats.st_size;
  cache->data = malloc(size);
  if (!cache->data) abort();
  size_t done = 0;
  while (done < size) {
    ssize_t got = read(fd, cache->data + done, size - done);
    if (got <= 0) break;
    done += (size_t)got;
  }
  close(fd);
  uint64_t sum;
  if (done != size || memcmp(cache->data, MAGIC, sizeof MAGIC) != 0) {
    empty(cache);
    return;
  }
  memcpy(&sum, cache->data + size - sizeof sum, sizeof sum);
  if (fnv1a(cache->data, size - sizeof sum, FNV_OFFSET) != sum) {
    empty(cache);
    return;
  }
  Reader reader = {.data = cache->data, .size = size - sizeof sum, .at = sizeof MAGIC};
  uint64_t count;
  take(&reader, &count, sizeof count);
  // Every listing takes at least 40 bytes: a bound on the count before trusting it.
  if (reader.bad || count > size / 40) {
    empty(cache);
    return;
  }
  cache->listings = calloc(count ? count : 1, sizeof(DirListing));
  if (!cache->listings) abort();
  for (size_t index = 0; index < count && !reader.bad; index++) {
    DirListing *listing = &cache->listings[index];
    take(&reader, &listing->path_length, sizeof listing->path_length);
    listing->path = take_bytes(&reader, listing->path_length);
    take(&reader, &listing->dev, sizeof listing->dev);
    take(&reader, &listing->ino, sizeof listing->ino);
    take(&reader, &listing->mtime_ns, sizeof listing->mtime_ns);
    take(&reader, &listing->ctime_ns, sizeof listing->ctime_ns);
    take(&reader, &listing->child_count, sizeof listing->child_count);
    if (reader.bad || listing->child_count > reader.size / 3) {
      reader.bad = 1;
      break;
    }
    listing->children = calloc(listing->child_count ? listing->child_count : 1, sizeof(DirChild));
    if (!listing->children) abort();
    cache->count = index + 1;
    for (uint32_t child = 0; child < listing->child_count && !reader.bad; child++) {
      DirChild *item = &listing->children[child];
      take(&reader, &item->is_dir, sizeof item->is_dir);
      take(&reader, &item->length, sizeof item->length);
      item->name = take_bytes(&reader, item->length);
      // Names are joined to paths as C strings, and walked into: one holding a NUL or "/", or
      // "." or "..", would lead somewhere else.
      if (item->name && (item->length == 0 || memchr(item->name, 0, item->length) || memchr(item->name, '/', item->length) ||
                         (item->name[0] == '.' && (item->length == 1 || (item->length == 2 && item->name[1] == '.')))))
        reader.bad = 1;
    }
  }
  if (reader.bad || reader.at != reader.size) {
    empty(cache);
    return;
  }
  index_listings(cache);
}

const DirListing *dir_cache_find(const DirCache *cache, const char *path, uint32_t length) {
  if (cache->count == 0) return NULL;
  size_t slot = fnv1a(path, length, FNV_OFFSET) & (cache->slot_count - 1);
  for (; cache->slots[slot]; slot = (slot + 1) & (cache->slot_count - 1)) {
    const DirListing *listing = &cache->listings[cache->slots[slot] - 1];
    if (listing->path_length == length && memcmp(listing->path, path, length) == 0) return listing;
  }
  return NULL;
}

typedef struct {
  char *data;
  size_t size, capacity;
} Writer;

static void put(Writer *writer, const void *data, size_t size) {
  if (writer->size + size > writer->capacity) {
    size_t next = writer->capacity ? writer->capacity * 2 : 1 << 16;
    while (next < writer->size + size) next *= 2;
    char *moved = realloc(writer->data, next);
    if (!moved) abort();
    writer->data = moved;
    writer->capacity = next;
  }
  memcpy(writer->data + writer->size, data, size);
  writer->size += size;
}

void dir_cache_save(const char *file, const DirListing *const *listings, size_t count) {
  if (!file || !*file) return;
  Writer writer = {0};
  put(&writer, MAGIC, sizeof MAGIC);
  uint64_t total = count;
  put(&writer, &total, sizeof total);
  for (size_t index = 0; index < count; index++) {
    const DirListing *listing = listings[index];
    put(&writer, &listing->path_length, sizeof listing->path_length);
    put(&writer, listing->path, listing->path_length);
    put(&writer, &listing->dev, sizeof listing->dev);
    put(&writer, &listing->ino, sizeof listing->ino);
    put(&writer, &listing->mtime_ns, sizeof listing->mtime_ns);
    put(&writer, &listing->ctime_ns, sizeof listing->ctime_ns);
    put(&writer, &listing->child_count, sizeof listing->child_count);
    for (uint32_t child = 0; child < listing->child_count; child++) {
      const DirChild *item = &listing->children[child];
      put(&writer, &item->is_dir, sizeof item->is_dir);
      put(&writer, &item->length, sizeof item->length);
      put(&writer, item->name, item->length);
    }
  }
  uint64_t sum = fnv1a(writer.data, writer.size, FNV_OFFSET);
  put(&writer, &sum, sizeof sum);

  // A fresh name, created exclusively: O_EXCL with O_CREAT never follows a link planted at the
  // path (open(2)), so nothing is written outside the state dir. rename(2) replaces a link at
  // `file` itself rather than following it. Mode 0600: the listings are the owner's alone.
  static unsigned counter;
  char temporary[4096];
  for (int attempt = 0; attempt < 8; attempt++) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    unsigned serial = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
    int length = snprintf(temporary, sizeof temporary, "%s.%d-%u-%08lx.tmp", file, (int)getpid(), serial,
                          (unsigned long)(fnv1a(&now, sizeof now, FNV_OFFSET) & 0xffffffffUL));
    if (length <= 0 || (size_t)length >= sizeof temporary) break;
    int fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      break;
    }
    size_t done = 0;
    while (done < writer.size) {
      ssize_t wrote = write(fd, writer.data + done, writer.size - done);
      if (wrote <= 0) break;
      done += (size_t)wrote;
    }
    int ok = done == writer.size;
    close(fd);
    if (!ok || rename(temporary, file) != 0) unlink(temporary);
    break;
  }
  free(writer.data);
}

void dir_cache_free(DirCache *cache) {
  for (size_t index = 0; index < cache->count; index++) free(cache->listings[index].children);
  free(cache->listings);
  free(cache->slots);
  free(cache->data);
  memset(cache, 0, sizeof *cache);
}
