import { asyncProjects, describeMutationCampaign } from '../helpers/freshnessCampaign.js';
import { throughCli } from '../helpers/inProcess.js';

/*
 * The freshness campaign runs in process, with the native scan and with the JavaScript walk
 * (test/integration/freshness*.test.ts). Here a part of it runs through the built CLI, a process
 * per command as an agent calls it: what one process leaves on disk (the store, the stat cache
 * and the key for environment digests) is all the next one knows, and the JavaScript walk is
 * chosen by the process's own VOUCH_NATIVE.
 */
const NATIVE_CLI = new Set([
  'edit a source file',
  'same-size rewrite with times put back, immediately after the run',
  'rewrite an installed node_modules file with identical bytes',
  'change NODE_ENV',
  "change a script check's body to `echo skipped`, its inputs narrowed to src/**",
]);
const WALK_CLI = new Set(['edit a source file', 'rewrite an installed node_modules file with identical bytes']);

const project = asyncProjects(throughCli);
describeMutationCampaign('native scan, through the CLI', {}, project, (m) => NATIVE_CLI.has(m.name));
describeMutationCampaign('JavaScript scan, through the CLI', { VOUCH_NATIVE: '0' }, project, (m) => WALK_CLI.has(m.name));
