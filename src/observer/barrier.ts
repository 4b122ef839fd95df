import { readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Watchman's cookie: create a file inside the watched tree and wait for its
 * event. The kernel queues events in order, so once the cookie's event is in,
 * so is every event of a write made before the question was asked.
 */
export class Barrier {
  private readonly waiting = new Map<string, () => void>();
  private count = 0;

  constructor(private readonly prefix: string | null) {}

  get available(): boolean {
    return this.prefix !== null;
  }

  isCookie(path: string): boolean {
    return this.prefix !== null && path.startsWith(this.prefix);
  }

  /** A cookie this process made: a new file (O_EXCL), never a link to another. */
  isOwnCookie(path: string): boolean {
    return this.prefix !== null && path.startsWith(`${this.prefix}${process.pid}-`);
  }

  /** Called after the rest of an event batch has been taken in. */
  seen(path: string): void {
    const release = this.waiting.get(path);
    if (release) {
      this.waiting.delete(path);
      release();
    }
  }

  /** True once every earlier event is in; false when the cookie's event never came. */
  async sync(timeoutMs: number): Promise<boolean> {
    if (this.prefix === null) return false;
    const path = `${this.prefix}${process.pid}-${++this.count}`;
    let timer: NodeJS.Timeout | undefined;
    const arrived = new Promise<boolean>((resolve) => {
      this.waiting.set(path, () => resolve(true));
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      // "wx" is O_CREAT | O_EXCL, which never follows a link at the path: a planted one fails with
      // EEXIST (open(2)), and the cookie's directory was checked by lstat when the observer started.
      writeFileSync(path, '', { flag: 'wx', mode: 0o600 });
    } catch {
      this.waiting.delete(path);
      clearTimeout(timer);
      return false;
    }
    const ok = await arrived;
    clearTimeout(timer);
    this.waiting.delete(path);
    // Removed only after its event: a create and delete in one batch may cancel out.
    unlinkQuietly(path);
    return ok;
  }

  /** Cookies a killed observer left behind. */
  sweep(): void {
    if (this.prefix === null) return;
    const dir = dirname(this.prefix);
    const stem = basename(this.prefix);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    // unlink removes a link itself, never its target; a directory of that name is left.
    for (const name of names) if (name.startsWith(stem)) unlinkQuietly(join(dir, name));
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already, or not a file
  }
}
