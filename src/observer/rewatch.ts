/**
 * Renewals of the watcher, one at a time. Requests that arrive while one is
 * queued join it; a request during a renewal queues another, since the new
 * subscription's walk may already have passed the directory that asked.
 * Questions wait until none is queued or running.
 */
export class Rewatch {
  private due: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private disposed = false;
  private waiters: Array<() => void> = [];
  /** Renewals begun so far. */
  started = 0;

  constructor(
    private readonly renew: (why: string) => Promise<void>,
    /** Lets a burst (npm ci, a checkout) ask many times and be served by one renewal. */
    private readonly debounceMs = 20,
  ) {}

  /** A renewal is queued and has not begun: whatever changed so far, it will cover. */
  get queued(): boolean {
    return this.due !== null;
  }

  get pending(): boolean {
    return this.due !== null || this.running;
  }

  request(why: string): void {
    if (this.disposed) return;
    this.due ??= why;
    if (this.running || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.run();
    }, this.debounceMs);
  }

  /** Resolves once no renewal is queued or running. */
  idle(): Promise<void> {
    if (!this.pending || this.disposed) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  dispose(): void {
    this.disposed = true;
    this.due = null;
    if (this.timer) clearTimeout(this.timer);
    this.release();
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.due !== null && !this.disposed) {
        const why = this.due;
        this.due = null;
        this.started++;
        await this.renew(why);
      }
    } finally {
      this.running = false;
      this.release();
    }
  }

  private release(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
