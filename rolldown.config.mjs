// Bundles the CLI so that a command loads a handful of files, not dozens, and
// as CommonJS: on Node 20 the ESM loader's per-module cost (async resolve,
// link and evaluate) is a large share of a status, which CommonJS's
// synchronous require does not pay. dist/bin/package.json marks the folder
// CommonJS, so the bin keeps its name. Commands stay lazily loaded chunks;
// the SQLite addon and the config validator stay external (native, and loaded
// only when a config changed). The type stage's worker is an entry of its
// own: a worker thread starts from a file, which the stage finds beside its
// own chunk. So are the Jest stage's host process and the resolver the
// workspace's Jest loads in it, for the same reason.
import { readFileSync } from 'node:fs';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

export default {
  input: { main: 'dist/cli/main.js', typeWorker: 'dist/prove/typeWorker.js', jestHost: 'dist/prove/jestHost.js', jestResolver: 'dist/prove/jestResolver.js' },
  platform: 'node',
  external: ['better-sqlite3', 'zod', '@parcel/watcher'],
  output: {
    dir: 'dist/bin',
    format: 'cjs',
    entryFileNames: '[name].js',
    chunkFileNames: '[name]-[hash].js',
    codeSplitting: {
      groups: [
        {
          // What main.js itself needs, in one file and out of 'common', so --help and the hook load
          // no more: the errors and the inlined version. Each file a status loads costs it about
          // 0.3 ms (resolve, read, wrap). rolldown's runtime keeps a chunk of its own: groups are
          // not offered it.
          name: 'boot',
          test: /dist[\\/]core[\\/](errors|claimError|version)\.js$/,
          priority: 2,
        },
        {
          // Where a project is (its config, root and state dir), and what the hook needs at start:
          // enough for the hook to pass a command that names no check without loading 'common'.
          name: 'place',
          priority: 2,
          test: /dist[\\/](api[\\/]projectPlace|agents[\\/]shellQuote|observer[\\/]callMode|store[\\/](stateDir|diskFull)|core[\\/](config|configLimits|pathInside))\.js$/,
        },
        {
          // A status the observer answers whole (cli/servedStatus.ts) loads this and 'place', not
          // 'common': node:crypto alone costs about 6 ms. 'common' loads it too.
          name: 'served',
          priority: 2,
          test: /dist[\\/](cli[\\/](servedStatus|options)|api[\\/](servedStatus|buildId)|observer[\\/](listedObserver|observerRecord|callLimits|protocol)|fs[\\/](nativeAddon|processStart))\.js$/,
        },
        {
          // The small modules nearly every command loads, as one file: each
          // file costs a require its resolve, read and wrap. shellQuote is
          // here because the hook needs it at start, and main.js has loaded
          // this file by then.
          name: 'common',
          priority: 1,
          test: /dist[\\/](core[\\/](config|digest|definition|context|reason|decide|humanTime|configLimits)|cli[\\/](format|io)|observer[\\/](client|localCalls)|store[\\/]stateDir|api[\\/](project|askObserver|reportJson)|agents[\\/]shellQuote)\.js$/,
        },
        {
          // The parser and what reads its trees, as one file: the hook's
          // matcher and rewrite, and init, load them together.
          name: 'shellCommand',
          priority: 1,
          test: /node_modules[\\/]unbash[\\/]|dist[\\/](core[\\/]shellWords|agents[\\/]shellCommand)\.js$/,
        },
      ],
    },
  },
  plugins: [
    {
      // Every command reports the version; read at build time, it costs a
      // process no require of package.json through the loader (about 2 ms).
      name: 'inline-version',
      transform(_code, id) {
        if (id.replaceAll('\\', '/').endsWith('/dist/core/version.js')) return `export const VERSION = ${JSON.stringify(version)};\n`;
        return null;
      },
    },
    {
      name: 'commonjs-folder',
      generateBundle() {
        this.emitFile({ type: 'asset', fileName: 'package.json', source: '{ "type": "commonjs" }\n' });
      },
    },
  ],
};
