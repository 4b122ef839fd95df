/**
 * The paths the watcher's events named, in order, for looks that trust events to say what
 * changed (observer/keptEvidence.ts). A mark is a point in the log; `since` gives every path named
 * after it, or null when events may have been missed since: a lost event, a renewal, a watcher
 * that does not report its losses, or more paths than are worth keeping. Then the caller looks at
 * everything again.
 */
export interface ChangeMark {
  readonly epoch: number;
  readonly at: number;
}

/** A root-relative path an event named ('' for the root itself), and whether it was made there (created, or moved in). */
export interface Change {
  readonly path: string;
  readonly created: boolean;
}

/** Past this many paths since the oldest mark, looking at everything again is as cheap. */
const KEPT_PATHS = 4_096;

export class ChangeLog {
  private epoch = 0;
  /** The sequence number of paths[0]. */
  private base = 0;
  private paths: Change[] = [];
  private trusted = false;

  /** Whether events can be trusted from now on; false forgets every mark. */
  trust(trusted: boolean): void {
    if (!trusted) this.lose();
    this.trusted = trusted;
  }

  /** A point to ask `since` about later; null while events cannot be trusted. */
  mark(): ChangeMark | null {
    return this.trusted ? { epoch: this.epoch, at: this.base + this.paths.length } : null;
  }

  record(paths: readonly Change[]): void {
    if (paths.length === 0) return;
    if (this.paths.length + paths.length > KEPT_PATHS) {
      this.lose();
      return;
    }
    for (const path of paths) this.paths.push(path);
  }

  /** Events may have been missed: every mark made so far is void. */
  lose(): void {
    this.epoch++;
    this.base += this.paths.length;
    this.paths = [];
  }

  /** The paths named since the mark (repeats included), or null when some may have been missed. */
  since(mark: ChangeMark): readonly Change[] | null {
    if (!this.trusted || mark.epoch !== this.epoch || mark.at < this.base) return null;
    return this.paths.slice(mark.at - this.base);
  }
}
