// Bundles the CLI so that a command loads a handful of files, not dozens: on
// Node 20 the module loader's per-file cost is a large share of a status.
// Commands stay lazily loaded chunks; the SQLite addon and the config
// validator stay external (native, and loaded only when a config changed).
export default {
  input: 'dist/cli/main.js',
  platform: 'node',
  external: ['better-sqlite3', 'zod', '@parcel/watcher'],
  output: {
    dir: 'dist/bin',
    format: 'esm',
    chunkFileNames: '[name]-[hash].js',
  },
};
