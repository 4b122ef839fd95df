import { describe, expect, it } from 'vitest';
import { VouchError } from '../../src/core/errors.js';
import { nativeLoadError, nativeLoadFailure, nativeLoadMessage } from '../../src/core/nativeLoad.js';

/* Node's own dlopen messages (src/node_binding.cc), as process.dlopen throws them. */

const NODE_20 = { version: 'v20.20.2', modules: '115' };

function dlopenError(message: string): Error {
  return Object.assign(new Error(message), { code: 'ERR_DLOPEN_FAILED' });
}

const FILE = '/home/u/.nvm/versions/node/v22.1.0/lib/node_modules/vouch/node_modules/better-sqlite3/build/Release/better_sqlite3.node';
const MISMATCH =
  `The module '${FILE}'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 127. This version of Node.js requires\n` +
  'NODE_MODULE_VERSION 115. Please try re-compiling or re-installing\nthe module (for instance, using `npm rebuild` or `npm install`).';

describe('a native module that does not load', () => {
  it('a version mismatch: the module, both Nodes, and the rebuild where it is installed', () => {
    const failure = nativeLoadFailure(dlopenError(MISMATCH), NODE_20)!;
    expect(failure).toMatchObject({ module: 'better-sqlite3', file: FILE, installDir: '/home/u/.nvm/versions/node/v22.1.0/lib/node_modules/vouch', builtFor: 127, abi: 115 });
    expect(nativeLoadMessage(failure)).toBe(
      `the native module better-sqlite3 (${FILE}) does not load: it was built for Node 22 (NODE_MODULE_VERSION 127), and this is Node v20.20.2 (NODE_MODULE_VERSION 115). ` +
        'Fix: cd /home/u/.nvm/versions/node/v22.1.0/lib/node_modules/vouch && npm rebuild better-sqlite3 (with this Node), or run vouch with the Node it was installed with',
    );
    // The message alone is enough, whatever the code.
    expect(nativeLoadFailure(new Error(MISMATCH), NODE_20)?.builtFor).toBe(127);
  });

  it("a damaged file, a scoped package, and vouch's own addon", () => {
    const damaged = nativeLoadFailure(dlopenError('/p/node_modules/@parcel/watcher-linux-x64-glibc/watcher.node: invalid ELF header'), NODE_20)!;
    expect(damaged).toMatchObject({ module: '@parcel/watcher-linux-x64-glibc', installDir: '/p', builtFor: null, reason: 'invalid ELF header' });
    expect(nativeLoadMessage(damaged)).toContain('Node v20.20.2 (NODE_MODULE_VERSION 115) says: invalid ELF header. Fix: cd /p && npm rebuild @parcel/watcher-linux-x64-glibc');
    const own = nativeLoadFailure(dlopenError("/opt/my tools/vouch/build/Release/vouch_scan.node: file too short"), NODE_20)!;
    expect(own).toMatchObject({ module: 'vouch_scan.node', installDir: '/opt/my tools/vouch' });
    expect(nativeLoadMessage(own)).toContain("Fix: cd '/opt/my tools/vouch' && npm rebuild (with this Node)");
  });

  it('no build at all: the bindings package found none', () => {
    const message = 'Could not locate the bindings file. Tried:\n → /w/app/node_modules/better-sqlite3/build/better_sqlite3.node\n → /w/app/node_modules/better-sqlite3/build/Debug/better_sqlite3.node';
    const failure = nativeLoadFailure(new Error(message), NODE_20)!;
    expect(failure).toMatchObject({ module: 'better-sqlite3', file: null, installDir: '/w/app' });
    expect(nativeLoadMessage(failure)).toBe(
      'the native module better-sqlite3 does not load: Node v20.20.2 (NODE_MODULE_VERSION 115) says: no build of it was found (Could not locate the bindings file). ' +
        'Fix: cd /w/app && npm rebuild better-sqlite3 (with this Node), or run vouch with the Node it was installed with',
    );
  });

  it('any other error is not one', () => {
    expect(nativeLoadFailure(new Error('SQLITE_CANTOPEN'))).toBeNull();
    expect(nativeLoadFailure(Object.assign(new Error('x'), { code: 'MODULE_NOT_FOUND' }))).toBeNull();
    expect(nativeLoadFailure(null)).toBeNull();
    expect(nativeLoadError(new VouchError('usage', 'bad'))).toBeNull();
    const error = nativeLoadError(dlopenError(MISMATCH))!;
    expect(error.code).toBe('native-module-unloadable');
    expect(error.exitCode).toBe(69);
    // Already converted (store/openStore.ts): passed on as it is.
    expect(nativeLoadError(error)).toBe(error);
  });
});
