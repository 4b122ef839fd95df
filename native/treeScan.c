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

// Memory handed out in order and freed all at once: a walk makes one small allocation per
// file, and malloc's bookkeeping for each was a tenth of the walk.
struct Block {
  Block *next;
  size_t used, size;
  char data[];
};

#define BLOCK_SIZE (256 * 1024)

static void *reserve(Block **blocks, size_t size) {
  size = (size + 7) & ~(size_t)7;
  Block *block = *blocks;
  if (!block || block->size - block->used < size) {
    size_t data_size = size > BLOCK_SIZE ? size : BLOCK_SIZE;
    block = malloc(sizeof(Block) + data_size);
    if (!block) abort();
    block->next = *blocks;
    block->used = 0;
    block->size = data_size;
    *blocks = block;
  }
  return block->data + block->used;
}

// Takes size bytes of what reserve() last returned.
static void commit(Block **blocks, size_t size) {
  (*blocks)->used += (size + 7) & ~(size_t)7;
}

static void *allocate(Block **blocks, size_t size) {
  void *memory = reserve(blocks, size);
  commit(blocks, size);
  return memory;
}

static void free_blocks(Block *block) {
  while (block) {
    Block *next = block->next;
    free(block);
    block = next;
  }
}

typedef struct Node Node;

typedef struct {
  const char *name;
  uint16_t length;
  uint8_t kind;
  const char *line;  // ENTRY_PLAIN
  uint32_t line_length;
  const char *path;  // ENTRY_SPECIAL
  Node *dir;         // ENTRY_DIR
} Child;

// A directory of the walk. Its children are kept in the order their paths sort in (see
// git_order), so that visiting the tree depth first yields every path sorted, with no sort.
struct Node {
  char *path;
  uint32_t length;
  Child *children;
  uint32_t count;
};

// Directories waiting to be listed. Threads take from it until it is empty and nobody is listing
// anything, since a directory being listed may still add more.
typedef struct {
  Node **nodes;
  size_t count, capacity;
  int busy;
  pthread_mutex_t lock;
  pthread_cond_t wake;
} DirQueue;

typedef struct {
  char *name;
  uint16_t length;
  uint8_t is_dir;
} Named;

typedef struct {
  DirQueue *queue;
  TreeScan *scan; // shared: failures only, under the queue's lock
  const DirCache *cache;
  int root_fd;
  int64_t observed_at_ns;
  Block *blocks;   // this thread's nodes, children, lines and paths
  size_t entries;  // how many entries this thread found
  // Listings for the next cache: reused ones point into the old cache, fresh ones are owned.
  const DirListing **seen;
  size_t seen_count, seen_capacity;
  DirListing **owned;
  size_t owned_count, owned_capacity;
  Named *names; // a directory being read, before it is sorted
  size_t names_capacity;
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

static void push_dir(DirQueue *queue, Node *node) {
  pthread_mutex_lock(&queue->lock);
  queue->nodes = grow(queue->nodes, &queue->capacity, queue->count + 1, sizeof(Node *));
  queue->nodes[queue->count++] = node;
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

// The order of two names in one directory such that their paths, and every path below a
// directory, sort in byte order: a directory's name compares as if it ended in "/". Two names
// of one directory are never equal.
static int git_order(const char *a, size_t a_length, int a_dir, const char *b, size_t b_length, int b_dir) {
  size_t common = a_length < b_length ? a_length : b_length;
  int order = memcmp(a, b, common);
  if (order) return order;
  int a_next = a_length > common ? (unsigned char)a[common] : a_dir ? '/' : 0;
  int b_next = b_length > common ? (unsigned char)b[common] : b_dir ? '/' : 0;
  return a_next - b_next;
}

static int by_git_order(const void *a, const void *b) {
  const Named *left = a, *right = b;
  return git_order(left->name, left->length, left->is_dir, right->name, right->length, right->is_dir);
}

static char *join_path(Block **blocks, const Node *dir, const char *name, size_t name_length) {
  char *path = allocate(blocks, dir->length + 1 + name_length + 1);
  memcpy(path, dir->path, dir->length);
  path[dir->length] = '/';
  memcpy(path + dir->length + 1, name, name_length);
  path[dir->length + 1 + name_length] = 0;
  return path;
}

static void add_dir(Walker *walker, Child *child, const Node *parent) {
  Node *node = allocate(&walker->blocks, sizeof *node);
  node->path = join_path(&walker->blocks, parent, child->name, child->length);
  node->length = (uint32_t)(parent->length + 1 + child->length);
  node->children = NULL;
  node->count = 0;
  child->kind = ENTRY_DIR;
  child->dir = node;
  push_dir(walker->queue, node);
}

// The manifest line of an installed file, exactly as core/manifest.ts entryLine writes it:
// `${length}:${path} i ${identity} -\n`.
static void render_line(Walker *walker, Child *child, const Node *dir, const struct stat *stats) {
  size_t length = dir->length + 1 + child->length;
  char *line = reserve(&walker->blocks, length + IDENTITY_MAX + 32);
  char *at = decimal_format(line, length);
  *at++ = ':';
  memcpy(at, dir->path, dir->length);
  at += dir->length;
  *at++ = '/';
  memcpy(at, child->name, child->length);
  at += child->length;
  memcpy(at, " i ", 3);
  at += 3;
  at += identity_format(at, stats);
  memcpy(at, " -\n", 3);
  at += 3;
  child->line = line;
  child->line_length = (uint32_t)(at - line);
  commit(&walker->blocks, child->line_length);
}

// One entry of directory `fd`. A directory (from d_type, or from the cache) is not stat'ed:
// only files carry an identity, and the directory is opened when its turn comes.
static void visit_entry(Walker *walker, int fd, const Node *dir, Child *child, int is_dir) {
  walker->entries++;
  if (is_dir) {
    add_dir(walker, child, dir);
    return;
  }
  // Names kept in the cache file are not NUL-terminated.
  char short_name[256];
  char *name = child->length < sizeof short_name ? short_name : allocate(&walker->blocks, child->length + 1);
  memcpy(name, child->name, child->length);
  name[child->length] = 0;
  struct stat stats;
  if (fstatat(fd, name, &stats, AT_SYMLINK_NOFOLLOW) != 0) {
    // Vanished or unreadable: JavaScript looks again and names the problem.
    child->kind = ENTRY_SPECIAL;
    child->path = join_path(&walker->blocks, dir, child->name, child->length);
    return;
  }
  if (S_ISDIR(stats.st_mode)) {
    add_dir(walker, child, dir);
    return;
  }
  if (S_ISREG(stats.st_mode) && stats.st_nlink == 1 && !racy(&stats, walker->observed_at_ns)) {
    child->kind = ENTRY_PLAIN;
    render_line(walker, child, dir, &stats);
  } else {
    child->kind = ENTRY_SPECIAL;
    child->path = join_path(&walker->blocks, dir, child->name, child->length);
  }
}

// A file that became a directory (or went the other way) while it was looked at would sort out
// of place: the walk gives up, and the JavaScript walk, which sorts everything, answers.
static void visit(Walker *walker, int fd, const Node *dir, Child *child, int is_dir) {
  visit_entry(walker, fd, dir, child, is_dir);
  if ((child->kind == ENTRY_DIR) != (is_dir != 0)) fail(walker, dir->path, EAGAIN);
}

static int same_directory(const DirListing *listing, const struct stat *stats) {
  return listing->dev == (uint64_t)stats->st_dev && listing->ino == (uint64_t)stats->st_ino &&
         listing->mtime_ns == ns_of(stats->st_mtim) && listing->ctime_ns == ns_of(stats->st_ctim);
}

// A kept listing is used only in the order this walk needs: one in any other order (damaged,
// or from another build) is read again instead.
static int in_git_order(const DirListing *listing) {
  for (uint32_t index = 1; index < listing->child_count; index++) {
    const DirChild *before = &listing->children[index - 1], *after = &listing->children[index];
    if (git_order(before->name, before->length, before->is_dir, after->name, after->length, after->is_dir) >= 0) return 0;
  }
  return 1;
}

static void remember(Walker *walker, const DirListing *listing) {
  walker->seen = grow(walker->seen, &walker->seen_capacity, walker->seen_count + 1, sizeof *walker->seen);
  walker->seen[walker->seen_count++] = listing;
}

static int ascii(const char *name, size_t length) {
  for (size_t index = 0; index < length; index++) if ((unsigned char)name[index] >= 0x80) return 0;
  return 1;
}

// Reads the directory itself, and keeps the listing for the next scan unless the directory
// changed within a timestamp tick of now (it could change again without its identity changing).
static void read_dir(Walker *walker, int fd, Node *node, const struct stat *dir_stats) {
  DIR *stream = fdopendir(fd);
  if (!stream) {
    fail(walker, node->path, errno);
    close(fd);
    return;
  }
  size_t count = 0;
  struct dirent *item;
  errno = 0;
  while ((item = readdir(stream)) != NULL) {
    const char *name = item->d_name;
    if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
    size_t name_length = strlen(name);
    if (!ascii(name, name_length) || name_length > UINT16_MAX) {
      fail(walker, node->path, EILSEQ);
      break;
    }
    int is_dir = item->d_type == DT_DIR;
    if (item->d_type == DT_UNKNOWN) {
      // The file system does not say, and the order depends on it.
      struct stat stats;
      is_dir = fstatat(fd, name, &stats, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(stats.st_mode);
    }
    walker->names = grow(walker->names, &walker->names_capacity, count + 1, sizeof(Named));
    Named *named = &walker->names[count++];
    named->name = allocate(&walker->blocks, name_length + 1);
    memcpy(named->name, name, name_length + 1);
    named->length = (uint16_t)name_length;
    named->is_dir = (uint8_t)is_dir;
    errno = 0;
  }
  if (errno != 0 && item == NULL) fail(walker, node->path, errno);
  if (count > 1) qsort(walker->names, count, sizeof(Named), by_git_order);

  DirListing *listing = calloc(1, sizeof *listing);
  if (!listing) abort();
  listing->path = node->path;
  listing->path_length = node->length;
  listing->dev = (uint64_t)dir_stats->st_dev;
  listing->ino = (uint64_t)dir_stats->st_ino;
  listing->mtime_ns = ns_of(dir_stats->st_mtim);
  listing->ctime_ns = ns_of(dir_stats->st_ctim);
  listing->children = calloc(count ? count : 1, sizeof(DirChild));
  node->children = allocate(&walker->blocks, (count ? count : 1) * sizeof(Child));
  if (!listing->children) abort();
  listing->child_count = (uint32_t)count;
  node->count = (uint32_t)count;
  walker->owned = grow(walker->owned, &walker->owned_capacity, walker->owned_count + 1, sizeof *walker->owned);
  walker->owned[walker->owned_count++] = listing;
  for (size_t index = 0; index < count; index++) {
    Named *named = &walker->names[index];
    Child *child = &node->children[index];
    *child = (Child){.name = named->name, .length = named->length};
    visit(walker, fd, node, child, named->is_dir);
    listing->children[index] = (DirChild){.name = named->name, .length = named->length, .is_dir = named->is_dir};
  }
  if (!racy(dir_stats, walker->observed_at_ns) && in_git_order(listing)) remember(walker, listing);
  closedir(stream);
}

// A directory whose listing is kept is only stat'ed through, never read: a path-only descriptor
// costs the kernel less to open, and is reopened for reading only when the listing is stale.
#ifdef O_PATH
#define LOOK_ONLY O_PATH
#else
#define LOOK_ONLY O_RDONLY
#endif

static void list_dir(Walker *walker, Node *node) {
  int fd = openat(walker->root_fd, node->path, LOOK_ONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    // Gone since its parent was listed: as the JavaScript walk, nothing to record. Anything
    // else (now a link, or a file) is left to the JavaScript walk to explain.
    if (errno != ENOENT) fail(walker, node->path, errno);
    return;
  }
  struct stat dir_stats;
  if (fstat(fd, &dir_stats) != 0) {
    fail(walker, node->path, errno);
    close(fd);
    return;
  }
  const DirListing *cached = walker->cache ? dir_cache_find(walker->cache, node->path, node->length) : NULL;
  if (cached && same_directory(cached, &dir_stats) && in_git_order(cached)) {
    node->children = allocate(&walker->blocks, (cached->child_count ? cached->child_count : 1) * sizeof(Child));
    node->count = cached->child_count;
    for (uint32_t index = 0; index < cached->child_count; index++) {
      const DirChild *kept = &cached->children[index];
      Child *child = &node->children[index];
      *child = (Child){.name = kept->name, .length = kept->length};
      visit(walker, fd, node, child, kept->is_dir);
    }
    remember(walker, cached);
    close(fd);
    return;
  }
  walker->changed = 1;
  int readable = LOOK_ONLY == O_RDONLY ? fd : openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (readable < 0) {
    fail(walker, node->path, errno);
    close(fd);
    return;
  }
  if (readable != fd) close(fd);
  read_dir(walker, readable, node, &dir_stats);
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
    Node *node = queue->nodes[--queue->count];
    queue->busy++;
    pthread_mutex_unlock(&queue->lock);

    list_dir(walker, node);

    pthread_mutex_lock(&queue->lock);
    queue->busy--;
    if (queue->busy == 0 && queue->count == 0) pthread_cond_broadcast(&queue->wake);
    pthread_mutex_unlock(&queue->lock);
  }
}

// Depth first, children in order: every path comes out sorted, each directory before its contents.
static void collect(TreeScan *scan, const Node *node) {
  for (uint32_t index = 0; index < node->count; index++) {
    const Child *child = &node->children[index];
    TreeEntry *entry = &scan->entries[scan->count++];
    *entry = (TreeEntry){.kind = child->kind};
    if (child->kind == ENTRY_PLAIN) {
      entry->line = child->line;
      entry->line_length = child->line_length;
    } else if (child->kind == ENTRY_SPECIAL) {
      entry->path = child->path;
      entry->length = (uint32_t)(node->length + 1 + child->length);
    } else {
      entry->path = child->dir->path;
      entry->length = child->dir->length;
      collect(scan, child->dir);
    }
  }
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
  Node *top = allocate(&scan->blocks, sizeof *top);
  size_t base_length = strlen(base);
  *top = (Node){.path = allocate(&scan->blocks, base_length + 1), .length = (uint32_t)base_length};
  memcpy(top->path, base, base_length + 1);
  push_dir(&queue, top);

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
  free(queue.nodes);

  size_t total = 0, seen = 0;
  int changed = 0;
  for (int index = 0; index <= started; index++) {
    total += walkers[index].entries;
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
  if (!scan->failed) collect(scan, top);
  for (int index = 0; index <= started; index++) {
    Walker *walker = &walkers[index];
    free(walker->seen);
    for (size_t owned = 0; owned < walker->owned_count; owned++) {
      free(walker->owned[owned]->children);
      free(walker->owned[owned]);
    }
    free(walker->owned);
    free(walker->names);
    if (walker->blocks) {
      Block *last = walker->blocks;
      while (last->next) last = last->next;
      last->next = scan->blocks;
      scan->blocks = walker->blocks;
    }
  }
  dir_cache_free(&cache);
}

void tree_scan_free(TreeScan *scan) {
  free(scan->entries);
  free_blocks(scan->blocks);
  memset(scan, 0, sizeof *scan);
}
