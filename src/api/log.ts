import type { Receipt } from '../core/receipt.js';
import { listReceipts } from '../store/receipts.js';
import { selectCheck, type Project } from './project.js';
import { withSession } from './session.js';

/** Receipt history, newest first, failures included. */
export async function log(project: Project, name: string | null, limit: number): Promise<{ receipts: Receipt[]; notices: string[] }> {
  if (name !== null) await selectCheck(project, name);
  return withSession(project, async (session) => ({
    receipts: listReceipts(session.db, name, limit),
    notices: session.notices,
  }));
}
