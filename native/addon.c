// N-API face of the native scans (src/fs/nativeTreeScan.ts) and of the observer call
// (src/observer/client.ts). Each start...() begins work on
// threads of its own and returns at once, so JavaScript goes on meanwhile; finish...() waits for
// that work and hands over what it found.
// struct ucred (SO_PEERCRED) is a GNU extension in glibc's headers.
#define _GNU_SOURCE
#include <errno.h>
#include <node_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#ifdef __linux__
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#endif

#include "observerCall.h"
#include "pathStats.h"
#include "queueWatch.h"
#include "sourceList.h"
#include "treeScan.h"
#ifdef __linux__
#include <stdatomic.h>

#include "treeWatch.h"
#endif

extern char **environ;

typedef enum { JOB_TREE, JOB_PATHS, JOB_SOURCES } JobKind;

typedef struct {
  JobKind kind;
  char *root, *base, *cache_file;
  int64_t observed_at_ns;
  int threads;
  TreeScan scan;
  char *joined; // JOB_PATHS: the paths, NUL-separated; paths.paths point into it
  PathStats paths;
  char **envp; // JOB_SOURCES: git's environment, copied on the JavaScript thread
  SourceList sources;
  pthread_t thread;
  int started, finished;
} Job;

#define CHECK(call)                                                                  \
  do {                                                                               \
    if ((call) != napi_ok) {                                                         \
      napi_throw_error(env, "VOUCH_NATIVE", "vouch native scan: N-API call failed"); \
      return NULL;                                                                   \
    }                                                                                \
  } while (0)

static char *string_argument(napi_env env, napi_value value) {
  size_t length = 0;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) return NULL;
  char *text = malloc(length + 1);
  if (!text) return NULL;
  napi_get_value_string_utf8(env, value, text, length + 1, &length);
  return text;
}

static void *run(void *argument) {
  Job *job = argument;
#ifdef __linux__
  // In the observer, a scan's threads (and the threads they start, which inherit it) yield to the
  // queue sampler, whose samples must stay close together while the scan runs (src/observer/queueWatch.ts).
  if (queue_watch_active()) setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
#endif
  if (job->kind == JOB_TREE) tree_scan(&job->scan, job->root, job->base, job->observed_at_ns, job->threads, job->cache_file);
  else if (job->kind == JOB_PATHS) path_stats(&job->paths, job->root, job->threads);
  else source_list(&job->sources, job->root, job->envp, job->threads);
  return NULL;
}

static void launch(Job *job) {
  job->started = pthread_create(&job->thread, NULL, run, job) == 0;
  if (!job->started) run(job);
}

static Job *take_job(napi_env env, napi_callback_info info, JobKind kind) {
  size_t argc = 1;
  napi_value argv[1];
  Job *job = NULL;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_external(env, argv[0], (void **)&job) != napi_ok || !job || job->kind != kind || job->finished) {
    napi_throw_type_error(env, NULL, "finish takes the handle of a scan of its kind, not yet finished");
    return NULL;
  }
  if (job->started) pthread_join(job->thread, NULL);
  job->finished = 1;
  return job;
}

static void release(napi_env env, void *data, void *hint) {
  (void)env, (void)hint;
  Job *job = data;
  if (job->started && !job->finished) pthread_join(job->thread, NULL);
  tree_scan_free(&job->scan);
  path_stats_free(&job->paths);
  free(job->paths.paths);
  source_list_free(&job->sources);
  if (job->envp) {
    for (char **entry = job->envp; *entry; entry++) free(*entry);
    free(job->envp);
  }
  free(job->joined);
  free(job->root);
  free(job->base);
  free(job->cache_file);
  free(job);
}

// start(root: string, base: string, observedAtNs: bigint, threads: number, cacheFile: string): handle
static napi_value start(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 5) {
    napi_throw_type_error(env, NULL, "start(root, base, observedAtNs, threads, cacheFile)");
    return NULL;
  }
  Job *job = calloc(1, sizeof *job);
  if (!job) abort();
  job->root = string_argument(env, argv[0]);
  job->base = string_argument(env, argv[1]);
  job->cache_file = string_argument(env, argv[4]);
  bool lossless = false;
  int32_t threads = 1;
  if (!job->root || !job->base || !job->cache_file || napi_get_value_bigint_int64(env, argv[2], &job->observed_at_ns, &lossless) != napi_ok ||
      napi_get_value_int32(env, argv[3], &threads) != napi_ok) {
    free(job->root);
    free(job->base);
    free(job->cache_file);
    free(job);
    napi_throw_type_error(env, NULL, "start(root: string, base: string, observedAtNs: bigint, threads: number, cacheFile: string)");
    return NULL;
  }
  job->kind = JOB_TREE;
  job->threads = threads;
  napi_value handle;
  CHECK(napi_create_external(env, job, release, NULL, &handle));
  launch(job);
  return handle;
}

// A scan's threads allocate in arenas of their own, and glibc keeps what they freed: in the observer,
// which scans again and again, that was tens of MB of RSS holding nothing (malloc_trim(3)).
static void give_back(void) {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

static napi_value set(napi_env env, napi_value object, const char *name, napi_value value) {
  return napi_set_named_property(env, object, name, value) == napi_ok ? object : NULL;
}

// finish(handle): { failure: string } or { failure: null, lines: Buffer, offsets: Uint32Array,
//   specials: string[], dirs: string[] }. offsets has one more item than there are lines.
static napi_value finish(napi_env env, napi_callback_info info) {
  Job *job = take_job(env, info, JOB_TREE);
  if (!job) return NULL;
  TreeScan *scan = &job->scan;

  napi_value result, value;
  CHECK(napi_create_object(env, &result));
  if (scan->failed) {
    CHECK(napi_create_string_utf8(env, scan->failure, NAPI_AUTO_LENGTH, &value));
    return set(env, result, "failure", value);
  }
  CHECK(napi_get_null(env, &value));
  set(env, result, "failure", value);

  size_t plain = 0, specials = 0, dirs = 0, bytes = 0;
  for (size_t index = 0; index < scan->count; index++) {
    TreeEntry *entry = &scan->entries[index];
    if (entry->kind == ENTRY_PLAIN) {
      plain++;
      bytes += entry->line_length;
    } else if (entry->kind == ENTRY_SPECIAL) {
      specials++;
    } else {
      dirs++;
    }
  }

  void *data;
  napi_value lines, offsets_buffer, offsets, special_list, dir_list;
  CHECK(napi_create_buffer(env, bytes ? bytes : 1, &data, &lines));
  char *out = data;
  uint32_t *offset_data;
  CHECK(napi_create_arraybuffer(env, (plain + 1) * sizeof(uint32_t), (void **)&offset_data, &offsets_buffer));
  CHECK(napi_create_typedarray(env, napi_uint32_array, plain + 1, offsets_buffer, 0, &offsets));
  CHECK(napi_create_array_with_length(env, specials, &special_list));
  CHECK(napi_create_array_with_length(env, dirs, &dir_list));

  size_t written = 0, line_index = 0, special_index = 0, dir_index = 0;
  for (size_t index = 0; index < scan->count; index++) {
    TreeEntry *entry = &scan->entries[index];
    if (entry->kind == ENTRY_PLAIN) {
      offset_data[line_index++] = (uint32_t)written;
      memcpy(out + written, entry->line, entry->line_length);
      written += entry->line_length;
    } else {
      CHECK(napi_create_string_utf8(env, entry->path, entry->length, &value));
      if (entry->kind == ENTRY_SPECIAL) {
        CHECK(napi_set_element(env, special_list, (uint32_t)special_index++, value));
      } else {
        CHECK(napi_set_element(env, dir_list, (uint32_t)dir_index++, value));
      }
    }
  }
  offset_data[line_index] = (uint32_t)written;
  set(env, result, "lines", lines);
  set(env, result, "offsets", offsets);
  set(env, result, "specials", special_list);
  set(env, result, "dirs", dir_list);
  tree_scan_free(scan);
  give_back();
  return result;
}

// startStats(root: string, paths: string (NUL-separated), count: number, threads: number): handle
static napi_value start_stats(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  Job *job = calloc(1, sizeof *job);
  if (!job) abort();
  job->kind = JOB_PATHS;
  int32_t count = 0, threads = 1;
  size_t length = 0;
  job->root = argc >= 4 ? string_argument(env, argv[0]) : NULL;
  if (!job->root || napi_get_value_string_utf8(env, argv[1], NULL, 0, &length) != napi_ok ||
      napi_get_value_int32(env, argv[2], &count) != napi_ok || count < 0 || napi_get_value_int32(env, argv[3], &threads) != napi_ok) {
    free(job->root);
    free(job);
    napi_throw_type_error(env, NULL, "startStats(root: string, paths: string, count: number, threads: number)");
    return NULL;
  }
  job->joined = malloc(length + 1);
  job->paths.paths = calloc(count ? (size_t)count : 1, sizeof(char *));
  if (!job->joined || !job->paths.paths) abort();
  napi_get_value_string_utf8(env, argv[1], job->joined, length + 1, &length);
  // Split in place: N paths make N - 1 separators, and a count that disagrees leaves the rest unstat'ed.
  size_t found = 0;
  for (char *cursor = job->joined; found < (size_t)count && cursor <= job->joined + length; found++) {
    job->paths.paths[found] = cursor;
    cursor += strlen(cursor) + 1;
  }
  job->paths.count = found;
  job->threads = threads;
  napi_value handle;
  CHECK(napi_create_external(env, job, release, NULL, &handle));
  launch(job);
  return handle;
}

// Sets identities: (string | null)[] and executable: Uint8Array on result, in the order of the paths.
static napi_value put_stats(napi_env env, napi_value result, PathStats *stats) {
  napi_value identities, value, executable_buffer, executable, null_value;
  CHECK(napi_get_null(env, &null_value));
  CHECK(napi_create_array_with_length(env, stats->count, &identities));
  void *flags;
  CHECK(napi_create_arraybuffer(env, stats->count ? stats->count : 1, &flags, &executable_buffer));
  CHECK(napi_create_typedarray(env, napi_uint8_array, stats->count, executable_buffer, 0, &executable));
  for (size_t index = 0; index < stats->count; index++) {
    if (stats->identities && stats->identities[index]) {
      CHECK(napi_create_string_latin1(env, stats->identities[index], NAPI_AUTO_LENGTH, &value));
      ((uint8_t *)flags)[index] = stats->executable[index];
    } else {
      value = null_value;
    }
    CHECK(napi_set_element(env, identities, (uint32_t)index, value));
  }
  set(env, result, "identities", identities);
  return set(env, result, "executable", executable);
}

// finishStats(handle): { identities: (string | null)[], executable: Uint8Array }, in the order given
static napi_value finish_stats(napi_env env, napi_callback_info info) {
  Job *job = take_job(env, info, JOB_PATHS);
  if (!job) return NULL;
  napi_value result;
  CHECK(napi_create_object(env, &result));
  if (!put_stats(env, result, &job->paths)) return NULL;
  path_stats_free(&job->paths);
  return result;
}

// The environment git runs in: this process's, with optional locks off, so that listing never
// rewrites the index under a concurrent git command.
static char **git_environment(void) {
  size_t count = 0;
  while (environ && environ[count]) count++;
  char **envp = calloc(count + 2, sizeof(char *));
  if (!envp) abort();
  size_t kept = 0;
  for (size_t index = 0; index < count; index++) {
    if (strncmp(environ[index], "GIT_OPTIONAL_LOCKS=", 19) == 0) continue;
    if (!(envp[kept++] = strdup(environ[index]))) abort();
  }
  if (!(envp[kept] = strdup("GIT_OPTIONAL_LOCKS=0"))) abort();
  return envp;
}

// startSources(root: string, threads: number): handle
static napi_value start_sources(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t threads = 1;
  char *root = argc >= 2 ? string_argument(env, argv[0]) : NULL;
  if (!root || napi_get_value_int32(env, argv[1], &threads) != napi_ok) {
    free(root);
    napi_throw_type_error(env, NULL, "startSources(root: string, threads: number)");
    return NULL;
  }
  Job *job = calloc(1, sizeof *job);
  if (!job) abort();
  job->kind = JOB_SOURCES;
  job->root = root;
  job->threads = threads;
  job->envp = git_environment();
  napi_value handle;
  CHECK(napi_create_external(env, job, release, NULL, &handle));
  launch(job);
  return handle;
}

// finishSources(handle): { spawnError: string | null, status: number | null, signal: number | null,
//   stdout: Buffer, stderr: string, identities, executable }. identities and executable hold one
//   item per NUL-terminated path in stdout, and none unless git exited 0.
static napi_value finish_sources(napi_env env, napi_callback_info info) {
  Job *job = take_job(env, info, JOB_SOURCES);
  if (!job) return NULL;
  SourceList *list = &job->sources;
  napi_value result, value, null_value;
  CHECK(napi_create_object(env, &result));
  CHECK(napi_get_null(env, &null_value));
  if (list->spawn_errno) {
    int code = list->spawn_errno;
    const char *name = code == ENOENT ? "ENOENT" : code == EACCES ? "EACCES" : strerror(code);
    CHECK(napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &value));
  } else {
    value = null_value;
  }
  set(env, result, "spawnError", value);
  if (list->exit_status >= 0) CHECK(napi_create_int32(env, list->exit_status, &value));
  else value = null_value;
  set(env, result, "status", value);
  if (list->term_signal) CHECK(napi_create_int32(env, list->term_signal, &value));
  else value = null_value;
  set(env, result, "signal", value);
  CHECK(napi_create_buffer_copy(env, list->out_length, list->out_length ? list->out : "", NULL, &value));
  set(env, result, "stdout", value);
  CHECK(napi_create_string_utf8(env, list->err_length ? list->err : "", list->err_length, &value));
  set(env, result, "stderr", value);
  if (!put_stats(env, result, &list->stats)) return NULL;
  source_list_free(list);
  return result;
}

// callObserver(socketPath: string, request: string, deadlineMs: number, maxBytes: number):
//   { outcome: 'answered', reply: string } or { outcome: 'refused' | 'timeout' | 'closed' | 'oversized' | 'error', errno: number }
static napi_value call_observer(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t deadline_ms = 0;
  double max_bytes = 0;
  char *socket_path = argc == 4 ? string_argument(env, argv[0]) : NULL;
  char *request = argc == 4 ? string_argument(env, argv[1]) : NULL;
  if (!socket_path || !request || napi_get_value_int32(env, argv[2], &deadline_ms) != napi_ok ||
      napi_get_value_double(env, argv[3], &max_bytes) != napi_ok || max_bytes < 1) {
    free(socket_path);
    free(request);
    napi_throw_type_error(env, NULL, "callObserver(socketPath: string, request: string, deadlineMs: number, maxBytes: number)");
    return NULL;
  }
  ObserverReply reply;
  observer_call(&reply, socket_path, request, strlen(request), deadline_ms, (size_t)max_bytes);
  free(socket_path);
  free(request);
  static const char *const outcomes[] = {"answered", "refused", "timeout", "closed", "oversized", "error"};
  napi_value result, value;
  CHECK(napi_create_object(env, &result));
  CHECK(napi_create_string_utf8(env, outcomes[reply.outcome], NAPI_AUTO_LENGTH, &value));
  set(env, result, "outcome", value);
  if (reply.outcome == CALL_ANSWERED) {
    napi_status status = napi_create_string_utf8(env, reply.reply, reply.reply_length, &value);
    free(reply.reply);
    CHECK(status);
    set(env, result, "reply", value);
  } else {
    CHECK(napi_create_int32(env, reply.error_number, &value));
    set(env, result, "errno", value);
  }
  return result;
}

// peerPid(fd: number): the pid of the process at the other end of a Unix socket, or -1 when it
// cannot be told. The kernel records it when the peer connected (unix(7), SO_PEERCRED).
static napi_value peer_pid(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t fd = -1;
  if (argc < 1 || napi_get_value_int32(env, argv[0], &fd) != napi_ok) {
    napi_throw_type_error(env, NULL, "peerPid(fd: number)");
    return NULL;
  }
  int32_t pid = -1;
#ifdef SO_PEERCRED
  struct ucred credentials;
  socklen_t size = sizeof credentials;
  if (fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0 && size == sizeof credentials && credentials.pid > 0) pid = credentials.pid;
#endif
  napi_value result;
  CHECK(napi_create_int32(env, pid, &result));
  return result;
}

// queueWatch(fds, intervalNs, maxGapNs, limitBytes): watches these inotify descriptors; 0 or an errno.
static napi_value queue_watch_start(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint32_t count = 0;
  int64_t interval_ns = 0, max_gap_ns = 0, limit_bytes = 0;
  bool is_array = false;
  if (argc < 4 || napi_is_array(env, argv[0], &is_array) != napi_ok || !is_array || napi_get_array_length(env, argv[0], &count) != napi_ok ||
      napi_get_value_int64(env, argv[1], &interval_ns) != napi_ok || napi_get_value_int64(env, argv[2], &max_gap_ns) != napi_ok ||
      napi_get_value_int64(env, argv[3], &limit_bytes) != napi_ok || interval_ns <= 0) {
    napi_throw_type_error(env, NULL, "queueWatch takes descriptors, an interval, a longest gap and a limit");
    return NULL;
  }
  int fds[QUEUE_WATCH_MAX_FDS];
  int taken = 0;
  for (uint32_t i = 0; i < count && taken < QUEUE_WATCH_MAX_FDS; i++) {
    napi_value item;
    int32_t fd;
    CHECK(napi_get_element(env, argv[0], i, &item));
    if (napi_get_value_int32(env, item, &fd) == napi_ok && fd >= 0) fds[taken++] = fd;
  }
  napi_value result;
  CHECK(napi_create_int32(env, queue_watch(fds, taken, interval_ns, max_gap_ns, limit_bytes), &result));
  return result;
}

// queueWatchTake(): what the window saw since the last take, and a new window begins.
static napi_value queue_watch_take_window(napi_env env, napi_callback_info info) {
  (void)info;
  QueueWindow window = queue_watch_take();
  napi_value result, value;
  CHECK(napi_create_object(env, &result));
  CHECK(napi_create_double(env, (double)window.samples, &value));
  set(env, result, "samples", value);
  CHECK(napi_create_double(env, (double)window.gaps, &value));
  set(env, result, "gaps", value);
  CHECK(napi_create_double(env, (double)window.over, &value));
  set(env, result, "over", value);
  CHECK(napi_create_double(env, (double)window.failures, &value));
  set(env, result, "failures", value);
  CHECK(napi_create_double(env, (double)window.max_bytes, &value));
  set(env, result, "maxBytes", value);
  CHECK(napi_create_double(env, (double)window.idle_ns, &value));
  set(env, result, "idleNs", value);
  CHECK(napi_create_double(env, (double)window.longest_gap_ns, &value));
  set(env, result, "longestGapNs", value);
  CHECK(napi_create_int32(env, window.fds, &value));
  set(env, result, "fds", value);
  return result;
}

#ifdef __linux__
// treeWatch(root, callback): watches the tree on a thread of its own (native/treeWatch.c) and calls
// callback(kind, events, message, errno) on this thread for each batch: kind 'ready' once every
// directory is watched, 'events' with [{path, type}], 'error', 'overflow'. Returns a handle for
// treeWatchStop.
typedef struct {
  TreeWatch *watch;
  napi_threadsafe_function tsfn;
  // Events handed to the queue and not yet to JavaScript: past the cap, a batch is an overflow,
  // so a busy main thread costs a rescan, never unbounded memory.
  atomic_size_t queued;
} WatchHandle;

#define WATCH_MAX_QUEUED 65536

static void watch_sink(void *context, TreeWatchBatch *batch) {
  WatchHandle *handle = context;
  if (batch->kind == TW_EVENTS && atomic_load(&handle->queued) + batch->count > WATCH_MAX_QUEUED) {
    for (size_t i = 0; i < batch->count; i++) free(batch->events[i].path);
    free(batch->events);
    batch->events = NULL;
    batch->count = 0;
    batch->kind = TW_OVERFLOW;
  }
  atomic_fetch_add(&handle->queued, batch->count);
  if (napi_call_threadsafe_function(handle->tsfn, batch, napi_tsfn_nonblocking) != napi_ok) {
    atomic_fetch_sub(&handle->queued, batch->count);
    tree_watch_free_batch(batch);
  }
}

static void watch_call_js(napi_env env, napi_value callback, void *context, void *data) {
  WatchHandle *handle = context;
  TreeWatchBatch *batch = data;
  atomic_fetch_sub(&handle->queued, batch->count);
  // Closing: what was still queued is dropped.
  if (env == NULL) {
    tree_watch_free_batch(batch);
    return;
  }
  static const char *kinds[] = {"events", "ready", "error", "overflow"};
  static const char *types[] = {"create", "update", "delete"};
  napi_value argv[4], undefined, type_names[3];
  napi_get_undefined(env, &undefined);
  napi_create_string_utf8(env, kinds[batch->kind], NAPI_AUTO_LENGTH, &argv[0]);
  napi_create_array_with_length(env, batch->count, &argv[1]);
  for (int t = 0; t < 3; t++) napi_create_string_utf8(env, types[t], NAPI_AUTO_LENGTH, &type_names[t]);
  for (size_t i = 0; i < batch->count; i++) {
    napi_value event, path;
    napi_create_object(env, &event);
    napi_create_string_utf8(env, batch->events[i].path, NAPI_AUTO_LENGTH, &path);
    napi_set_named_property(env, event, "path", path);
    napi_set_named_property(env, event, "type", type_names[batch->events[i].type]);
    napi_set_element(env, argv[1], (uint32_t)i, event);
  }
  if (batch->message) napi_create_string_utf8(env, batch->message, NAPI_AUTO_LENGTH, &argv[2]);
  else argv[2] = undefined;
  napi_create_int32(env, batch->error_number, &argv[3]);
  tree_watch_free_batch(batch);
  napi_call_function(env, undefined, callback, 4, argv, NULL);
}

static void watch_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data);
}

static napi_value tree_watch_begin(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  napi_valuetype type = napi_undefined;
  if (argc < 2 || napi_typeof(env, argv[1], &type) != napi_ok || type != napi_function) {
    napi_throw_type_error(env, NULL, "treeWatch takes a root and a callback");
    return NULL;
  }
  char *root = string_argument(env, argv[0]);
  WatchHandle *handle = calloc(1, sizeof *handle);
  napi_value name;
  if (!root || !handle || napi_create_string_utf8(env, "vouch tree watch", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_threadsafe_function(env, argv[1], NULL, name, 0, 1, handle, watch_finalize, handle, watch_call_js, &handle->tsfn) != napi_ok) {
    free(root);
    free(handle);
    napi_throw_error(env, "VOUCH_NATIVE", "vouch tree watch: could not start");
    return NULL;
  }
  handle->watch = tree_watch_start(root, watch_sink, handle);
  int error = errno;
  free(root);
  if (!handle->watch) {
    napi_release_threadsafe_function(handle->tsfn, napi_tsfn_abort);
    napi_throw_error(env, "VOUCH_NATIVE", strerror(error));
    return NULL;
  }
  napi_value external;
  CHECK(napi_create_external(env, handle, NULL, NULL, &external));
  return external;
}

// treeWatchStop(handle): stops the thread and drops every watch; no callback follows.
static napi_value tree_watch_end(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  WatchHandle *handle = NULL;
  if (argc < 1 || napi_get_value_external(env, argv[0], (void **)&handle) != napi_ok || !handle) {
    napi_throw_type_error(env, NULL, "treeWatchStop takes a handle from treeWatch");
    return NULL;
  }
  if (handle->watch) {
    tree_watch_stop(handle->watch);
    handle->watch = NULL;
    napi_release_threadsafe_function(handle->tsfn, napi_tsfn_abort);
  }
  return NULL;
}
#endif

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
      {"start", NULL, start, NULL, NULL, NULL, napi_default, NULL},
      {"finish", NULL, finish, NULL, NULL, NULL, napi_default, NULL},
      {"startStats", NULL, start_stats, NULL, NULL, NULL, napi_default, NULL},
      {"finishStats", NULL, finish_stats, NULL, NULL, NULL, napi_default, NULL},
      {"startSources", NULL, start_sources, NULL, NULL, NULL, napi_default, NULL},
      {"finishSources", NULL, finish_sources, NULL, NULL, NULL, napi_default, NULL},
      {"callObserver", NULL, call_observer, NULL, NULL, NULL, napi_default, NULL},
      {"peerPid", NULL, peer_pid, NULL, NULL, NULL, napi_default, NULL},
      {"queueWatch", NULL, queue_watch_start, NULL, NULL, NULL, napi_default, NULL},
      {"queueWatchTake", NULL, queue_watch_take_window, NULL, NULL, NULL, napi_default, NULL},
#ifdef __linux__
      {"treeWatch", NULL, tree_watch_begin, NULL, NULL, NULL, napi_default, NULL},
      {"treeWatchStop", NULL, tree_watch_end, NULL, NULL, NULL, napi_default, NULL},
#endif
  };
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
