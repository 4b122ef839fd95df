// Bundles the CLI so that a command loads a handful of files, not dozens: on
// Node 20 the module loader's per-file cost is a large share of a status.
// Commands stay lazily loaded chunks; the SQLite addon and the config
// validator stay external (native, and loaded only when a config changed).
// The type stage's worker is an entry of its own: a worker thread starts from
// a file, which the stage finds beside its own chunk.
export default {
  input: { main: 'dist/cli/main.js', typeWorker: 'dist/probe/typeWorker.js' },
  platform: 'node',
  external: ['better-sqlite3', 'zod', '@parcel/watcher'],
  output: {
    dir: 'dist/bin',
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: '[name]-[hash].js',
  },
};
