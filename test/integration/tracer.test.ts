import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PathFacts } from '../../src/core/runFacts.js';
import { runTraced, traceAvailability } from '../../src/exec/trace/tracer.js';
import { REPO } from '../helpers/project.js';

/*
 * The tracer over real processes: strace(1) with --seccomp-bpf around a node script, a shell
 * child, and the real TypeScript compiler. CI installs strace (.ci/run); where it is missing
 * the tests are skipped and say so in their name.
 */

const STRACE = process.platform === 'linux' && spawnSync('strace', ['-V']).status === 0;
const TITLE = STRACE ? 'the tracer over real processes' : 'the tracer over real processes (SKIPPED: strace is not on PATH; apt-get install strace)';

let dir: string;
let logs: string;

beforeAll(() => {
  // Real paths: strace prints the kernel's view of a working directory, with links resolved.
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'vouch-tracer-')));
  logs = join(dir, 'logs');
  mkdirSync(logs);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function traced(argv: string[], cwd: string): Promise<Map<string, PathFacts>> {
  const run = await runTraced({ argv, cwd, logDir: logs });
  if (!run.traced) throw new Error(`not traced: ${run.refusal.code}: ${run.refusal.message}`);
  expect(run.exitCode, run.stderr).toBe(0);
  if (run.facts.kind !== 'facts') throw new Error(`overflow: ${run.facts.reason}: ${run.facts.detail}`);
  return new Map(run.facts.paths.map((fact) => [fact.path, fact]));
}

describe.skipIf(!STRACE)(TITLE, () => {
  it('tracing is available here', () => {
    // The strace it probed, by its path: the one on this process's PATH.
    const which = spawnSync('sh', ['-c', 'command -v strace'], { encoding: 'utf8' }).stdout.trim();
    expect(which).toMatch(/^\/.*strace$/);
    expect(traceAvailability()).toEqual({ available: true, strace: which });
  });

  it('records reads, lookups, listings, links, a chdir, a child process, and the order of writes and reads', async () => {
    const root = join(dir, 'script');
    mkdirSync(join(root, 'listed'), { recursive: true });
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'input.txt'), 'in');
    writeFileSync(join(root, 'listed', 'a'), '');
    writeFileSync(join(root, 'sub', 'rel.txt'), 'rel');
    writeFileSync(join(root, 'sub', 'child.txt'), 'child');
    writeFileSync(join(root, 'state.json'), '{}');
    symlinkSync('input.txt', join(root, 'link'));
    writeFileSync(
      join(root, 'script.cjs'),
      `const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
fs.readFileSync('input.txt');
fs.existsSync('missing.json');
fs.readdirSync('listed');
fs.readlinkSync('link');
fs.readFileSync('state.json');
fs.writeFileSync('state.json', '{"n":1}');
fs.writeFileSync('cache.json', '{}');
fs.readFileSync('cache.json');
process.chdir('sub');
fs.readFileSync('rel.txt');
execFileSync('sh', ['-c', 'cat child.txt > /dev/null']);
`,
    );
    const facts = await traced([process.execPath, 'script.cjs'], root);
    const at = (path: string) => facts.get(join(root, path));
    expect(at('script.cjs')?.read).toBe('before-write');
    expect(at('input.txt')).toMatchObject({ read: 'before-write' });
    expect(at('input.txt')?.written).toBeUndefined();
    expect(at('missing.json')?.lookup).toEqual({ answer: { kind: 'absent' }, order: 'before-write' });
    expect(at('listed')?.listed).toBe('before-write');
    expect(at('link')?.linkTarget).toEqual({ target: 'input.txt', order: 'before-write' });
    // Read before the run wrote it: an input. Written, then read: the run's own cache.
    expect(at('state.json')).toMatchObject({ read: 'before-write', written: true });
    expect(at('cache.json')).toMatchObject({ read: 'after-own-write', written: true });
    // After chdir('sub'), a relative open is resolved against sub/, in the child shell too.
    expect(at('sub')?.lookup?.answer).toEqual({ kind: 'directory' });
    expect(at('sub/rel.txt')?.read).toBe('before-write');
    expect(at('sub/child.txt')?.read).toBe('before-write');
    expect([...facts.values()].some((fact) => fact.executed && /\/(sh|dash|bash)$/.test(fact.path))).toBe(true);
    expect(facts.get('/bin/cat') ?? facts.get('/usr/bin/cat')).toMatchObject({ executed: true });
  });

  it("real tsc --noEmit: the tsconfig, the sources, and module resolution's absent lookups", async () => {
    const root = join(dir, 'tsc');
    mkdirSync(join(root, 'src', 'lib'), { recursive: true });
    writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'esnext', moduleResolution: 'bundler', target: 'es2022', types: [] }, include: ['src'] }));
    writeFileSync(join(root, 'src', 'main.ts'), "import { answer } from './lib';\nexport const doubled: number = answer * 2;\n");
    writeFileSync(join(root, 'src', 'lib', 'index.ts'), 'export const answer = 21;\n');
    const facts = await traced([process.execPath, join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', root], root);
    const at = (path: string) => facts.get(join(root, path));
    expect(at('tsconfig.json')?.read).toBe('before-write');
    expect(at('src/main.ts')?.read).toBe('before-write');
    expect(at('src/lib/index.ts')?.read).toBe('before-write');
    // './lib' is tried as a file before the directory: a lib.ts appearing later changes the program.
    expect(at('src/lib.ts')?.lookup?.answer).toEqual({ kind: 'absent' });
    expect(at('src')?.listed).toBe('before-write');
    // Node loads its main module by its real path (node_modules may be a link).
    expect(facts.get(realpathSync(join(REPO, 'node_modules', 'typescript', 'lib', 'tsc.js')))?.read).toBe('before-write');
    for (const fact of facts.values()) expect(fact.written, fact.path).toBeUndefined();
  });

  it("a failing command is still traced: its exit status is the command's, and its facts are whole", async () => {
    const run = await runTraced({ argv: ['sh', '-c', `cat ${join(dir, 'absent')} 2>/dev/null; exit 3`], cwd: dir, logDir: logs });
    if (!run.traced) throw new Error(run.refusal.message);
    expect(run.exitCode).toBe(3);
    expect(run.facts.kind === 'facts' && run.facts.paths.find((fact) => fact.path === join(dir, 'absent'))?.lookup?.answer).toEqual({ kind: 'absent' });
  });

  it('a command strace could not start is trace-failed, not a run that read nothing', async () => {
    const run = await runTraced({ argv: [join(dir, 'no-such-program')], cwd: dir, logDir: logs });
    expect(run).toMatchObject({ traced: false, refusal: { code: 'trace-failed' } });
  });

  it('under another tracer, ptrace is refused and said so: never an empty set of facts', () => {
    const script = `const m = await import(${JSON.stringify(join(REPO, 'dist', 'exec', 'trace', 'tracer.js'))});
const run = await m.runTraced({ argv: ['true'], cwd: ${JSON.stringify(dir)}, logDir: ${JSON.stringify(logs)} });
console.log(JSON.stringify({ availability: m.traceAvailability(), run }));`;
    const outer = spawnSync('strace', ['-f', '-qq', '-o', '/dev/null', '--', process.execPath, '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(outer.status, outer.stderr).toBe(0);
    const { availability, run } = JSON.parse(outer.stdout);
    expect(availability).toMatchObject({ available: false, code: 'ptrace-refused' });
    expect(availability.message).toMatch(/already traced \(TracerPid \d+\)/);
    expect(run).toMatchObject({ traced: false, refusal: { code: 'ptrace-refused' } });
    expect(run.facts).toBeUndefined();
  });

  it.skipIf(spawnSync('cc', ['--version']).status !== 0 || process.arch !== 'x64')('a traced program gets no io_uring (ENOSYS), so its file operations stay system calls the trace sees', async () => {
    const root = join(dir, 'uring');
    mkdirSync(root);
    // io_uring_setup is system call 425 on x86-64 (arch/x86/entry/syscalls/syscall_64.tbl).
    writeFileSync(join(root, 'uring.c'), '#include <stdio.h>\n#include <unistd.h>\n#include <sys/syscall.h>\nint main(void) { char p[120] = {0}; long r = syscall(425, 4, p); printf("%ld\\n", r); return 0; }\n');
    expect(spawnSync('cc', ['-o', join(root, 'uring'), join(root, 'uring.c')]).status).toBe(0);
    expect(spawnSync(join(root, 'uring'), { encoding: 'utf8' }).stdout.trim()).not.toBe('-1');
    const run = await runTraced({ argv: [join(root, 'uring')], cwd: root, logDir: logs });
    if (!run.traced) throw new Error(run.refusal.message);
    expect(run.stdout.trim()).toBe('-1');
    expect(run.facts.kind).toBe('facts');
  });

  it('a run that talks to a process outside its trace over a unix socket has facts no one can trust; its own server is its own', async () => {
    const root = join(dir, 'socket');
    mkdirSync(root);
    const outside = join(root, 'daemon.sock');
    const server = createServer((client) => client.end('hi')).listen(outside);
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      writeFileSync(join(root, 'own.cjs'), `const net = require('node:net');
const s = net.createServer((c) => c.end('own')).listen('own.sock', () => { net.connect('own.sock').on('data', () => s.close()); });`);
      const own = await runTraced({ argv: [process.execPath, 'own.cjs'], cwd: root, logDir: logs });
      if (!own.traced) throw new Error(own.refusal.message);
      expect(own.facts.kind).toBe('facts');
      writeFileSync(join(root, 'client.cjs'), `require('node:net').connect(${JSON.stringify(outside)}).on('data', (d) => process.stdout.write(d));`);
      const run = await runTraced({ argv: [process.execPath, 'client.cjs'], cwd: root, logDir: logs });
      if (!run.traced) throw new Error(run.refusal.message);
      expect(run.stdout).toBe('hi');
      expect(run.facts).toMatchObject({ kind: 'overflow', reason: 'outside-work', detail: expect.stringContaining(outside) });
    } finally {
      server.close();
    }
  });
});
