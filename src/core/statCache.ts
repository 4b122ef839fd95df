/**
 * path -> (identity, digest): an unchanged file is never read twice. An entry
 * is written only once its identity is past the racy window, so a cached digest
 * is trusted exactly when the identity still matches.
 */
export interface StatCache {
  get(path: string): { identity: string; digest: string } | undefined;
  set(path: string, identity: string, digest: string): void;
  delete(path: string): void;
}

export class MemoryStatCache implements StatCache {
  readonly entries = new Map<string, { identity: string; digest: string }>();
  readonly dirty = new Set<string>();

  get(path: string) {
    return this.entries.get(path);
  }

  set(path: string, identity: string, digest: string) {
    const old = this.entries.get(path);
    if (old?.identity === identity && old.digest === digest) return;
    this.entries.set(path, { identity, digest });
    this.dirty.add(path);
  }

  delete(path: string) {
    if (this.entries.delete(path)) this.dirty.add(path);
  }
}
