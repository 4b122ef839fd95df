#define _GNU_SOURCE
#include "treeScan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dirCache.h"
#include "pathStats.h"

// Directories waiting to be listed. Threads take from it until it is empty and nobody is listing
// anything, since a directory being listed may still add more.
typedef struct {
  char **dirs;
  size_t count, capacity;
  int busy;
  pthread_mutex_t lock;
  pthread_cond_t wake;
} DirQueue;

typedef struct {
  DirQueue *queue;
  TreeScan *scan; // shared: failures only, under the queue's lock
  const DirCache *cache;
  int root_fd;
  int64_t observed_at_ns;
  TreeScan found; // this thread's entries
  // Listings for the next cache: reused ones point into the old cache, fresh ones are owned.
  const DirListing **seen;
  size_t seen_count, seen_capacity;
  DirListing **owned;
  size_t owned_count, owned_capacity;
  int changed;
} Walker;

static void *grow(void *items, size_t *capacity, size_t needed, size_t size) {
  if (needed <= *capacity) return items;
  size_t next = *capacity ? *capacity * 2 : 256;
  while (next < needed) next *= 2;
  void *moved = realloc(items, next * size);
  if (!moved) abort();
  *capacity = next;
  return moved;
}

static void push_dir(DirQueue *queue, char *dir) {
  pthread_mutex_lock(&queue->lock);
  queue->dirs = grow(queue->dirs, &queue->capacity, queue->count + 1, sizeof(char *));
  queue->dirs[queue->count++] = dir;
  pthread_cond_signal(&queue->wake);
  pthread_mutex_unlock(&queue->lock);
}

static void fail(Walker *walker, const char *dir, int code) {
  pthread_mutex_lock(&walker->queue->lock);
  if (!walker->scan->failed) {
    walker->scan->failed = 1;
    snprintf(walker->scan->failure, sizeof walker->scan->failure, "%s: %s", dir, strerror(code));
  }
  pthread_mutex_unlock(&walker->queue->lock);
}

static int64_t ns_of(struct timespec time) {
  return (int64_t)time.tv_sec * 1000000000LL + time.tv_nsec;
}

// core/identity.ts racyWindowNs: whole-second timestamps mean a coarse file system.
static int racy(const struct stat *stats, int64_t observed_at_ns) {
  int64_t ctime_ns = ns_of(stats->st_ctim);
  int64_t window = ctime_ns % 1000000000LL == 0 ? 2000000000LL : 50000000LL;
  return ctime_ns + window > observed_at_ns;
}

// The manifest line of an installed file, exactly as core/manifest.ts entryLine writes it:
// `${length}:${path} i ${identity} -\n`.
static char *render_line(const char *path, uint32_t length, const struct stat *stats, uint32_t *line_length) {
  char *line = malloc((size_t)length + IDENTITY_MAX + 32);
  if (!line) abort();
  char *at = decimal_format(line, length);
  *at++ = ':';
  memcpy(at, path, length);
  at += length;
  memcpy(at, " i ", 3);
  at += 3;
  at += identity_format(at, stats);
  memcpy(at, " -\n", 3);
  at += 3;
  *line_length = (uint32_t)(at - line);
  return line;
}

static void add(TreeScan *found, char *path, uint32_t length, uint8_t kind, const struct stat *stats) {
  found->entries = grow(found->entries, &found->capacity, found->count + 1, sizeof(TreeEntry));
  TreeEntry *entry = &found->entries[found->count++];
  entry->path = path;
  entry->length = length;
  entry->kind = kind;
  entry->line = kind == ENTRY_PLAIN ? render_line(path, length, stats, &entry->line_length) : NULL;
  if (!entry->line) entry->line_length = 0;
}

static int ascii(const char *name, size_t length) {
  for (size_t index = 0; index < length; index++) if ((unsigned char)name[index] >= 0x80) return 0;
  return 1;
}

static void add_dir(Walker *walker, char *path, uint32_t length) {
  add(&walker->found, path, length, ENTRY_DIR, NULL);
  char *queued = strdup(path);
  if (!queued) abort();
  push_dir(walker->queue, queued);
}

// One entry of directory `fd`. A directory (from d_type, or from the cache) is not stat'ed:
// only files carry an identity, and the directory is opened when its turn comes.
static void visit(Walker *walker, int fd, const char *dir, size_t dir_length, const char *name, size_t name_length, int is_dir) {
  uint32_t length = (uint32_t)(dir_length + 1 + name_length);
  char *path = malloc(length + 1);
  if (!path) abort();
  memcpy(path, dir, dir_length);
  path[dir_length] = '/';
  memcpy(path + dir_length + 1, name, name_length);
  path[length] = 0;
  if (is_dir) {
    add_dir(walker, path, length);
    return;
  }
  struct stat stats;
  if (fstatat(fd, path + dir_length + 1, &stats, AT_SYMLINK_NOFOLLOW) != 0) {
    // Vanished or unreadable: JavaScript looks again and names the problem.
    add(&walker->found, path, length, ENTRY_SPECIAL, NULL);
    return;
  }
  if (S_ISDIR(stats.st_mode)) {
    add_dir(walker, path, length);
    return;
  }
  int plain = S_ISREG(stats.st_mode) && stats.st_nlink == 1 && !racy(&stats, walker->observed_at_ns);
  add(&walker->found, path, length, plain ? ENTRY_PLAIN : ENTRY_SPECIAL, &stats);
}

static int same_directory(const DirListing *listing, const struct stat *stats) {
  return listing->dev == (uint64_t)stats->st_dev && listing->ino == (uint64_t)stats->st_ino &&
         listing->mtime_ns == ns_of(stats->st_mtim) && listing->ctime_ns == ns_of(stats->st_ctim);
}

static void remember(Walker *walker, const DirListing *listing) {
  walker->seen = grow(walker->seen, &walker->seen_capacity, walker->seen_count + 1, sizeof *walker->seen);
  walker->seen[walker->seen_count++] = listing;
}

// Reads the directory itself, and keeps the listing for the next scan unless the directory
// changed within a timestamp tick of now (it could change again without its identity changing).
static void read_dir(Walker *walker, int fd, const char *dir, size_t dir_length, const struct stat *dir_stats) {
  DIR *stream = fdopendir(fd);
  if (!stream) {
    fail(walker, dir, errno);
    close(fd);
    return;
  }
  DirListing *listing = calloc(1, sizeof *listing);
  char *path = strndup(dir, dir_length);
  if (!listing || !path) abort();
  listing->path = path;
  listing->path_length = (uint32_t)dir_length;
  listing->dev = (uint64_t)dir_stats->st_dev;
  listing->ino = (uint64_t)dir_stats->st_ino;
  listing->mtime_ns = ns_of(dir_stats->st_mtim);
  listing->ctime_ns = ns_of(dir_stats->st_ctim);
  size_t capacity = 0;
  walker->owned = grow(walker->owned, &walker->owned_capacity, walker->owned_count + 1, sizeof *walker->owned);
  walker->owned[walker->owned_count++] = listing;

  struct dirent *item;
  errno = 0;
  while ((item = readdir(stream)) != NULL) {
    const char *name = item->d_name;
    if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
    size_t name_length = strlen(name);
    if (!ascii(name, name_length) || name_length > UINT16_MAX) {
      fail(walker, dir, EILSEQ);
      break;
    }
    int is_dir = item->d_type == DT_DIR;
    visit(walker, fd, dir, dir_length, name, name_length, is_dir);
    if (!is_dir && item->d_type == DT_UNKNOWN) {
      // The file system does not say: the entry just added tells.
      is_dir = walker->found.entries[walker->found.count - 1].kind == ENTRY_DIR;
    }
    listing->children = grow(listing->children, &capacity, listing->child_count + 1, sizeof(DirChild));
    DirChild *child = &listing->children[listing->child_count++];
    child->name = strndup(name, name_length);
    if (!child->name) abort();
    child->length = (uint16_t)name_length;
    child->is_dir = (uint8_t)is_dir;
    errno = 0;
  }
  if (errno != 0 && item == NULL) fail(walker, dir, errno);
  if (!racy(dir_stats, walker->observed_at_ns)) remember(walker, listing);
  closedir(stream);
}

static void list_dir(Walker *walker, const char *dir) {
  int fd = openat(walker->root_fd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    // Gone since its parent was listed: as the JavaScript walk, nothing to record. Anything
    // else (now a link, or a file) is left to the JavaScript walk to explain.
    if (errno != ENOENT) fail(walker, dir, errno);
    return;
  }
  struct stat dir_stats;
  if (fstat(fd, &dir_stats) != 0) {
    fail(walker, dir, errno);
    close(fd);
    return;
  }
  size_t dir_length = strlen(dir);
  const DirListing *cached = walker->cache ? dir_cache_find(walker->cache, dir, (uint32_t)dir_length) : NULL;
  if (cached && same_directory(cached, &dir_stats)) {
    for (uint32_t index = 0; index < cached->child_count; index++) {
      const DirChild *child = &cached->children[index];
      visit(walker, fd, dir, dir_length, child->name, child->length, child->is_dir);
    }
    remember(walker, cached);
    close(fd);
    return;
  }
  walker->changed = 1;
  read_dir(walker, fd, dir, dir_length, &dir_stats);
}

static void *walk(void *argument) {
  Walker *walker = argument;
  DirQueue *queue = walker->queue;
  for (;;) {
    pthread_mutex_lock(&queue->lock);
    while (queue->count == 0 && queue->busy > 0) pthread_cond_wait(&queue->wake, &queue->lock);
    if (queue->count == 0) {
      pthread_cond_broadcast(&queue->wake);
      pthread_mutex_unlock(&queue->lock);
      return NULL;
    }
    char *dir = queue->dirs[--queue->count];
    queue->busy++;
    pthread_mutex_unlock(&queue->lock);

    list_dir(walker, dir);
    free(dir);

    pthread_mutex_lock(&queue->lock);
    queue->busy--;
    if (queue->busy == 0 && queue->count == 0) pthread_cond_broadcast(&queue->wake);
    pthread_mutex_unlock(&queue->lock);
  }
}

static int by_path(const void *a, const void *b) {
  return strcmp(((const TreeEntry *)a)->path, ((const TreeEntry *)b)->path);
}

static void free_listing(DirListing *listing) {
  for (uint32_t index = 0; index < listing->child_count; index++) free((char *)listing->children[index].name);
  free(listing->children);
  free((char *)listing->path);
  free(listing);
}

void tree_scan(TreeScan *scan, const char *root, const char *base, int64_t observed_at_ns, int threads, const char *cache_file) {
  memset(scan, 0, sizeof *scan);
  int root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) {
    scan->failed = 1;
    snprintf(scan->failure, sizeof scan->failure, "%s: %s", root, strerror(errno));
    return;
  }
  if (threads < 1) threads = 1;
  if (threads > 16) threads = 16;
  DirCache cache;
  dir_cache_load(&cache, cache_file);
  DirQueue queue = {0};
  pthread_mutex_init(&queue.lock, NULL);
  pthread_cond_init(&queue.wake, NULL);
  char *first = strdup(base);
  if (!first) abort();
  push_dir(&queue, first);

  Walker walkers[16];
  pthread_t ids[16];
  for (int index = 0; index < threads; index++) {
    walkers[index] = (Walker){.queue = &queue, .scan = scan, .cache = &cache, .root_fd = root_fd, .observed_at_ns = observed_at_ns};
  }
  int started = 0;
  for (int index = 1; index < threads; index++) {
    if (pthread_create(&ids[index], NULL, walk, &walkers[index]) != 0) break;
    started = index;
  }
  walk(&walkers[0]);
  for (int index = 1; index <= started; index++) pthread_join(ids[index], NULL);
  close(root_fd);
  pthread_mutex_destroy(&queue.lock);
  pthread_cond_destroy(&queue.wake);
  free(queue.dirs);

  size_t total = 0, seen = 0;
  int changed = 0;
  for (int index = 0; index <= started; index++) {
    total += walkers[index].found.count;
    seen += walkers[index].seen_count;
    changed |= walkers[index].changed;
  }
  if (!scan->failed && (changed || seen != cache.count) && cache_file && *cache_file) {
    const DirListing **listings = malloc((seen ? seen : 1) * sizeof *listings);
    if (!listings) abort();
    size_t at = 0;
    for (int index = 0; index <= started; index++) {
      memcpy(listings + at, walkers[index].seen, walkers[index].seen_count * sizeof *listings);
      at += walkers[index].seen_count;
    }
    dir_cache_save(cache_file, listings, seen);
    free(listings);
  }
  scan->entries = malloc((total ? total : 1) * sizeof(TreeEntry));
  if (!scan->entries) abort();
  for (int index = 0; index <= started; index++) {
    Walker *walker = &walkers[index];
    memcpy(scan->entries + scan->count, walker->found.entries, walker->found.count * sizeof(TreeEntry));
    scan->count += walker->found.count;
    free(walker->found.entries);
    free(walker->seen);
    for (size_t owned = 0; owned < walker->owned_count; owned++) free_listing(walker->owned[owned]);
    free(walker->owned);
  }
  dir_cache_free(&cache);
  scan->capacity = scan->count;
  qsort(scan->entries, scan->count, sizeof(TreeEntry), by_path);
}

void tree_scan_free(TreeScan *scan) {
  for (size_t index = 0; index < scan->count; index++) {
    free(scan->entries[index].path);
    free(scan->entries[index].line);
  }
  free(scan->entries);
  memset(scan, 0, sizeof *scan);
}
