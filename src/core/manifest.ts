import { createHash, type Hash } from 'node:crypto';

/**
 * One input as observed. Source files are bound by content (digest plus the
 * executable bit); installed files by identity, plus content when the identity
 * alone cannot be trusted (hard links). Links are recorded as links.
 */
export type InputEntry =
  | { path: string; origin: 'source'; type: 'file'; digest: string; executable: boolean }
  | { path: string; origin: 'installed'; type: 'file'; identity: string; digest?: string }
  | { path: string; origin: 'source' | 'installed'; type: 'symlink'; target: string };

/** The entries of one observation, sorted by path, and their digest. */
export interface Manifest {
  entries: InputEntry[];
  digest: string;
  /** How many entries, where counting them costs less than listing them (installed lines not made into entries yet). */
  count?: number;
  /** Its lines (entryLine), where making them costs less than making the entries (installed lines already rendered). */
  lines?(): Buffer;
}

/** The number of entries, without making them. */
export function manifestSize(manifest: Manifest): number {
  return manifest.count ?? manifest.entries.length;
}

/**
 * One entry's line in the digest. Paths and link targets may hold any byte
 * but NUL, newlines included, so each is prefixed with its length: no two
 * different entries can make the same line.
 */
export function entryLine(entry: InputEntry): string {
  const path = `${entry.path.length}:${entry.path}`;
  switch (entry.type) {
    case 'symlink':
      return `${path} ${entry.origin} l ${entry.target.length}:${entry.target}\n`;
    default:
      return entry.origin === 'source'
        ? `${path} s ${entry.digest} ${entry.executable ? 'x' : '-'}\n`
        : `${path} i ${entry.identity} ${entry.digest ?? '-'}\n`;
  }
}

const LINES_PER_UPDATE = 512;

/** Entries' lines in chunks of LINES_PER_UPDATE, in order: what a digest hashes and a store keeps. */
function eachChunk(entries: readonly InputEntry[], visit: (chunk: string) => void): void {
  for (let start = 0; start < entries.length; start += LINES_PER_UPDATE) {
    let chunk = '';
    const end = Math.min(entries.length, start + LINES_PER_UPDATE);
    for (let index = start; index < end; index++) chunk += entryLine(entries[index] as InputEntry);
    visit(chunk);
  }
}

/** The manifest's lines, in order: the bytes its digest is the SHA-256 of. */
export function manifestLines(manifest: Manifest): Buffer {
  if (manifest.lines) return manifest.lines();
  const parts: Buffer[] = [];
  eachChunk(manifest.entries, (chunk) => parts.push(Buffer.from(chunk)));
  return Buffer.concat(parts);
}

/**
 * The entries of a manifest's lines, or null when they are not lines entryLine makes. The
 * lengths before paths and targets count UTF-16 units, as entryLine writes them.
 */
export function parseManifestLines(text: string): InputEntry[] | null {
  const entries: InputEntry[] = [];
  let at = 0;
  const counted = (): string | null => {
    const colon = text.indexOf(':', at);
    if (colon <= at || colon - at > 10) return null;
    const digits = text.slice(at, colon);
    if (!/^[0-9]+$/.test(digits)) return null;
    const end = colon + 1 + Number(digits);
    if (end > text.length) return null;
    at = end;
    return text.slice(colon + 1, end);
  };
  const word = (then: string): string | null => {
    const end = text.indexOf(then, at);
    if (end < 0) return null;
    const found = text.slice(at, end);
    if (found.includes(' ') || found.includes('\n')) return null;
    at = end + 1;
    return found;
  };
  while (at < text.length) {
    const path = counted();
    if (path === null || text[at] !== ' ') return null;
    at++;
    if (text.startsWith('s ', at)) {
      at += 2;
      const digest = word(' ');
      const bit = text[at];
      if (digest === null || (bit !== 'x' && bit !== '-') || text[at + 1] !== '\n') return null;
      at += 2;
      entries.push({ path, origin: 'source', type: 'file', digest, executable: bit === 'x' });
    } else if (text.startsWith('i ', at)) {
      at += 2;
      const identity = word(' ');
      const digest = word('\n');
      if (identity === null || digest === null) return null;
      entries.push(digest === '-' ? { path, origin: 'installed', type: 'file', identity } : { path, origin: 'installed', type: 'file', identity, digest });
    } else {
      const origin = text.startsWith('source l ', at) ? 'source' : text.startsWith('installed l ', at) ? 'installed' : null;
      if (origin === null) return null;
      at += origin.length + 3;
      const target = counted();
      if (target === null || text[at] !== '\n') return null;
      at++;
      entries.push({ path, origin, type: 'symlink', target });
    }
  }
  return entries;
}

/** Entries must already be sorted by path: the digest is order-sensitive by design. */
export function manifestOf(entries: InputEntry[]): Manifest {
  const hash = createHash('sha256');
  eachChunk(entries, (chunk) => hash.update(chunk));
  return { entries, digest: hash.digest('hex') };
}

export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Installed entries already rendered as manifest lines (by the native tree
 * scan), sorted by path. `offsets` has one more item than there are lines.
 * Lines are ASCII, so a path's length in bytes is its length in JavaScript.
 */
export interface PlainLines {
  lines: Buffer;
  offsets: Uint32Array;
}

export function plainLineCount(plain: PlainLines): number {
  return plain.offsets.length - 1;
}

export function plainPathAt(plain: PlainLines, index: number): string {
  const start = plain.offsets[index] as number;
  const colon = plain.lines.indexOf(58, start);
  const length = Number(plain.lines.toString('latin1', start, colon));
  return plain.lines.toString('latin1', colon + 1, colon + 1 + length);
}

/** One plain line as the installed entry it stands for. */
export function plainEntryAt(plain: PlainLines, index: number): InputEntry & { origin: 'installed'; type: 'file' } {
  const start = plain.offsets[index] as number;
  const end = plain.offsets[index + 1] as number;
  const colon = plain.lines.indexOf(58, start);
  const pathEnd = colon + 1 + Number(plain.lines.toString('latin1', start, colon));
  // `${path} i ${identity} -\n`
  const identity = plain.lines.toString('latin1', pathEnd + 3, end - 3);
  return { path: plain.lines.toString('latin1', colon + 1, pathEnd), origin: 'installed', type: 'file', identity };
}

/**
 * The manifest of `entries` (sorted) and `plain` together, as manifestOf would
 * make it of all of them sorted: the same digest, without turning every plain
 * line into an entry. The entries are built only when someone asks for them.
 */
export function mergedManifest(entries: InputEntry[], plain: PlainLines): Manifest {
  return merged(entries, plain);
}

/** mergedManifest, or the same resumed at one of `from`'s marks (patchedManifest). */
function merged(entries: InputEntry[], plain: PlainLines, resume?: { from: Marks; mark: number }): Manifest {
  const count = plainLineCount(plain);
  // Where each entry goes among the plain lines; positions only grow, so each search starts at the last.
  const at = new Uint32Array(entries.length);
  const start = resume?.from.marks[resume.mark];
  const hash = start ? start.hash.copy() : createHash('sha256');
  const marks: Mark[] = resume ? resume.from.marks.slice(0, resume.mark + 1) : [];
  if (start) at.set(resume!.from.at.subarray(0, start.index));
  let position = start ? start.position : 0;
  let cached = -1;
  let cachedPath = '';
  const pathAt = (index: number) => {
    if (index !== cached) {
      cached = index;
      cachedPath = plainPathAt(plain, index);
    }
    return cachedPath;
  };
  let chunk = '';
  /** Bytes hashed since the last mark: a mark every 64 kB, of entry lines and plain lines alike. */
  let hashed = 0;
  for (let index = start ? start.index : 0; index < entries.length; index++) {
    const path = (entries[index] as InputEntry).path;
    if (position < count && comparePaths(path, pathAt(position)) > 0) {
      let low = position + 1;
      let high = count;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (comparePaths(pathAt(middle), path) < 0) low = middle + 1;
        else high = middle;
      }
      if (chunk !== '') hash.update(chunk);
      hashed += chunk.length + (plain.offsets[low] as number) - (plain.offsets[position] as number);
      chunk = '';
      hash.update(plain.lines.subarray(plain.offsets[position], plain.offsets[low]));
      position = low;
    }
    at[index] = position;
    chunk += entryLine(entries[index] as InputEntry);
    if (hashed + chunk.length > 1 << 16) {
      hash.update(chunk);
      chunk = '';
      hashed = 0;
      marks.push({ index: index + 1, position, hash: hash.copy() });
    }
  }
  if (chunk !== '') hash.update(chunk);
  hash.update(plain.lines.subarray(plain.offsets[position], plain.offsets[count]));
  const digest = hash.digest('hex');

  let merged: InputEntry[] | undefined;
  const manifest: Manifest = {
    digest,
    // An index answers a question with the count alone; 50k installed entries cost 37 ms to make.
    count: entries.length + count,
    // The plain lines as they are, the entries' lines between them: no entry made of a plain line.
    lines() {
      const parts: Buffer[] = [];
      let next = 0;
      let chunk = '';
      for (let index = 0; index < entries.length; index++) {
        const stop = at[index] as number;
        if (next < stop) {
          if (chunk !== '') parts.push(Buffer.from(chunk));
          chunk = '';
          parts.push(plain.lines.subarray(plain.offsets[next], plain.offsets[stop]));
          next = stop;
        }
        chunk += entryLine(entries[index] as InputEntry);
      }
      if (chunk !== '') parts.push(Buffer.from(chunk));
      parts.push(plain.lines.subarray(plain.offsets[next], plain.offsets[count]));
      return Buffer.concat(parts);
    },
    get entries() {
      if (merged) return merged;
      merged = [];
      let next = 0;
      for (let index = 0; index < entries.length; index++) {
        for (const stop = at[index] as number; next < stop; next++) merged.push(plainEntryAt(plain, next));
        merged.push(entries[index] as InputEntry);
      }
      for (; next < count; next++) merged.push(plainEntryAt(plain, next));
      return merged;
    },
  };
  hashMarks.set(manifest, { marks, at, entries, plain });
  return manifest;
}

/**
 * Where mergedManifest's hash stood after hashing the entries before `index` and the plain lines
 * before `position`: the SHA-256 state itself (Hash.copy(),
 * https://nodejs.org/api/crypto.html#hashcopyoptions), about every 64 kB hashed.
 */
interface Mark {
  index: number;
  position: number;
  hash: Hash;
}

interface Marks {
  marks: Mark[];
  at: Uint32Array;
  entries: readonly InputEntry[];
  plain: PlainLines;
}

/** Each merged manifest's marks, for a patch of it; gone with the manifest. */
const hashMarks = new WeakMap<Manifest, Marks>();

/**
 * The manifest of `basis` where it replaces some of `previous`'s entries in place (as the observer
 * patches a source it was told of): the same digest as manifestFromBasis, with the hash resumed
 * from the last mark before the first entry that is not the same object as before, instead of
 * made again over every line. At 100k sources and 50k installed files the lines are 12 MB, and an
 * edit is on average halfway through the sources, which sort after node_modules/.
 */
export function patchedManifest(previous: Manifest, basis: ManifestBasis): Manifest {
  const from = hashMarks.get(previous);
  if (basis.plain === null || from === undefined || from.plain !== basis.plain || from.entries.length !== basis.entries.length) return manifestFromBasis(basis);
  let first = 0;
  while (first < basis.entries.length && basis.entries[first] === from.entries[first]) first++;
  let mark = -1;
  for (let low = 0, high = from.marks.length - 1; low <= high; ) {
    const middle = (low + high) >>> 1;
    if ((from.marks[middle] as Mark).index <= first) {
      mark = middle;
      low = middle + 1;
    } else high = middle - 1;
  }
  return merged(basis.entries, basis.plain, mark < 0 ? undefined : { from, mark });
}

/**
 * What a manifest is made of: entries sorted by path, and the installed lines
 * the native tree scan rendered (null without it). An index that patches an
 * entry makes the manifest again from its basis, with the same digest a
 * fresh scan would give.
 */
export interface ManifestBasis {
  entries: InputEntry[];
  plain: PlainLines | null;
}

export function manifestFromBasis(basis: ManifestBasis): Manifest {
  return basis.plain === null ? manifestOf(basis.entries) : mergedManifest(basis.entries, basis.plain);
}

/** The first plain line whose path is not below `path` (a lower bound). */
export function plainLowerBound(plain: PlainLines, path: string): number {
  let low = 0;
  let high = plainLineCount(plain);
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (comparePaths(plainPathAt(plain, middle), path) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * Joins runs of plain lines, each sorted and all of one run sorting before the
 * next, leaving out the [from, to) line ranges given for each run.
 */
export function joinPlainLines(runs: { plain: PlainLines; drop: [number, number][] }[]): PlainLines {
  // One install tree with nothing pruned: the common case, and 5 MB not copied at 50k files.
  if (runs.length === 1 && runs[0]!.drop.every(([start, end]) => start === end)) return runs[0]!.plain;
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let base = 0;
  for (const { plain, drop } of runs) {
    const keep: [number, number][] = [];
    let from = 0;
    for (const [start, end] of [...drop].sort((a, b) => a[0] - b[0])) {
      if (start > from) keep.push([from, start]);
      from = Math.max(from, end);
    }
    if (plainLineCount(plain) > from) keep.push([from, plainLineCount(plain)]);
    for (const [start, end] of keep) {
      const first = plain.offsets[start] as number;
      for (let index = start; index < end; index++) offsets.push(base + (plain.offsets[index] as number) - first);
      const bytes = plain.lines.subarray(first, plain.offsets[end]);
      parts.push(bytes);
      base += bytes.length;
    }
  }
  offsets.push(base);
  return { lines: Buffer.concat(parts), offsets: Uint32Array.from(offsets) };
}
