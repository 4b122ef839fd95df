import { evidenceLine, type EvidenceEntry } from '../core/evidence.js';
import type { VerifiedEvidence } from './verifyEvidence.js';

type Verify = (recorded: readonly EvidenceEntry[], expectedDigest: string) => VerifiedEvidence;

/**
 * The looks one answer made at traced receipts' evidence, each by what was looked at and how.
 * An earlier receipt of a check records most of what the latest one does, and the edit that made
 * the latest STALE changed an entry they all recorded: one of its entries that this answer looked
 * at the same way and found otherwise makes it changed, with no look at the rest. That is what a
 * look at all of it would conclude, since that look would find the same entry; an entry no look
 * here made, or one whose look failed, decides nothing, and the full look is made.
 */
export class AnswerLooks {
  private readonly seen = new Map<string, string>();

  /** `verify`, remembering every entry it finds. */
  remembering(verify: Verify): Verify {
    return (recorded, expectedDigest) => {
      const verified = verify(recorded, expectedDigest);
      for (let index = 0; index < recorded.length; index++) {
        const now = verified.entries[index];
        if (now !== undefined && now.type !== 'error') this.seen.set(lookKey(recorded[index]!), evidenceLine(now));
      }
      return verified;
    };
  }

  /** Whether an entry of `recorded` was looked at in this answer, the same way, and found otherwise. */
  changed(recorded: readonly EvidenceEntry[]): boolean {
    if (this.seen.size === 0) return false;
    for (const entry of recorded) {
      const now = this.seen.get(lookKey(entry));
      if (now !== undefined && now !== evidenceLine(entry)) return true;
    }
    return false;
  }
}

/** What fs/verifyEvidence.ts lookAgain passes to the look, as a key: recorded entries with one key are looked at alike. */
function lookKey(entry: EvidenceEntry): string {
  return `${entry.path}\0${entry.use}\0${entry.own === true ? 1 : 0}${statDigest(entry) ? 1 : 0}${entry.executable !== undefined ? 1 : 0}\0${entry.names ?? ''}`;
}

/** Whether a look at the entry's path hashes or times a file: not for a file only looked up, whose size and time were not recorded. */
export function statDigest(entry: EvidenceEntry): boolean {
  return !(entry.use === 'lookup' && entry.type === 'file' && entry.digest === undefined);
}
