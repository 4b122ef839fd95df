import type { InstalledCounts } from '../core/changeSummary.js';
import { decide, type CheckStatus } from '../core/decide.js';
import { diffContext, diffDefinition, diffManifest, type InputChange, type ValueChange } from '../core/diff.js';
import { countBy, installedBucketOf } from '../core/inputGroups.js';
import type { InputEntry } from '../core/manifest.js';
import { readConsistently } from '../store/openStore.js';
import { loadManifest, latestReceipt } from '../store/receipts.js';
import { askObserver, type ObserverUse } from './askObserver.js';
import { selectChecks, type Project } from './project.js';
import { withSession } from './session.js';
import { observeChecks } from './scan.js';

export interface Explanation {
  status: CheckStatus;
  definitionChanges: ValueChange[];
  contextChanges: ValueChange[];
  inputChanges: InputChange[];
  /** Installed files per package in the receipt and now, for summarising installed changes; counted on the first call; empty without a receipt. */
  installedCounts: () => InstalledCounts;
  notices: string[];
}

function installedCounts(entries: readonly InputEntry[]): Map<string, number> {
  return countBy(
    entries.flatMap((entry) => (entry.origin === 'installed' ? [entry.path] : [])),
    installedBucketOf,
  );
}

/** What changed since the latest receipt: inputs, context and definition, each in detail. */
export async function explain(project: Project, name: string, env: NodeJS.ProcessEnv, observer: ObserverUse = 'auto'): Promise<Explanation> {
  const [definition] = await selectChecks(project, [name]);
  if (!definition) throw new Error('unreachable: selectChecks returns the named check');
  return withSession(project, async (session) => {
    const notices: string[] = [];
    const asked = observer === 'auto' ? await askObserver(project, [definition], env, 'sync', notices, { entries: true }) : null;
    session.notices.push(...notices);
    const [now] = asked ? asked.checks : observeChecks(project, session, [definition], env);
    if (!now) throw new Error('unreachable: one observation per check');
    // The receipt and its manifest from one file: a damaged manifest page found after the
    // receipt was read must not leave that receipt deciding the answer.
    const { latest, recorded } = readConsistently(session.db, () => {
      const receipt = latestReceipt(session.db, definition.name);
      return { latest: receipt, recorded: receipt === null ? null : loadManifest(session.db, receipt.manifestDigest) };
    });
    const status = decide(definition, now.observed, now.inputs, latest);
    if (latest === null) {
      return { status, definitionChanges: [], contextChanges: [], inputChanges: [], installedCounts: () => ({ before: new Map(), after: new Map() }), notices: session.notices };
    }
    const current = now.inputs.manifest.entries;
    // Without the receipt's own list, every input now would read as added: say it is not known instead.
    if (recorded === null) session.notices.push(`the input manifest of run ${latest.runId} could not be read: which inputs changed since is not known`);
    const before = recorded ?? [];
    let counts: InstalledCounts | undefined;
    return {
      status,
      definitionChanges: diffDefinition(latest.definition, definition),
      contextChanges: diffContext(latest.context, now.observed.context),
      inputChanges: recorded === null ? [] : diffManifest(before, current),
      installedCounts: () => (counts ??= { before: installedCounts(before), after: installedCounts(current) }),
      notices: session.notices,
    };
  }, env);
}
