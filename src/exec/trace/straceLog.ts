import { nodeOptionsRunCode } from '../../core/listingNames.js';
import { type Access, type CompilerProcess, type LookupAnswer, normalizeRunPath, type RunFacts, RunFactsBuilder } from '../../core/runFacts.js';

/**
 * Reads the log strace(1) writes for a traced run (the flags are `tracedArgv`'s, in tracer.ts)
 * and turns it into run facts. Pure: it is fed lines, in the log's order.
 *
 * What the log looks like, per strace(1):
 * - every line starts with the pid (`-f`); a call another process interrupts is split into
 *   `name(args <unfinished ...>` and, later, `<... name resumed>rest`;
 * - `-y` (`--decode-fds=path`) prints each fd argument with its path, `3</dir>`, and AT_FDCWD
 *   with the caller's working directory, `AT_FDCWD</cwd>`: a `*at` call is resolved from the
 *   log alone, and getdents64 names the directory it lists;
 * - flags and modes are symbolic (`O_RDONLY|O_CLOEXEC`, `S_IFREG|0644`), the same names on
 *   every architecture, where raw numbers differ (O_DIRECTORY is 0200000 on x86-64 and
 *   040000 on arm64, open(2));
 * - a string is C-escaped (`\"`, `\\`, `\n`, octal `\303`, or `\xc3` with -x); a path longer
 *   than strace could read is printed `"..."...`, and an unreadable one as an address. Either
 *   makes the facts unusable ('unknown-path'), never a wrong path.
 *
 * A call the run made but this parser does not model (a file system call it has no rule
 * for, or a line it cannot read) makes the facts unusable ('unparsed') rather than silently
 * dropping an access: a check whose reads are not all known must not answer CURRENT.
 *
 * Paths are those the run named, joined to the directory strace printed for the dirfd or the
 * working directory: the kernel's view of it, with links resolved. Two names of one file (a
 * link and its target) are two facts; the fingerprint looks at each as the run did.
 *
 * Not seen by any tracer of system calls: the interpreter of a `#!` script is opened by the
 * kernel inside execve, so it appears only as the execve of the script.
 */

/** The working directory of one or more processes: threads (CLONE_FS) share one. */
interface Cwd {
  path: string | null;
}

interface Call {
  name: string;
  args: string[];
  /** The return value: a number, `?`, or a hex address. */
  value: string;
  /** The errno name when the call failed (`-1 ENOENT (...)`). */
  errno: string | null;
}

/** File and process calls that name no path, or only one this model does not need. */
const IGNORED = new Set([
  'wait4', 'waitid', 'waitpid', 'kill', 'tkill', 'tgkill', 'rt_sigqueueinfo', 'rt_tgsigqueueinfo',
  'pidfd_open', 'pidfd_send_signal', 'pidfd_getfd', 'statfs', 'statfs64', 'fstatfs', 'fstatfs64', 'umask',
  'unshare', 'setns', 'arch_prctl', 'inotify_add_watch', 'fanotify_mark', 'name_to_handle_at', 'open_by_handle_at',
  'fstat', 'fstat64', 'fchmod', 'fchown', 'flistxattr', 'fgetxattr', 'fsetxattr', 'fremovexattr', 'ftruncate', 'futimesat',
]);

/** Calls whose only path is changed in place: the run wrote it. */
const METADATA_WRITES = new Set([
  'truncate', 'truncate64', 'chmod', 'fchmodat', 'fchmodat2', 'chown', 'lchown', 'fchownat', 'chown32', 'lchown32',
  'utime', 'utimes', 'utimensat', 'setxattr', 'lsetxattr', 'removexattr', 'lremovexattr',
]);

/** Calls that ask about a path without opening it: a lookup. */
const XATTR_LOOKUPS = new Set(['getxattr', 'lgetxattr', 'listxattr', 'llistxattr']);

/** Not there: the path (or a directory on the way) does not exist. */
const ABSENT = new Set(['ENOENT', 'ENOTDIR']);

export interface StraceLogOptions {
  /** The directory the traced command started in. */
  cwd: string;
  /** The cap on distinct paths (core/runFacts.ts). */
  cap?: number;
}

export class StraceLogParser {
  private readonly facts: RunFactsBuilder;
  private readonly cwds = new Map<number, Cwd>();
  private readonly pending = new Map<number, string>();
  private firstPid: number | null = null;
  /** Unix socket paths (`@name` when abstract) the run bound: its own servers. */
  private readonly boundSockets = new Set<string>();
  /**
   * Per process, the compiler it runs (an index into `compilers`), or null for any other
   * program. Threads and forks run their parent's until they exec; a process whose start the
   * log has not shown yet runs an unknown program, which is "other".
   */
  private readonly programs = new Map<number, number | null>();
  private readonly compilers: (Omit<CompilerProcess, 'configs'> & { configs: Set<string> })[] = [];
  private lineNumber = 0;

  constructor(private readonly options: StraceLogOptions) {
    this.facts = new RunFactsBuilder(options.cap);
  }

  /** One line of the log, without its newline. */
  line(text: string): void {
    this.lineNumber++;
    if (this.facts.failed || text === '') return;
    const match = /^(\d+) +(.*)$/s.exec(text);
    if (!match) return this.unparsed(text);
    const pid = Number(match[1]);
    let rest = match[2]!;
    if (this.firstPid === null) {
      this.firstPid = pid;
      this.cwds.set(pid, { path: this.options.cwd });
    }
    // Signals and exits: `--- SIGCHLD {...} ---`, `+++ exited with 0 +++`.
    if (rest.startsWith('--- ') || rest.startsWith('+++ ')) return;
    const unfinished = ' <unfinished ...>';
    if (rest.endsWith(unfinished)) {
      this.pending.set(pid, rest.slice(0, -unfinished.length));
      return;
    }
    const resumed = /^<\.\.\. ([a-z0-9_]+) resumed>(.*)$/s.exec(rest);
    if (resumed) {
      const start = this.takePending(pid, resumed[1]!);
      if (start === null) return this.unparsed(text);
      rest = start + resumed[2]!;
    }
    const call = parseCall(rest);
    if (!call) return this.unparsed(text);
    this.apply(pid, call, text);
  }

  finish(): RunFacts {
    return this.facts.finish(this.compilers.map((compiler) => ({ ...compiler, configs: [...compiler.configs] })));
  }

  /** The start of a split call; a thread that execs resumes under its leader's pid (execve(2)), so an execve may resume in another pid. */
  private takePending(pid: number, name: string): string | null {
    const own = this.pending.get(pid);
    if (own !== undefined && own.startsWith(`${name}(`)) {
      this.pending.delete(pid);
      return own;
    }
    if (name === 'execve' || name === 'execveat') {
      for (const [other, start] of this.pending) {
        if (start.startsWith(`${name}(`)) {
          this.pending.delete(other);
          return start;
        }
      }
    }
    return null;
  }

  private unparsed(text: string): void {
    this.facts.fail('unparsed', `line ${this.lineNumber}: ${text.slice(0, 200)}`);
  }

  private record(access: Access): void {
    this.facts.record(access);
  }

  private cwdOf(pid: number): Cwd {
    let cwd = this.cwds.get(pid);
    if (cwd) return cwd;
    // A child can print before its parent's fork returns: it inherits from the one process
    // with a fork in flight, if there is exactly one; otherwise its directory is unknown
    // until a call of its own shows it (AT_FDCWD</cwd>).
    const forking = [...this.pending].filter(([, start]) => /^(clone|clone3|fork|vfork)\(/.test(start)).map(([parent]) => this.cwds.get(parent)?.path ?? null);
    const inherited = forking.length > 0 && forking.every((path) => path === forking[0]) ? forking[0]! : null;
    cwd = { path: inherited };
    this.cwds.set(pid, cwd);
    return cwd;
  }

  /** The absolute path a call names: `dirArg` is a decoded fd or AT_FDCWD (null for calls without one). */
  private resolve(pid: number, dirArg: string | null, pathArg: string | undefined, text: string): string | null {
    const path = pathString(pathArg);
    if (path === null) {
      this.facts.fail('unknown-path', `a path strace could not print whole: ${text.slice(0, 200)}`);
      return null;
    }
    return this.resolveDecoded(pid, dirArg, path, text);
  }

  /** resolve() for a path already decoded. */
  private resolveDecoded(pid: number, dirArg: string | null, path: string, text: string): string | null {
    const cwd = this.cwdOf(pid);
    let base: string | null;
    if (dirArg === null) base = cwd.path;
    else {
      const dir = fdPath(dirArg);
      const fdcwd = /^(AT_FDCWD|-100)$/.test(dir?.fd ?? dirArg.trim());
      // strace reads AT_FDCWD's directory when the call happens: the truest cwd there is.
      if (dir !== null && fdcwd) cwd.path = dir.path;
      base = dir !== null ? dir.path : fdcwd ? cwd.path : null;
    }
    if (path.startsWith('/')) return path;
    if (base === null || !base.startsWith('/')) {
      this.facts.fail('unknown-path', `a relative path from an unknown directory: ${text.slice(0, 200)}`);
      return null;
    }
    return path === '' ? base : `${base}/${path}`;
  }

  private lookupFailed(path: string, errno: string | null): void {
    this.record({ op: 'lookup', path, answer: errno !== null && ABSENT.has(errno) ? { kind: 'absent' } : { kind: 'error', errno: errno ?? 'unknown' } });
  }

  private apply(pid: number, call: Call, text: string): void {
    const { name, args } = call;
    const ok = call.errno === null && call.value !== '?';
    // `= ? ERESTARTSYS`: interrupted, and restarted as a call of its own; `= ?` with no error: the process ended inside it.
    if (call.value === '?' && call.errno === null && !IGNORED.has(name) && name !== 'exit' && name !== 'exit_group') return;
    if (call.errno !== null && call.errno.startsWith('ERESTART')) return;
    switch (name) {
      // The tracer injects ENOSYS (tracer.ts): a ring that did open would read and write files with
      // no system call to see. Only a ring the injection missed is a hole in the facts.
      case 'io_uring_setup':
        if (ok) this.facts.fail('outside-work', `an io_uring was set up, whose file operations no tracer of system calls sees (line ${this.lineNumber})`);
        return;
      // A unix socket names a process to talk to. One the run bound itself is its own; one it
      // did not is a daemon started outside the trace (turbo's, nx's), which reads
      // files for the run that no trace of the run sees. Other families (the network) are not
      // files, as for declared checks.
      case 'bind':
      case 'connect': {
        const address = unixAddress(text);
        if (address === null) return;
        const path = address.abstract ? `@${address.name}` : this.resolveDecoded(pid, null, address.name, text);
        if (path === null) return;
        if (name === 'bind') {
          if (!ok) return;
          this.boundSockets.add(path);
          if (!address.abstract) this.record({ op: 'create', path });
          return;
        }
        const attempted = ok || call.errno === 'EINPROGRESS' || call.errno === 'EAGAIN';
        if (attempted && !this.boundSockets.has(path)) {
          this.facts.fail('outside-work', `the run talked over the socket ${path} to a process outside its trace, whose reads are not in it (line ${this.lineNumber})`);
        }
        return;
      }
      case 'open':
      case 'creat':
      case 'openat':
      case 'openat2': {
        const at = name === 'openat' || name === 'openat2';
        const pathArg = at ? args[1] : args[0];
        if (pathString(pathArg) === '') return;
        const path = this.resolve(pid, at ? args[0]! : null, pathArg, text);
        if (path === null) return;
        const flags = name === 'creat' ? new Set(['O_WRONLY', 'O_CREAT', 'O_TRUNC']) : name === 'openat2' ? flagNames(/flags=([^,}]*)/.exec(args[2] ?? '')?.[1] ?? '') : flagNames(at ? args[2] : args[1]);
        if (!ok) return this.lookupFailed(path, call.errno);
        return this.opened(pid, path, flags);
      }
      case 'stat':
      case 'lstat':
      case 'stat64':
      case 'lstat64':
      case 'access':
      case 'newfstatat':
      case 'fstatat64':
      case 'statx':
      case 'faccessat':
      case 'faccessat2':
      case 'getxattr':
      case 'lgetxattr':
      case 'listxattr':
      case 'llistxattr': {
        const at = name === 'newfstatat' || name === 'fstatat64' || name === 'statx' || name === 'faccessat' || name === 'faccessat2';
        const pathArg = at ? args[1] : args[0];
        // An empty path with AT_EMPTY_PATH is fstat(2) of an open fd: the open was recorded.
        if (pathString(pathArg) === '') return;
        const path = this.resolve(pid, at ? args[0]! : null, pathArg, text);
        if (path === null) return;
        if (XATTR_LOOKUPS.has(name)) {
          if (ok || call.errno === 'ENODATA' || call.errno === 'ENOTSUP' || call.errno === 'ERANGE') return this.record({ op: 'lookup', path, answer: { kind: 'present' } });
          return this.lookupFailed(path, call.errno);
        }
        if (!ok) return this.lookupFailed(path, call.errno);
        return this.record({ op: 'lookup', path, answer: modeAnswer(args.join(', ')) });
      }
      case 'readlink':
      case 'readlinkat': {
        const at = name === 'readlinkat';
        const path = this.resolve(pid, at ? args[0]! : null, at ? args[1] : args[0], text);
        if (path === null) return;
        if (!ok) {
          // EINVAL: it exists and is not a symbolic link (readlink(2)).
          if (call.errno === 'EINVAL') return this.record({ op: 'lookup', path, answer: { kind: 'present' } });
          return this.lookupFailed(path, call.errno);
        }
        const target = pathString(at ? args[2] : args[1]);
        if (target === null) return this.facts.fail('unknown-path', `a link target strace could not print whole: ${text.slice(0, 200)}`);
        return this.record({ op: 'readlink', path, target });
      }
      case 'getdents64':
      case 'getdents': {
        const dir = fdPath(args[0] ?? '');
        if (dir === null) return this.facts.fail('unknown-path', `a listed directory without its path: ${text.slice(0, 200)}`);
        if (ok) this.record({ op: 'list', path: dir.path, by: this.programs.get(pid) ?? undefined });
        return;
      }
      case 'execve':
      case 'execveat': {
        const at = name === 'execveat';
        const path = this.resolve(pid, at ? args[0]! : null, at ? args[1] : args[0], text);
        if (path === null) return;
        if (!ok) return this.lookupFailed(path, call.errno);
        this.programs.set(pid, this.compilerStarted(pid, path, stringArray(at ? args[2] : args[1]), stringArray(at ? args[3] : args[2])));
        return this.record({ op: 'exec', path });
      }
      case 'chdir': {
        const path = this.resolve(pid, null, args[0], text);
        if (path === null) return;
        if (!ok) return this.lookupFailed(path, call.errno);
        this.record({ op: 'lookup', path, answer: { kind: 'directory' } });
        this.cwdOf(pid).path = path;
        return;
      }
      case 'getcwd': {
        // The kernel's answer: the truest working directory there is.
        const path = ok ? pathString(args[0]) : null;
        if (path?.startsWith('/')) this.cwdOf(pid).path = path;
        return;
      }
      case 'exit':
      case 'exit_group':
        // Its pid may be reused by a later process, which must not inherit this one's directory.
        this.cwds.delete(pid);
        this.programs.delete(pid);
        return;
      case 'fchdir': {
        const dir = fdPath(args[0] ?? '');
        if (dir === null) return this.facts.fail('unknown-path', `fchdir to an fd without its path: ${text.slice(0, 200)}`);
        if (ok) this.cwdOf(pid).path = dir.path;
        return;
      }
      case 'clone':
      case 'clone3':
      case 'fork':
      case 'vfork': {
        if (!ok) return;
        const child = Number(call.value);
        if (!Number.isInteger(child) || child <= 0) return;
        const parent = this.cwdOf(pid);
        const sharesFs = (name === 'clone' || name === 'clone3') && args.some((arg) => /\bCLONE_FS\b/.test(arg));
        this.cwds.set(child, sharesFs ? parent : { path: parent.path });
        // A child that already exec'd before its parent's fork returned runs what it exec'd.
        if (!this.programs.has(child)) this.programs.set(child, this.programs.get(pid) ?? null);
        return;
      }
      case 'unlink':
      case 'rmdir':
      case 'unlinkat': {
        const at = name === 'unlinkat';
        const path = this.resolve(pid, at ? args[0]! : null, at ? args[1] : args[0], text);
        if (path === null) return;
        if (!ok) return this.lookupFailed(path, call.errno);
        return this.record({ op: 'remove', path });
      }
      case 'mkdir':
      case 'mkdirat':
      case 'mknod':
      case 'mknodat': {
        const at = name === 'mkdirat' || name === 'mknodat';
        const path = this.resolve(pid, at ? args[0]! : null, at ? args[1] : args[0], text);
        if (path === null) return;
        if (ok) return this.record({ op: 'create', path });
        // `mkdir -p` asks "is it there?" by EEXIST.
        if (call.errno === 'EEXIST') return this.record({ op: 'lookup', path, answer: { kind: 'present' } });
        return this.lookupFailed(path, call.errno);
      }
      case 'rename':
      case 'renameat':
      case 'renameat2':
      case 'link':
      case 'linkat': {
        const at = name !== 'rename' && name !== 'link';
        const from = this.resolve(pid, at ? args[0]! : null, at ? args[1] : args[0], text);
        const to = this.resolve(pid, at ? args[2]! : null, at ? args[3] : args[1], text);
        if (from === null || to === null) return;
        if (!ok) {
          this.lookupFailed(from, call.errno);
          return;
        }
        if (name.startsWith('rename')) this.record({ op: 'remove', path: from });
        // linkat(fd, "", ..., AT_EMPTY_PATH) names an open (often O_TMPFILE) file: nothing is looked up.
        else if (pathString(at ? args[1] : args[0]) !== '') this.record({ op: 'lookup', path: from, answer: { kind: 'present' } });
        return this.record({ op: 'create', path: to });
      }
      case 'symlink':
      case 'symlinkat': {
        const at = name === 'symlinkat';
        const path = this.resolve(pid, at ? args[1]! : null, at ? args[2] : args[1], text);
        if (path === null) return;
        if (ok) return this.record({ op: 'create', path });
        if (call.errno === 'EEXIST') return this.record({ op: 'lookup', path, answer: { kind: 'present' } });
        return this.lookupFailed(path, call.errno);
      }
      default: {
        if (METADATA_WRITES.has(name)) {
          const at = name === 'fchmodat' || name === 'fchmodat2' || name === 'fchownat' || name === 'utimensat';
          const pathArg = at ? args[1] : args[0];
          // utimensat(fd, NULL, ...) changes an open fd's times: its open was recorded.
          if (pathArg === undefined || pathArg.trim() === 'NULL' || pathString(pathArg) === '') return;
          const path = this.resolve(pid, at ? args[0]! : null, pathArg, text);
          if (path === null) return;
          if (ok) return this.record({ op: 'write', path });
          return this.lookupFailed(path, call.errno);
        }
        if (IGNORED.has(name)) return;
        this.facts.fail('unparsed', `a system call the tracer has no rule for: ${name} (line ${this.lineNumber})`);
      }
    }
  }

  /**
   * The compiler a successful exec starts, or null: Node (by its file name) given a script named
   * `tsc` or `tsc.js`, no options of its own, and an environment whose NODE_OPTIONS loads no code
   * (a preload from `data:` reads no file, so the first-read check below cannot see it). Whether
   * the script is TypeScript's, and whether anything ran before it, is for fs/listingFilter.ts to
   * check after the run. An environment strace did not print whole counts as one that may.
   */
  private compilerStarted(pid: number, executed: string, argv: string[] | null, envp: string[] | null): number | null {
    if (argv === null || envp === null || !/^node(js)?$/.test(basename(executed))) return null;
    if (envp.some((entry) => entry.startsWith('NODE_OPTIONS=') && nodeOptionsRunCode(entry.slice('NODE_OPTIONS='.length)))) return null;
    const named = argv[1];
    if (named === undefined || named.startsWith('-')) return null;
    const cwd = this.cwdOf(pid).path;
    if (!named.startsWith('/') && cwd === null) return null;
    const script = normalizeRunPath(named.startsWith('/') ? named : `${cwd}/${named}`);
    if (script === null || !/^tsc(\.js)?$/.test(basename(script))) return null;
    // tsc's options are case-insensitive.
    const watch = argv.slice(2).some((arg) => /^(-w|--watch)(=|$)/i.test(arg));
    const programArgument = argv.slice(2).some((arg) => PROGRAM_FILE.test(arg));
    this.compilers.push({ node: executed, script, firstRead: null, watch, programArgument, configs: new Set() });
    return this.compilers.length - 1;
  }

  /** A file a compiler process read: its first such, and every config it may hold. */
  private compilerRead(pid: number, named: string): void {
    const index = this.programs.get(pid);
    if (index === undefined || index === null) return;
    // As the facts name it.
    const path = normalizeRunPath(named);
    if (path === null) return;
    const compiler = this.compilers[index]!;
    const atStart = readAtEveryStart(path, compiler.node);
    if (compiler.firstRead === null && !atStart) compiler.firstRead = path;
    if (!PROGRAM_FILE.test(path) && (!atStart || path.endsWith('.json'))) compiler.configs.add(path);
  }

  private opened(pid: number, path: string, flags: Set<string>): void {
    // O_TMPFILE makes an unnamed file in the directory: nothing is read, and no name appears until a linkat, recorded as a create.
    if (flags.has('O_TMPFILE')) return this.record({ op: 'lookup', path, answer: { kind: 'directory' } });
    // O_PATH opens nothing: it resolves the path (open(2)).
    if (flags.has('O_PATH')) return this.record({ op: 'lookup', path, answer: { kind: flags.has('O_DIRECTORY') ? 'directory' : 'present' } });
    const writes = flags.has('O_WRONLY') || flags.has('O_RDWR') || flags.has('O_CREAT') || flags.has('O_TRUNC');
    if (!writes) {
      if (flags.has('O_DIRECTORY')) return this.record({ op: 'lookup', path, answer: { kind: 'directory' } });
      this.compilerRead(pid, path);
      return this.record({ op: 'read', path });
    }
    // O_RDWR without O_TRUNC can read what was there first: an input until proven otherwise.
    if (flags.has('O_RDWR') && !flags.has('O_TRUNC')) {
      this.compilerRead(pid, path);
      this.record({ op: 'read', path });
    }
    // Only O_CREAT|O_EXCL proves the file is new (and its directory's listing changed); a
    // plain O_CREAT may have opened an existing file, and counting its directory as written
    // would class a later listing as the run's own, which is the unsafe direction.
    this.record({ op: flags.has('O_CREAT') && flags.has('O_EXCL') ? 'create' : 'write', path });
  }
}

/** A file by its extension a TypeScript program holds, never a config: `.ts`, `.d.mts`, `.jsx`, ... */
const PROGRAM_FILE = /\.[cm]?[jt]sx?$/i;

/**
 * What Node reads as it starts, before its main script, whatever the script: the dynamic
 * loader's cache and libraries, OpenSSL's configuration, /proc and /sys (cgroup limits), its own
 * binary, and package.json files (which Node parses as JSON, never runs). Anything else read
 * first ran before the script: a `--require` or `--import` in NODE_OPTIONS.
 */
function readAtEveryStart(path: string, node: string): boolean {
  return path === node || path.endsWith('.json') || /^\/(etc|proc|sys)\//.test(path) || path.startsWith('/usr/lib/ssl/') || /\.so(\.\d+)*$/.test(path);
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** An argv array as strace prints it, `["node", "tsc", "-p", "."]`, decoded; null when any element is cut or not a string. */
export function stringArray(arg: string | undefined): string[] | null {
  const text = arg?.trim();
  if (text === undefined || !text.startsWith('[') || !text.endsWith(']')) return null;
  const items: string[] = [];
  let index = 1;
  while (index < text.length - 1) {
    while (text[index] === ' ' || text[index] === ',') index++;
    if (index >= text.length - 1) break;
    if (text[index] !== '"') return null;
    let end = index + 1;
    while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
    // A string strace cut is followed by `...`.
    if (end >= text.length || text.startsWith('...', end + 1)) return null;
    const item = decodeEscapes(text.slice(index + 1, end));
    if (item === null) return null;
    items.push(item);
    index = end + 1;
  }
  return items;
}

/** The facts of a whole log. */
export function parseStraceLog(text: string, options: StraceLogOptions): RunFacts {
  const parser = new StraceLogParser(options);
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const line of lines) parser.line(line);
  return parser.finish();
}

/** `name(args) = value [ERRNO (text)]`, with the arguments split at their top-level commas. */
export function parseCall(text: string): Call | null {
  const head = /^([a-z_][a-z0-9_]*)\(/.exec(text);
  if (!head) return null;
  const args: string[] = [];
  let depth = 0;
  let start = head[0].length;
  let i = start;
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) return null;
      i = end + 1;
      continue;
    }
    // A decoded fd: `3</path>` or `AT_FDCWD</path>`; strace escapes `>` inside it.
    if (c === '<' && i > 0 && /[0-9A-Z_]/.test(text[i - 1]!)) {
      for (i++; i < text.length && text[i] !== '>'; i++) if (text[i] === '\\') i++;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) {
        if (c !== ')') return null;
        break;
      }
      depth--;
    } else if (c === ',' && depth === 0) {
      args.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (i >= text.length) return null;
  const last = text.slice(start, i).trim();
  if (last !== '' || args.length > 0) args.push(last);
  const result = /^\s*=\s*(-?\d+|\?|0x[0-9a-f]+)(?:<(?:[^>\\]|\\.)*>)?(?:\s+(E[A-Z0-9]+)\b.*)?(?:\s+<unavailable>)?\s*$/s.exec(text.slice(i + 1));
  if (!result) return null;
  const value = result[1]!;
  const errno = result[2] ?? (value === '-1' ? 'unknown' : null);
  return { name: head[1]!, args, value, errno };
}

/** The string a quoted argument holds, decoded; null when strace could not print it whole (cut with `...`, or an address). */
export function pathString(arg: string | undefined): string | null {
  if (arg === undefined) return null;
  const text = arg.trim();
  if (!text.startsWith('"') || !text.endsWith('"')) return null;
  return decodeEscapes(text.slice(1, -1));
}

/** A decoded fd argument: `3</path>`, `AT_FDCWD</path>`, or null when it carries no path. */
export function fdPath(arg: string): { fd: string; path: string } | null {
  const match = /^(-?\d+|AT_FDCWD)<(.*)>$/s.exec(arg.trim());
  if (!match) return null;
  const path = decodeEscapes(match[2]!);
  if (path === null || !path.startsWith('/')) return null;
  return { fd: match[1]!, path };
}

const SIMPLE_ESCAPES: Record<string, number> = { n: 10, t: 9, r: 13, v: 11, f: 12, a: 7, b: 8, '\\': 92, '"': 34, "'": 39 };

/**
 * Decodes strace's C escapes to the bytes they stand for, then reads the bytes as UTF-8. A
 * name that is not valid UTF-8 cannot be kept as a string without changing it: null.
 */
/** The unix socket address of a bind or connect line, or null for another family. */
function unixAddress(text: string): { abstract: boolean; name: string } | null {
  const match = /sa_family=AF_UNIX, sun_path=(@?)"((?:[^"\\]|\\.)*)"/.exec(text);
  if (match === null) return null;
  const name = decodeEscapes(match[2]!);
  return name === null ? null : { abstract: match[1] === '@', name };
}

export function decodeEscapes(text: string): string | null {
  // strace escapes every byte outside printable ASCII, so a string without a backslash is already exact.
  if (!text.includes('\\')) return text;
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== '\\') {
      for (const byte of Buffer.from(c, 'utf8')) bytes.push(byte);
      continue;
    }
    const next = text[i + 1];
    if (next === undefined) return null;
    if (next === 'x') {
      const hex = /^[0-9a-fA-F]{1,2}/.exec(text.slice(i + 2));
      if (!hex) return null;
      bytes.push(parseInt(hex[0], 16));
      i += 1 + hex[0].length;
    } else if (/[0-7]/.test(next)) {
      const octal = /^[0-7]{1,3}/.exec(text.slice(i + 1))![0];
      bytes.push(parseInt(octal, 8));
      i += octal.length;
    } else if (next in SIMPLE_ESCAPES) {
      bytes.push(SIMPLE_ESCAPES[next]!);
      i += 1;
    } else return null;
  }
  const buffer = Buffer.from(bytes);
  const decoded = buffer.toString('utf8');
  return Buffer.from(decoded, 'utf8').equals(buffer) ? decoded : null;
}

function flagNames(arg: string | undefined): Set<string> {
  return new Set((arg ?? '').split('|').map((flag) => flag.trim()).filter(Boolean));
}

/** The type in a stat buffer (`st_mode=S_IFREG|0644`, `stx_mode=S_IFDIR|0755`); access(2) says only "there". */
function modeAnswer(args: string): LookupAnswer {
  const mode = /\b(?:st_|stx_)mode=([A-Z_]+|0[0-7]*)/.exec(args)?.[1];
  if (mode === undefined) return { kind: 'present' };
  const type = /^0[0-7]*$/.test(mode) ? parseInt(mode, 8) & 0o170000 : mode;
  if (type === 'S_IFREG' || type === 0o100000) return { kind: 'file' };
  if (type === 'S_IFDIR' || type === 0o040000) return { kind: 'directory' };
  if (type === 'S_IFLNK' || type === 0o120000) return { kind: 'link' };
  return { kind: 'present' };
}
