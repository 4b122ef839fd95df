/**
 * Run facts: what a traced run touched, per path, and in which order it mattered.
 *
 * A tracer turns each file system call of the run's process tree into one access (read,
 * write, create, remove, lookup, readlink, list, exec), in the order the calls completed.
 * This module folds them into one fact per absolute path. It is pure: no file system, no
 * processes; the order is the order of `record` calls.
 *
 * The order kept is the one a fingerprint needs: a file read before the run first wrote it
 * is an input like any other ('before-write'); a file the run wrote and then read is the
 * run's own cache ('after-own-write'). A path read both ways keeps 'before-write': what the
 * run found there before it wrote decided its result. Lookups and listings carry the same
 * class, and a directory counts as written when the run created, removed or renamed an
 * entry in it, since that is what changes its listing.
 *
 * Past a cap on the number of paths the result is an overflow, never a partial set
 * presented as complete: a fingerprint of half a run would answer CURRENT on changes to
 * the half it forgot.
 */

/** The answer a lookup (stat, access, a failed open, readlink) got. */
export type LookupAnswer =
  | { kind: 'absent' }
  | { kind: 'file' }
  | { kind: 'directory' }
  | { kind: 'link'; target?: string }
  /** It exists, but the call did not say what it is (access(2), an O_PATH open, a device). */
  | { kind: 'present' }
  /** The lookup failed with an error other than "not there" (EACCES, ELOOP, ...). */
  | { kind: 'error'; errno: string };

/** Whether an access came before the run first wrote the path, or after. */
export type OrderClass = 'before-write' | 'after-own-write';

export type Access =
  | { op: 'read'; path: string }
  | { op: 'write'; path: string }
  /** A new entry (create, mkdir, link, symlink, the new name of a rename): writes the path and its parent directory's listing. */
  | { op: 'create'; path: string }
  /** An entry gone (unlink, rmdir, the old name of a rename): writes the path and its parent directory's listing. */
  | { op: 'remove'; path: string }
  | { op: 'lookup'; path: string; answer: LookupAnswer }
  | { op: 'readlink'; path: string; target: string }
  /** `by`: the compiler process that listed it (a `CompilerProcess`'s index), absent for any other program. */
  | { op: 'list'; path: string; by?: number }
  | { op: 'exec'; path: string };

/**
 * A process that started as TypeScript's compiler, `node SCRIPT ...` with a script named `tsc`,
 * as the trace saw it: its listings may be bound to the names tsc can act on
 * (core/listingNames.ts), once fs/listingFilter.ts has checked that it was tsc indeed.
 */
export interface CompilerProcess {
  /** The Node binary it executed. */
  node: string;
  /** The script node was given, absolute, as named (a link in node_modules/.bin, often). */
  script: string;
  /** The first file it read that Node reads at every start anyway (JSON, the system's files, itself) does not explain: the script, unless something ran first. */
  firstRead: string | null;
  /** Started with `--watch` (or `-w`): watch mode answers lookups from its listings. */
  watch: boolean;
  /**
   * Its command line names a file with a program extension: a source, or a config named like one
   * (`-p tsconfig.app.ts`), which tsc reads as JSON like any config, but which the configs below
   * cannot tell from a source.
   */
  programArgument: boolean;
  /** The files it read that are not program files by extension: its configs among them. */
  configs: string[];
}

export interface PathFacts {
  path: string;
  /** Opened for reading (or executed): the first read's class. */
  read?: OrderClass;
  /** The run also read it after its own write (a cache it rewrote and read again). */
  readAgainAfterWrite?: true;
  /** Opened for writing, created, truncated, renamed or removed by the run. */
  written?: true;
  /** The first lookup's answer and class; later answers are the run's own doing or the same. */
  lookup?: { answer: LookupAnswer; order: OrderClass };
  /** readlink's answer, the first time it was asked. */
  linkTarget?: { target: string; order: OrderClass };
  /** Listed (getdents64): the first listing's class. */
  listed?: OrderClass;
  /** The compiler processes that listed it, when only such did (`CompilerProcess` indexes). */
  listedBy?: number[];
  /** A process other than a compiler listed it. */
  listedByOther?: true;
  /** Executed (a successful execve). */
  executed?: true;
}

/** Why a run's facts are not a complete set. */
export type OverflowReason =
  /** More distinct paths than the cap. */
  | 'cap'
  /** A path the tracer could not read whole (truncated, unreadable, or relative to an unknown directory). */
  | 'unknown-path'
  /** A line of the trace the parser could not understand. */
  | 'unparsed'
  /**
   * The run asked a process outside its trace (a daemon it connected to), or a kernel ring, to
   * do work whose reads no trace of the run sees.
   */
  | 'outside-work';

export type RunFacts =
  | { kind: 'facts'; paths: PathFacts[]; compilers: CompilerProcess[] }
  | { kind: 'overflow'; reason: OverflowReason; detail: string };

/** The cap when the caller gives none: a large test suite touches tens of thousands of paths. */
export const DEFAULT_RUN_FACTS_CAP = 200_000;

/**
 * Collapses repeated and trailing slashes and `.` segments. `..` is kept on purpose: after a
 * symbolic link, `a/link/../b` is not `a/b`, and the fingerprint must look where the run looked.
 */
export function normalizeRunPath(path: string): string | null {
  if (!path.startsWith('/')) return null;
  const parts = path.split('/').filter((part) => part !== '' && part !== '.');
  return `/${parts.join('/')}`;
}

function parentOf(path: string): string | null {
  if (path === '/') return null;
  const cut = path.lastIndexOf('/');
  return cut === 0 ? '/' : path.slice(0, cut);
}

/** Folds accesses, in order, into one fact per path. */
export class RunFactsBuilder {
  private readonly facts = new Map<string, PathFacts>();
  private overflow: { reason: OverflowReason; detail: string } | null = null;

  constructor(private readonly cap: number = DEFAULT_RUN_FACTS_CAP) {}

  /** Marks the whole set unusable; the first reason wins. */
  fail(reason: OverflowReason, detail: string): void {
    this.overflow ??= { reason, detail };
  }

  get failed(): boolean {
    return this.overflow !== null;
  }

  record(access: Access): void {
    if (this.overflow) return;
    const path = normalizeRunPath(access.path);
    if (path === null) {
      this.fail('unknown-path', `not an absolute path: ${JSON.stringify(access.path)}`);
      return;
    }
    switch (access.op) {
      case 'read':
      case 'exec': {
        const fact = this.fact(path);
        if (!fact) return;
        if (fact.read === undefined) fact.read = fact.written ? 'after-own-write' : 'before-write';
        else if (fact.written) fact.readAgainAfterWrite = true;
        if (access.op === 'exec') fact.executed = true;
        return;
      }
      case 'write':
        this.written(path);
        return;
      case 'create':
      case 'remove': {
        this.written(path);
        const parent = parentOf(path);
        if (parent) this.written(parent);
        return;
      }
      case 'lookup': {
        const fact = this.fact(path);
        if (fact && !fact.lookup) fact.lookup = { answer: access.answer, order: this.order(fact) };
        return;
      }
      case 'readlink': {
        const fact = this.fact(path);
        if (!fact) return;
        if (!fact.linkTarget) fact.linkTarget = { target: access.target, order: this.order(fact) };
        if (!fact.lookup) fact.lookup = { answer: { kind: 'link', target: access.target }, order: this.order(fact) };
        else if (fact.lookup.answer.kind === 'link' && fact.lookup.answer.target === undefined) fact.lookup.answer = { kind: 'link', target: access.target };
        return;
      }
      case 'list': {
        const fact = this.fact(path);
        if (!fact) return;
        if (fact.listed === undefined) fact.listed = this.order(fact);
        if (access.by === undefined) fact.listedByOther = true;
        else if (!fact.listedBy) fact.listedBy = [access.by];
        else if (!fact.listedBy.includes(access.by)) fact.listedBy.push(access.by);
        return;
      }
    }
  }

  /** The facts, sorted by path, or the overflow that makes them unusable. */
  finish(compilers: CompilerProcess[] = []): RunFacts {
    if (this.overflow) return { kind: 'overflow', ...this.overflow };
    const paths = [...this.facts.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { kind: 'facts', paths, compilers };
  }

  private order(fact: PathFacts): OrderClass {
    return fact.written ? 'after-own-write' : 'before-write';
  }

  private written(path: string): void {
    const fact = this.fact(path);
    if (fact) fact.written = true;
  }

  private fact(path: string): PathFacts | null {
    let fact = this.facts.get(path);
    if (fact) return fact;
    if (this.facts.size >= this.cap) {
      this.fail('cap', `more than ${this.cap} paths`);
      return null;
    }
    fact = { path };
    this.facts.set(path, fact);
    return fact;
  }
}

/** The facts of a list of accesses in order: for tests and small callers. */
export function runFactsOf(accesses: Iterable<Access>, cap?: number): RunFacts {
  const builder = new RunFactsBuilder(cap);
  for (const access of accesses) builder.record(access);
  return builder.finish();
}
