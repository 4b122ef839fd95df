// Bundles the CLI so that a command loads a handful of files, not dozens, and
// as CommonJS: on Node 20 the ESM loader's per-module cost (async resolve,
// link and evaluate) is a large share of a status, which CommonJS's
// synchronous require does not pay. dist/bin/package.json marks the folder
// CommonJS, so the bin keeps its name. Commands stay lazily loaded chunks;
// the SQLite addon and the config validator stay external (native, and loaded
// only when a config changed). The type stage's worker is an entry of its
// own: a worker thread starts from a file, which the stage finds beside its
// own chunk.
export default {
  input: { main: 'dist/cli/main.js', typeWorker: 'dist/probe/typeWorker.js' },
  platform: 'node',
  external: ['better-sqlite3', 'zod', '@parcel/watcher'],
  output: {
    dir: 'dist/bin',
    format: 'cjs',
    entryFileNames: '[name].js',
    chunkFileNames: '[name]-[hash].js',
  },
  plugins: [
    {
      name: 'commonjs-folder',
      generateBundle() {
        this.emitFile({ type: 'asset', fileName: 'package.json', source: '{ "type": "commonjs" }\n' });
      },
    },
  ],
};
