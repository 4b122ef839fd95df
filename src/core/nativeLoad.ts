import { VouchError } from './errors.js';

/*
 * A native module that does not load in this Node: better-sqlite3 (or
 * another addon) built for another Node version, typically after the user
 * switched versions with nvm or fnm, or a damaged build. Node then throws
 * ERR_DLOPEN_FAILED (https://nodejs.org/api/errors.html#err_dlopen_failed),
 * and for a version mismatch names both ABI versions in the message
 * ("compiled against a different Node.js version using NODE_MODULE_VERSION
 * 127. This version of Node.js requires NODE_MODULE_VERSION 115"). The fix is
 * to rebuild the module for this Node, where it is installed.
 */

/** Exit code of a command that could not load a native module: EX_UNAVAILABLE (sysexits.h), "a support file does not exist" in the broad sense. */
export const NATIVE_LOAD_EXIT = 69;

/**
 * NODE_MODULE_VERSION to the Node release line that uses it
 * (https://github.com/nodejs/node/blob/main/doc/abi_version_registry.json).
 */
const NODE_OF_ABI: Record<number, string> = { 83: '14', 88: '15', 93: '16', 102: '17', 108: '18', 111: '19', 115: '20', 120: '21', 127: '22', 131: '23', 137: '24', 141: '25' };

export interface NativeLoadFailure {
  /** The package that failed (`better-sqlite3`), or the file's name when it is not in node_modules. */
  module: string;
  /** The .node file, when the error names it. */
  file: string | null;
  /** Where to run the rebuild: the directory whose node_modules holds the module. */
  installDir: string | null;
  /** The NODE_MODULE_VERSION the module was built for, when the error says. */
  builtFor: number | null;
  /** This Node's version and NODE_MODULE_VERSION. */
  node: string;
  abi: number;
  /** Node's own reason, on one line, when it is not a version mismatch ("invalid ELF header"). */
  reason: string;
}

/** Whether an error is a native module that would not load; what is known about it, or null. */
export function nativeLoadFailure(error: unknown, node: { version: string; modules: string } = { version: process.version, modules: process.versions.modules }): NativeLoadFailure | null {
  if (error === null || typeof error !== 'object') return null;
  const code = (error as { code?: unknown }).code;
  const message = String((error as { message?: unknown }).message ?? '');
  const mismatch = /NODE_MODULE_VERSION (\d+)\. This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/.exec(message);
  // The "bindings" package's search, when no build of the addon is found at all (https://github.com/TooTallNate/node-bindings).
  const unbuilt = message.startsWith('Could not locate the bindings file');
  if (code !== 'ERR_DLOPEN_FAILED' && mismatch === null && !unbuilt) return null;
  if (unbuilt) {
    const tried = /(\/.*?)\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(message);
    return { module: tried?.[2] ?? 'a native module', file: null, installDir: tried ? tried[1] || '/' : null, builtFor: null, node: node.version, abi: Number(node.modules), reason: 'no build of it was found (Could not locate the bindings file)' };
  }
  // "The module '/x.node' was compiled against…", or dlerror's "/x.node: invalid ELF header"; a path may hold spaces.
  const file = /The module '(\/[^']+\.node)'/.exec(message)?.[1] ?? /^(\/.*?\.node): /m.exec(message)?.[1] ?? /(\/[^\s'"]+\.node)\b/.exec(message)?.[1] ?? null;
  const at = file === null ? -1 : file.lastIndexOf('/node_modules/');
  const inModules = file !== null && at >= 0;
  const packagePath = inModules ? file.slice(at + '/node_modules/'.length).split('/') : [];
  const module = inModules ? (packagePath[0]!.startsWith('@') ? packagePath.slice(0, 2).join('/') : packagePath[0]!) : (file?.split('/').pop() ?? 'a native module');
  const firstLine = message.split('\n').map((line) => line.trim()).filter((line) => line !== '').join(' ');
  return {
    module,
    file,
    // vouch's own addon sits at <package>/build/Release/vouch_scan.node.
    installDir: inModules ? file.slice(0, at) || '/' : file !== null && file.includes('/build/Release/') ? file.slice(0, file.indexOf('/build/Release/')) : null,
    builtFor: mismatch ? Number(mismatch[1]) : null,
    node: node.version,
    abi: Number(node.modules),
    reason: file !== null ? firstLine.replace(file, '').replace(/^[:\s'"]+/, '') : firstLine,
  };
}

function nodeOf(abi: number): string {
  const line = NODE_OF_ABI[abi];
  return line === undefined ? `NODE_MODULE_VERSION ${abi}` : `Node ${line} (NODE_MODULE_VERSION ${abi})`;
}

/** One line: what failed, for which Node, and the command that fixes it. */
export function nativeLoadMessage(failure: NativeLoadFailure): string {
  const what = `the native module ${failure.module}${failure.file ? ` (${failure.file})` : ''} does not load`;
  const why =
    failure.builtFor !== null
      ? `it was built for ${nodeOf(failure.builtFor)}, and this is Node ${failure.node} (NODE_MODULE_VERSION ${failure.abi})`
      : `Node ${failure.node} (NODE_MODULE_VERSION ${failure.abi}) says: ${failure.reason}`;
  const rebuild = `npm rebuild${failure.module.endsWith('.node') ? '' : ` ${failure.module}`}`;
  const fix = failure.installDir !== null ? `cd ${shellWord(failure.installDir)} && ${rebuild}` : `${rebuild} where vouch is installed`;
  return `${what}: ${why}. Fix: ${fix} (with this Node), or run vouch with the Node it was installed with`;
}

/** The error a command ends with when a native module does not load; null for any other error. */
export function nativeLoadError(error: unknown): VouchError | null {
  if (error instanceof VouchError) return error.code === 'native-module-unloadable' ? error : null;
  const failure = nativeLoadFailure(error);
  return failure === null ? null : new VouchError('native-module-unloadable', nativeLoadMessage(failure), NATIVE_LOAD_EXIT);
}

function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
