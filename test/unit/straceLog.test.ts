import { describe, expect, it } from 'vitest';
import type { PathFacts, RunFacts } from '../../src/core/runFacts.js';
import { decodeEscapes, parseCall, parseStraceLog, stringArray } from '../../src/exec/trace/straceLog.js';

/*
 * The strace log parser over minimal synthetic lines in the shape strace 6 writes with
 * `-f -qq -y -s 4096 -e signal=none` (recorded on Linux, paths replaced).
 */

const CWD = '/w';

function facts(log: string): Map<string, PathFacts> {
  const result = parseStraceLog(log, { cwd: CWD });
  if (result.kind !== 'facts') throw new Error(`${result.reason}: ${result.detail}`);
  return new Map(result.paths.map((fact) => [fact.path, fact]));
}

function overflow(log: string): RunFacts {
  return parseStraceLog(log, { cwd: CWD });
}

const START = '100 execve("/usr/bin/node", ["node", "t.js"], 0x7ffc6b5cae50 /* 35 vars */) = 0\n';

describe('strace log: opens', () => {
  it('O_RDONLY is a read, O_WRONLY|O_CREAT|O_TRUNC a write, O_RDWR a read then a write, and a failed open a lookup', () => {
    const map = facts(
      START +
        '100 openat(AT_FDCWD</w>, "in.json", O_RDONLY|O_CLOEXEC) = 18</w/in.json>\n' +
        '100 openat(AT_FDCWD</w>, "/w/out.txt", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 19</w/out.txt>\n' +
        '100 openat(AT_FDCWD</w>, "db", O_RDWR|O_CREAT|O_CLOEXEC, 0644) = 20</w/db>\n' +
        '100 openat(AT_FDCWD</w>, "/w/package.json", O_RDONLY|O_CLOEXEC) = -1 ENOENT (No such file or directory)\n' +
        '100 openat(AT_FDCWD</w>, "/w/secret", O_RDONLY) = -1 EACCES (Permission denied)\n' +
        '100 open("/w/old", O_RDONLY) = 3</w/old>\n' +
        '100 openat2(AT_FDCWD</w>, "two", {flags=O_WRONLY|O_CREAT|O_EXCL, mode=0600, resolve=0}, 24) = 4</w/two>\n',
    );
    expect(map.get('/w/in.json')).toEqual({ path: '/w/in.json', read: 'before-write' });
    expect(map.get('/w/out.txt')).toEqual({ path: '/w/out.txt', written: true });
    expect(map.get('/w/db')).toEqual({ path: '/w/db', read: 'before-write', written: true });
    expect(map.get('/w/package.json')!.lookup!.answer).toEqual({ kind: 'absent' });
    expect(map.get('/w/secret')!.lookup!.answer).toEqual({ kind: 'error', errno: 'EACCES' });
    expect(map.get('/w/old')!.read).toBe('before-write');
    // O_CREAT|O_EXCL proves the file is new: its directory's listing changed.
    expect(map.get('/w/two')).toEqual({ path: '/w/two', written: true });
    expect(map.get('/w')!.written).toBe(true);
    // A plain O_CREAT may have opened an existing file: its directory is not counted as written.
    expect(facts(START + '100 openat(AT_FDCWD</w>, "/w/d/x", O_WRONLY|O_CREAT, 0666) = 3</w/d/x>\n').get('/w/d')).toBeUndefined();
  });

  it('a write then a read is the run cache; a read then a write is an input', () => {
    const map = facts(
      START +
        '100 openat(AT_FDCWD</w>, "cache", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</w/cache>\n' +
        '100 openat(AT_FDCWD</w>, "cache", O_RDONLY) = 3</w/cache>\n' +
        '100 openat(AT_FDCWD</w>, "state", O_RDONLY) = 3</w/state>\n' +
        '100 openat(AT_FDCWD</w>, "state", O_WRONLY|O_TRUNC) = 3</w/state>\n',
    );
    expect(map.get('/w/cache')!.read).toBe('after-own-write');
    expect(map.get('/w/state')!.read).toBe('before-write');
  });

  it('O_DIRECTORY alone and O_PATH are lookups, not reads', () => {
    const map = facts(START + '100 openat(AT_FDCWD</w>, "src", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = 3</w/src>\n' + '100 openat(AT_FDCWD</w>, "f", O_RDONLY|O_PATH) = 3</w/f>\n');
    expect(map.get('/w/src')).toEqual({ path: '/w/src', lookup: { answer: { kind: 'directory' }, order: 'before-write' } });
    expect(map.get('/w/f')).toEqual({ path: '/w/f', lookup: { answer: { kind: 'present' }, order: 'before-write' } });
  });
});

describe('strace log: lookups, links, listings', () => {
  it('stat answers by type, access by presence, and an empty path (fstat of an fd) is skipped', () => {
    const map = facts(
      START +
        '100 statx(AT_FDCWD</w>, "/w/t.js", AT_STATX_SYNC_AS_STAT, STATX_ALL, {stx_mask=STATX_ALL|STATX_MNT_ID, stx_attributes=0, stx_mode=S_IFREG|0644, stx_size=371, ...}) = 0\n' +
        '100 statx(AT_FDCWD</w>, "/w", AT_STATX_SYNC_AS_STAT|AT_SYMLINK_NOFOLLOW, STATX_ALL, {stx_mask=STATX_ALL|STATX_MNT_ID, stx_attributes=0, stx_mode=S_IFDIR|0755, stx_size=4096, ...}) = 0\n' +
        '100 newfstatat(AT_FDCWD</w>, "lnk", {st_mode=S_IFLNK|0777, st_size=13, ...}, AT_SYMLINK_NOFOLLOW) = 0\n' +
        '100 newfstatat(3</w/src>, "", {st_mode=S_IFDIR|0755, st_size=4096, ...}, AT_EMPTY_PATH) = 0\n' +
        '100 access("/etc/ld.so.preload", R_OK) = -1 ENOENT (No such file or directory)\n' +
        '100 faccessat2(AT_FDCWD</w>, "bin/tool", X_OK, AT_EACCESS) = 0\n' +
        '100 stat("/w/missing/x", 0x7ffd) = -1 ENOTDIR (Not a directory)\n',
    );
    expect(map.get('/w/t.js')!.lookup!.answer).toEqual({ kind: 'file' });
    expect(map.get('/w')!.lookup!.answer).toEqual({ kind: 'directory' });
    expect(map.get('/w/lnk')!.lookup!.answer).toEqual({ kind: 'link' });
    expect(map.get('/w/src')).toBeUndefined();
    expect(map.get('/etc/ld.so.preload')!.lookup!.answer).toEqual({ kind: 'absent' });
    expect(map.get('/w/bin/tool')!.lookup!.answer).toEqual({ kind: 'present' });
    expect(map.get('/w/missing/x')!.lookup!.answer).toEqual({ kind: 'absent' });
  });

  it('readlink records the target; EINVAL means "there, and not a link"', () => {
    const map = facts(START + '100 readlink("/w/lnk", "/etc/hostname", 4096) = 13\n' + '100 readlinkat(AT_FDCWD</w>, "plain", 0x7ffd, 4096) = -1 EINVAL (Invalid argument)\n');
    expect(map.get('/w/lnk')).toEqual({ path: '/w/lnk', linkTarget: { target: '/etc/hostname', order: 'before-write' }, lookup: { answer: { kind: 'link', target: '/etc/hostname' }, order: 'before-write' } });
    expect(map.get('/w/plain')!.lookup!.answer).toEqual({ kind: 'present' });
  });

  it('getdents64 lists the directory its fd names', () => {
    const map = facts(START + '100 getdents64(18</w/src>, 0x36789c80 /* 5 entries */, 32768) = 120\n' + '100 getdents64(18</w/src>, 0x36789c80 /* 0 entries */, 32768) = 0\n');
    expect(map.get('/w/src')).toEqual({ path: '/w/src', listed: 'before-write', listedByOther: true });
  });

  it('unlink, rename, mkdir and symlink write paths and their directories', () => {
    const map = facts(
      START +
        '100 mkdir("/w/out", 0777) = 0\n' +
        '100 mkdir("/w/src", 0777) = -1 EEXIST (File exists)\n' +
        '100 renameat2(AT_FDCWD</w>, "out/tmp", AT_FDCWD</w>, "out/final", RENAME_NOREPLACE) = 0\n' +
        '100 unlinkat(3</w/out>, "gone", 0) = 0\n' +
        '100 symlinkat("../x", AT_FDCWD</w>, "out/l") = 0\n',
    );
    expect(map.get('/w/out/tmp')!.written).toBe(true);
    expect(map.get('/w/out/final')!.written).toBe(true);
    expect(map.get('/w/out/gone')!.written).toBe(true);
    expect(map.get('/w/out/l')!.written).toBe(true);
    expect(map.get('/w/out')!.written).toBe(true);
    expect(map.get('/w/src')!.lookup!.answer).toEqual({ kind: 'present' });
  });
});

describe('strace log: processes and working directories', () => {
  it('relative paths follow chdir, fchdir, and the directory each child inherits', () => {
    const map = facts(
      START +
        '100 chdir("sub") = 0\n' +
        '100 open("a", O_RDONLY) = 3</w/sub/a>\n' +
        '100 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 101\n' +
        '100 fchdir(5</other>) = 0\n' +
        '101 stat("b", {st_mode=S_IFREG|0644, st_size=1, ...}) = 0\n' +
        '100 open("c", O_RDONLY) = 3</other/c>\n',
    );
    expect(map.get('/w/sub')!.lookup!.answer).toEqual({ kind: 'directory' });
    expect(map.get('/w/sub/a')!.read).toBe('before-write');
    // The child forked before the parent's fchdir: it keeps /w/sub.
    expect(map.get('/w/sub/b')!.lookup!.answer).toEqual({ kind: 'file' });
    expect(map.get('/other/c')!.read).toBe('before-write');
  });

  it('a thread (CLONE_FS) shares its working directory with its process', () => {
    const map = facts(
      START +
        '100 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD, child_tid=0x7f, exit_signal=0} => {parent_tid=[102]}, 88) = 102\n' +
        '100 chdir("/etc") = 0\n' +
        '102 open("passwd", O_RDONLY) = 3</etc/passwd>\n',
    );
    expect(map.get('/etc/passwd')!.read).toBe('before-write');
  });

  it('joins <unfinished ...> and <... resumed> lines, and a child seen before its vfork returns inherits from it', () => {
    const map = facts(
      START +
        '100 chdir("/d") = 0\n' +
        '100 vfork( <unfinished ...>\n' +
        '103 execve("tool", ["tool"], 0x5650 /* 35 vars */ <unfinished ...>\n' +
        '100 <... vfork resumed>) = 103\n' +
        '100 wait4(-1,  <unfinished ...>\n' +
        '103 <... execve resumed>) = 0\n' +
        '103 openat(AT_FDCWD</d>, "/etc/os-release", O_RDONLY) = 3</usr/lib/os-release>\n' +
        '103 exit_group(0) = ?\n' +
        '100 <... wait4 resumed>[{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 103\n',
    );
    expect(map.get('/d/tool')).toEqual({ path: '/d/tool', read: 'before-write', executed: true });
    expect(map.get('/etc/os-release')!.read).toBe('before-write');
  });

  it('getcwd tells the working directory; an exited pid reused by a new child inherits afresh', () => {
    const map = facts(
      START +
        '100 getcwd("/g", 4096) = 3\n' +
        '100 open("a", O_RDONLY) = 3</g/a>\n' +
        '100 clone(child_stack=NULL, flags=SIGCHLD) = 104\n' +
        '104 chdir("/elsewhere") = 0\n' +
        '104 exit_group(0) = ?\n' +
        '100 vfork( <unfinished ...>\n' +
        '104 open("b", O_RDONLY) = 3</g/b>\n' +
        '100 <... vfork resumed>) = 104\n',
    );
    expect(map.get('/g/a')!.read).toBe('before-write');
    expect(map.get('/g/b')!.read).toBe('before-write');
    expect(map.has('/elsewhere/b')).toBe(false);
  });

  it('O_TMPFILE and its linkat create the linked name and read nothing', () => {
    const map = facts(START + '100 openat(AT_FDCWD</w>, "/w/out", O_RDWR|O_EXCL|O_TMPFILE, 0600) = 3</w/out/#1 (deleted)>\n' + '100 linkat(3</w/out/#1 (deleted)>, "", AT_FDCWD</w>, "out/final", AT_EMPTY_PATH) = 0\n');
    expect(map.get('/w/out')).toEqual({ path: '/w/out', lookup: { answer: { kind: 'directory' }, order: 'before-write' }, written: true });
    expect(map.get('/w/out/final')).toEqual({ path: '/w/out/final', written: true });
    expect(map.size).toBe(3);
  });

  it('a failed execve (a PATH search) is an absent lookup', () => {
    const map = facts(START + '100 execve("/a/bin/tsc", ["tsc"], 0x1 /* 3 vars */) = -1 ENOENT (No such file or directory)\n');
    expect(map.get('/a/bin/tsc')!.lookup!.answer).toEqual({ kind: 'absent' });
  });

  it('AT_FDCWD carries the working directory strace saw, which wins over what the parser tracked', () => {
    const map = facts(START + '100 openat(AT_FDCWD</real>, "x", O_RDONLY) = 3</real/x>\n' + '100 stat("y", 0x1) = -1 ENOENT (No such file or directory)\n');
    expect(map.has('/real/x')).toBe(true);
    expect(map.has('/real/y')).toBe(true);
  });
});

describe('strace log: what it cannot read makes the facts unusable', () => {
  it('a path strace cut (`"..."...`) or could not read (an address) is an unknown path, never a shorter one', () => {
    expect(overflow(START + `100 openat(AT_FDCWD</w>, "${'a'.repeat(20)}"..., O_RDONLY) = 3</w/x>\n`)).toMatchObject({ kind: 'overflow', reason: 'unknown-path' });
    expect(overflow(START + '100 openat(AT_FDCWD</w>, 0x7ffd1234, O_RDONLY) = -1 EFAULT (Bad address)\n')).toMatchObject({ kind: 'overflow', reason: 'unknown-path' });
    expect(overflow(START + '100 readlink("/w/l", "/very/long"..., 10) = 10\n')).toMatchObject({ kind: 'overflow', reason: 'unknown-path' });
  });

  it('a relative path in a process whose directory is unknown is an unknown path', () => {
    expect(overflow(START + '100 clone(child_stack=NULL, flags=SIGCHLD) = 200\n100 chdir("/x") = 0\n300 open("a", O_RDONLY) = 3</x/a>\n')).toMatchObject({ kind: 'overflow', reason: 'unknown-path' });
  });

  it('a line it cannot read, a resumed call it never saw start, or a call it has no rule for, is unparsed', () => {
    expect(overflow(START + 'garbage\n')).toMatchObject({ kind: 'overflow', reason: 'unparsed' });
    expect(overflow(START + '100 <... openat resumed>) = 3\n')).toMatchObject({ kind: 'overflow', reason: 'unparsed' });
    expect(overflow(START + '100 open_tree(AT_FDCWD</w>, "/w", 0) = 3\n')).toMatchObject({ kind: 'overflow', reason: 'unparsed', detail: expect.stringContaining('open_tree') });
  });

  it('signal and exit lines, interrupted calls and the end of a process are not accesses', () => {
    const map = facts(START + '100 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED} ---\n100 +++ exited with 0 +++\n100 openat(AT_FDCWD</w>, "slow", O_RDONLY) = ? ERESTARTSYS (To be restarted if SA_RESTART is set)\n100 exit_group(0) = ?\n');
    expect([...map.keys()]).toEqual(['/usr/bin/node']);
  });
});

describe('strace strings', () => {
  it('decodes octal, hex and C escapes to the exact bytes, as UTF-8', () => {
    expect(decodeEscapes('c\\1\\303\\251.txt')).toBe('c\u0001é.txt');
    expect(decodeEscapes('\\xc3\\xa9')).toBe('é');
    expect(decodeEscapes('a\\76b,c\\"d\\ne\\\\')).toBe('a>b,c"d\ne\\');
    // Not UTF-8: it cannot be a string without changing the name.
    expect(decodeEscapes('\\377')).toBeNull();
  });

  it('parses a name with quotes, commas, angle brackets and newlines in it', () => {
    const map = facts(START + '100 openat(AT_FDCWD</w>, "a>b,c\\"d\\ne", O_RDONLY) = 3</w/a\\76b,c\\"d\\ne>\n');
    expect([...map.keys()]).toContain('/w/a>b,c"d\ne');
  });

  it('splits arguments at top-level commas only', () => {
    expect(parseCall('wait4(-1, [{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 26925')).toEqual({ name: 'wait4', args: ['-1', '[{WIFEXITED(s) && WEXITSTATUS(s) == 0}]', '0', 'NULL'], value: '26925', errno: null });
    expect(parseCall('vfork() = 7')).toEqual({ name: 'vfork', args: [], value: '7', errno: null });
    expect(parseCall('openat(AT_FDCWD</a,b>, "x", O_RDONLY) = -1 ENOENT (No such file or directory)')).toEqual({ name: 'openat', args: ['AT_FDCWD</a,b>', '"x"', 'O_RDONLY'], value: '-1', errno: 'ENOENT' });
  });
});

describe('strace log: io_uring', () => {
  it('an injected io_uring_setup failure is nothing; a ring that was set up makes the facts unusable', () => {
    expect([...facts(START + '100 io_uring_setup(4, {flags=0, sq_thread_cpu=0, sq_thread_idle=0}) = -1 ENOSYS (Function not implemented) (INJECTED)\n').keys()]).toEqual(['/usr/bin/node']);
    expect(overflow(START + '100 io_uring_setup(4, {flags=0, sq_thread_cpu=0, sq_thread_idle=0, sq_entries=4, cq_entries=8}) = 3\n')).toMatchObject({ kind: 'overflow', reason: 'outside-work', detail: expect.stringMatching(/io_uring/) });
  });
});

describe('strace log: unix sockets', () => {
  const CONNECT = (path: string, result = '0') => `100 connect(19<socket:[4308687]>, {sa_family=AF_UNIX, sun_path=${path}}, 110) = ${result}\n`;
  const BIND = (path: string) => `100 bind(20<socket:[4308688]>, {sa_family=AF_UNIX, sun_path=${path}}, 110) = 0\n`;

  it('a connect to a socket the run did not bind is work done outside the trace: the facts are unusable', () => {
    expect(overflow(START + CONNECT('"/tmp/turbod/x/turbod.sock"'))).toMatchObject({ kind: 'overflow', reason: 'outside-work', detail: expect.stringContaining('/tmp/turbod/x/turbod.sock') });
    expect(overflow(START + CONNECT('@"nx-daemon"'))).toMatchObject({ kind: 'overflow', reason: 'outside-work', detail: expect.stringContaining('@nx-daemon') });
    expect(overflow(START + CONNECT('"/run/x.sock"', '-1 EINPROGRESS (Operation now in progress)'))).toMatchObject({ kind: 'overflow', reason: 'outside-work' });
  });

  it("a connect that found no server is nothing, and one to the run's own server is its own; a bound path is a file the run created", () => {
    expect(facts(START + CONNECT('"/var/run/nscd/socket"', '-1 ENOENT (No such file or directory)')).size).toBe(1);
    const own = facts(START + BIND('"own.sock"') + CONNECT('"/w/own.sock"') + BIND('@"abstract"') + CONNECT('@"abstract"'));
    expect(own.get('/w/own.sock')).toMatchObject({ written: true });
  });

  it('another family (the network) is not a file', () => {
    expect(facts(START + '100 connect(19<socket:[1]>, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("1.2.3.4")}, 16) = 0\n').size).toBe(1);
  });
});

describe('strace log: which listings a compiler made', () => {
  const TSC = '200 execve("/usr/bin/node", ["node", "node_modules/.bin/tsc", "--noEmit", "-p", "tsconfig.json"], ["PATH=/usr/bin", "HOME=/h"]) = 0\n';
  const STARTUP =
    '200 openat(AT_FDCWD</w>, "/etc/ld.so.cache", O_RDONLY|O_CLOEXEC) = 3</etc/ld.so.cache>\n' +
    '200 openat(AT_FDCWD</w>, "/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY|O_CLOEXEC) = 3</usr/lib/x86_64-linux-gnu/libc.so.6>\n' +
    '200 openat(AT_FDCWD</w>, "/etc/ssl/openssl.cnf", O_RDONLY) = 3</etc/ssl/openssl.cnf>\n' +
    '200 openat(AT_FDCWD</w>, "/proc/self/maps", O_RDONLY) = 18</proc/200/maps>\n' +
    '200 openat(AT_FDCWD</w>, "/usr/bin/node", O_RDONLY) = 18</usr/bin/node>\n' +
    '200 openat(AT_FDCWD</w>, "/w/node_modules/typescript/package.json", O_RDONLY|O_CLOEXEC) = 18</w/node_modules/typescript/package.json>\n';
  const SCRIPT = '200 openat(AT_FDCWD</w>, "/w/node_modules/typescript/bin/tsc", O_RDONLY|O_CLOEXEC) = 18</w/node_modules/typescript/bin/tsc>\n';
  const WORK =
    '200 openat(AT_FDCWD</w>, "/w/node_modules/typescript/lib/_tsc.js", O_RDONLY|O_CLOEXEC) = 18</w/node_modules/typescript/lib/_tsc.js>\n' +
    '200 openat(AT_FDCWD</w>, "tsconfig.json", O_RDONLY|O_CLOEXEC) = 18</w/tsconfig.json>\n' +
    '200 getdents64(18</w>, 0x3324 /* 5 entries */, 32768) = 144\n' +
    '200 openat(AT_FDCWD</w>, "/w/src/a.ts", O_RDONLY|O_CLOEXEC) = 18</w/src/a.ts>\n';

  function parsed(log: string) {
    const result = parseStraceLog(log, { cwd: CWD });
    if (result.kind !== 'facts') throw new Error(`${result.reason}: ${result.detail}`);
    return { compilers: result.compilers, listed: new Map(result.paths.filter((fact) => fact.listed).map((fact) => [fact.path, fact])) };
  }

  it("node running a script named tsc is a compiler: its first read past Node's start is the script, its configs are its non-program reads", () => {
    const { compilers, listed } = parsed(TSC + STARTUP + SCRIPT + WORK);
    expect(compilers).toEqual([
      {
        node: '/usr/bin/node',
        script: '/w/node_modules/.bin/tsc',
        firstRead: '/w/node_modules/typescript/bin/tsc',
        watch: false,
        programArgument: false,
        configs: ['/w/node_modules/typescript/package.json', '/w/node_modules/typescript/bin/tsc', '/w/tsconfig.json'],
      },
    ]);
    expect(listed.get('/w')).toMatchObject({ listedBy: [0] });
    expect(listed.get('/w')!.listedByOther).toBeUndefined();
  });

  it("NODE_OPTIONS that loads code (even from a data: URL, which reads no file), or an environment strace did not print whole, makes no compiler", () => {
    const withEnv = (env: string) => `200 execve("/usr/bin/node", ["node", "node_modules/.bin/tsc", "--noEmit"], ${env}) = 0\n`;
    for (const env of ['["NODE_OPTIONS=--import=data:text/javascript,void 0"]', '["NODE_OPTIONS=-r ./x.cjs"]', '["A=1", "NODE_OPTIONS=--max-old-space-size=100 --require=/x.cjs"]', '0x7ffc /* 35 vars */', '["A=1", ...]']) {
      expect(parsed(withEnv(env) + STARTUP + SCRIPT + WORK).compilers, env).toEqual([]);
    }
    expect(parsed(withEnv('["NODE_OPTIONS=--max-old-space-size=100"]') + STARTUP + SCRIPT + WORK).compilers).toHaveLength(1);
  });

  it('a file read before the script (a --require in NODE_OPTIONS) is its first read', () => {
    const preload = '200 openat(AT_FDCWD</w>, "/w/pre.cjs", O_RDONLY|O_CLOEXEC) = 18</w/pre.cjs>\n';
    expect(parsed(TSC + STARTUP + preload + SCRIPT + WORK).compilers[0]!.firstRead).toBe('/w/pre.cjs');
  });

  it('node with options of its own, another script, or another binary is no compiler; its listings are "other"', () => {
    for (const start of [
      '200 execve("/usr/bin/node", ["node", "--require", "./x.cjs", "node_modules/.bin/tsc"], ["PATH=/usr/bin", "HOME=/h"]) = 0\n',
      '200 execve("/usr/bin/node", ["node", "node_modules/.bin/tsc-alias"], ["PATH=/usr/bin", "HOME=/h"]) = 0\n',
      '200 execve("/w/node_modules/.bin/tsc", ["tsc", "-p", "."], ["PATH=/usr/bin", "HOME=/h"]) = 0\n',
      '200 execve("/usr/bin/bun", ["bun", "node_modules/.bin/tsc"], ["PATH=/usr/bin", "HOME=/h"]) = 0\n',
    ]) {
      const { compilers, listed } = parsed(start + WORK);
      expect(compilers, start).toEqual([]);
      expect(listed.get('/w'), start).toMatchObject({ listedByOther: true });
      expect(listed.get('/w')!.listedBy, start).toBeUndefined();
    }
  });

  it('watch mode is marked, whatever the case of the flag', () => {
    for (const flag of ['-w', '--watch', '--Watch', '-W']) {
      const start = `200 execve("/usr/bin/node", ["node", "/w/node_modules/typescript/lib/tsc.js", "${flag}"], ["PATH=/usr/bin", "HOME=/h"]) = 0\n`;
      expect(parsed(start + WORK).compilers[0]!.watch, flag).toBe(true);
    }
  });

  it('a file with a program extension on its command line is marked: tsc reads `-p tsconfig.app.ts` as a config', () => {
    for (const [args, marked] of [
      ['"-p", "tsconfig.app.ts"', true],
      ['"--project", "configs/app.MTS"', true],
      ['"--noEmit", "src/a.ts"', true],
      ['"-p", "tsconfig.json"', false],
      ['"-p", "."', false],
    ] as const) {
      const start = `200 execve("/usr/bin/node", ["node", "/w/node_modules/typescript/bin/tsc", ${args}], ["PATH=/usr/bin", "HOME=/h"]) = 0\n`;
      expect(parsed(start + WORK).compilers[0]!.programArgument, args).toBe(marked);
    }
  });

  it("threads and forks run their parent's program until they exec; a child that exec'd before its fork returned keeps what it exec'd", () => {
    const log =
      TSC +
      STARTUP +
      SCRIPT +
      '200 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD, child_tid=0x7f, exit_signal=0} => {parent_tid=[201]}, 88) = 201\n' +
      '201 getdents64(19</w/src>, 0x3324 /* 3 entries */, 32768) = 72\n' +
      '200 vfork( <unfinished ...>\n' +
      '202 execve("/bin/sh", ["sh", "-c", "ls"], 0x5650 /* 35 vars */) = 0\n' +
      '200 <... vfork resumed>) = 202\n' +
      '202 getdents64(3</w/lib>, 0x3324 /* 3 entries */, 32768) = 72\n';
    const { listed } = parsed(log);
    expect(listed.get('/w/src')).toMatchObject({ listedBy: [0] });
    expect(listed.get('/w/src')!.listedByOther).toBeUndefined();
    expect(listed.get('/w/lib')).toMatchObject({ listedByOther: true });
  });

  it('a directory listed by a compiler and by any other program is "other" too', () => {
    const other = '300 execve("/usr/bin/node", ["node", "lint.js"], ["PATH=/usr/bin", "HOME=/h"]) = 0\n300 getdents64(3</w>, 0x3324 /* 5 entries */, 32768) = 144\n';
    const { listed } = parsed(TSC + STARTUP + SCRIPT + WORK + other);
    expect(listed.get('/w')).toMatchObject({ listedBy: [0], listedByOther: true });
  });

  it('an exited pid reused by a new process does not inherit the compiler', () => {
    const log = TSC + STARTUP + SCRIPT + '200 exit_group(0) = ?\n' + '200 getdents64(3</w/later>, 0x3324 /* 3 entries */, 32768) = 72\n';
    expect(parsed(log).listed.get('/w/later')).toMatchObject({ listedByOther: true });
  });

  it('reads argv arrays, and refuses one strace cut', () => {
    expect(stringArray('["node", "a b", "\\303\\251"]')).toEqual(['node', 'a b', 'é']);
    expect(stringArray('[]')).toEqual([]);
    expect(stringArray('["node", "abc"...]')).toBeNull();
    expect(stringArray('["node", ...]')).toBeNull();
    expect(stringArray('0x7ffc')).toBeNull();
  });
});
