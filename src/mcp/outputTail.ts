import { Writable } from 'node:stream';

/** How much of a check's output the run tool's text keeps: enough to show a failure, small enough for a model's context. */
const TAIL_CHARS = 4000;

/**
 * Where a check's own output goes under `vouch mcp`. Stdout is the protocol, so
 * it cannot go there; stderr is no place either, since a host that pipes
 * stderr and never reads it would block the check once the pipe fills. The log
 * file keeps the whole output; this keeps the end of each check's, for the
 * tool's summary.
 */
export class OutputTail extends Writable {
  private readonly tails = new Map<string, string>();
  private current: string | null = null;

  /** Output from now on belongs to this check. */
  begin(check: string): void {
    this.current = check;
    this.tails.set(check, '');
  }

  tailOf(check: string): string {
    return this.tails.get(check) ?? '';
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (this.current !== null) {
      const text = (this.tails.get(this.current) ?? '') + chunk.toString();
      this.tails.set(this.current, text.length > TAIL_CHARS ? text.slice(-TAIL_CHARS) : text);
    }
    done();
  }
}
