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
  const at = placeAmong(entries, plain);
  const hash = createHash('sha256');
  const marks: Mark[] = [{ index: 0, position: 0, hash: hash.copy() }];
  let position = 0;
  let chunk = '';
  /** Bytes hashed since the last mark, of entry lines and plain lines alike. */
  let hashed = 0;
  for (let index = 0; index < entries.length; index++) {
    const stop = at[index] as number;
    if (position < stop) {
      if (chunk !== '') hash.update(chunk);
      hashed += chunk.length + (plain.offsets[stop] as number) - (plain.offsets[position] as number);
      chunk = '';
      hash.update(plain.lines.subarray(plain.offsets[position], plain.offsets[stop]));
      position = stop;
    }
    chunk += entryLine(entries[index] as InputEntry);
    if (hashed + chunk.length > SEGMENT_BYTES) {
      hash.update(chunk);
      chunk = '';
      hashed = 0;
      marks.push({ index: index + 1, position, hash: hash.copy() });
    }
  }
  if (chunk !== '') hash.update(chunk);
  return finished({ marks, parts: [], at, entries, plain }, hash, position);
}

/** Where each entry goes among the plain lines: the first plain line after it. Positions only grow, so each search starts at the last. */
function placeAmong(entries: readonly InputEntry[], plain: PlainLines): Uint32Array {
  const count = plainLineCount(plain);
  const at = new Uint32Array(entries.length);
  let position = 0;
  let cached = -1;
  let cachedPath = '';
  const pathAt = (index: number) => {
    if (index !== cached) {
      cached = index;
      cachedPath = plainPathAt(plain, index);
    }
    return cachedPath;
  };
  for (let index = 0; index < entries.length; index++) {
    const path = (entries[index] as InputEntry).path;
    if (position < count && comparePaths(path, pathAt(position)) > 0) {
      let low = position + 1;
      let high = count;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (comparePaths(pathAt(middle), path) < 0) low = middle + 1;
        else high = middle;
      }
      position = low;
    }
    at[index] = position;
  }
  return at;
}

/** The manifest once every entry is hashed: the plain lines after the last entry, then the digest. */
function finished(segments: Segments, hash: Hash, position: number): Manifest {
  const { at, entries, plain } = segments;
  const count = plainLineCount(plain);
  hash.update(plain.lines.subarray(plain.offsets[position], plain.offsets[count]));
  let merged: InputEntry[] | undefined;
  const manifest: Manifest = {
    digest: hash.digest('hex'),
    // An index answers a question with the count alone; 50k installed entries cost 37 ms to make.
    count: entries.length + count,
    // The plain lines as they are, the entries' lines between them: no entry made of a plain line.
    lines() {
      const parts = segmentParts(entries, plain, at, 0, entries.length, 0);
      parts.push(plain.lines.subarray(plain.offsets[entries.length > 0 ? (at[entries.length - 1] as number) : 0], plain.offsets[count]));
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
  hashedSegments.set(manifest, segments);
  return manifest;
}

/**
 * The bytes a merged manifest hashes for entries [start, end): before each entry, the plain lines
 * that sort before it; the plain lines are views, not copies.
 */
function segmentParts(entries: readonly InputEntry[], plain: PlainLines, at: Uint32Array, start: number, end: number, position: number): Buffer[] {
  const parts: Buffer[] = [];
  let chunk = '';
  for (let index = start; index < end; index++) {
    const stop = at[index] as number;
    if (position < stop) {
      if (chunk !== '') parts.push(Buffer.from(chunk));
      chunk = '';
      parts.push(plain.lines.subarray(plain.offsets[position], plain.offsets[stop]));
      position = stop;
    }
    chunk += entryLine(entries[index] as InputEntry);
  }
  if (chunk !== '') parts.push(Buffer.from(chunk));
  return parts;
}

/** A mark every SEGMENT_BYTES hashed, about: what a patch rehashes at least. */
const SEGMENT_BYTES = 1 << 16;

/**
 * Where mergedManifest's hash stood after hashing the entries before `index` and the plain lines
 * before `position`: the SHA-256 state itself (Hash.copy(),
 * https://nodejs.org/api/crypto.html#hashcopyoptions).
 */
interface Mark {
  index: number;
  position: number;
  hash: Hash;
}

/**
 * A merged manifest cut at its marks. marks[0] is the start; segment k runs from marks[k] to
 * marks[k + 1], the last one to the last entry. parts[k] holds segment k's bytes once a patch has
 * rendered them, so that a later patch hashes them again without rendering them.
 */
interface Segments {
  marks: Mark[];
  parts: (Buffer[] | undefined)[];
  at: Uint32Array;
  entries: readonly InputEntry[];
  plain: PlainLines;
}

/** Each merged manifest's segments, for a patch of it; gone with the manifest. */
const hashedSegments = new WeakMap<Manifest, Segments>();

/**
 * The manifest of `basis` where it replaces some of `previous`'s entries in place (as the observer
 * patches a source it was told of): the same digest as manifestFromBasis. The hash resumes at the
 * mark before the first entry that is not the same object as before. After it, a segment with no
 * replaced entry is hashed from the bytes an earlier patch kept, and only a segment with one is
 * rendered again. At 100k sources and 50k installed files the lines are 12 MB, and sources sort
 * after node_modules/: rendering them all again cost more than hashing them.
 */
export function patchedManifest(previous: Manifest, basis: ManifestBasis): Manifest {
  const from = hashedSegments.get(previous);
  if (basis.plain === null || from === undefined || from.plain !== basis.plain || from.entries.length !== basis.entries.length) return manifestFromBasis(basis);
  const { marks, at } = from;
  const entries = basis.entries;
  // The segments that hold a replaced entry. The same path keeps every entry where it was among the plain lines.
  const replaced = new Set<number>();
  let segment = 0;
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index] as InputEntry;
    if (entry === from.entries[index]) continue;
    if (entry.path !== (from.entries[index] as InputEntry).path) return manifestFromBasis(basis);
    while (segment + 1 < marks.length && (marks[segment + 1] as Mark).index <= index) segment++;
    replaced.add(segment);
  }
  let first = marks.length - 1;
  for (const k of replaced) first = Math.min(first, k);
  const hash = (marks[first] as Mark).hash.copy();
  const segments: Segments = { marks: marks.slice(0, first + 1), parts: from.parts.slice(0, first), at, entries, plain: basis.plain };
  for (let k = first; k < marks.length; k++) {
    const mark = marks[k] as Mark;
    const end = k + 1 < marks.length ? (marks[k + 1] as Mark).index : entries.length;
    const kept = replaced.has(k) ? undefined : from.parts[k];
    const parts = kept ?? segmentParts(entries, basis.plain, at, mark.index, end, mark.position);
    for (const part of parts) hash.update(part);
    segments.parts[k] = parts;
    if (k + 1 < marks.length) segments.marks.push({ ...(marks[k + 1] as Mark), hash: hash.copy() });
  }
  return finished(segments, hash, entries.length > 0 ? (at[entries.length - 1] as number) : 0);
}

/** Lets go of the bytes patches kept for `manifest`: they can be rendered again, and a full scan wants the memory. */
export function forgetPatchBytes(manifest: Manifest): void {
  const segments = hashedSegments.get(manifest);
  if (segments) segments.parts = [];
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
