import { describeMutationCampaign, describeTreeCases, asyncProjects } from '../helpers/freshnessCampaign.js';
import { throughCli } from '../helpers/inProcess.js';

/*
 * The freshness campaign runs in process, with the native scan and with the JavaScript walk
 * (test/integration/freshness*.test.ts). Here a part of it runs through the built CLI, a process
 * per command as an agent calls it: what one process leaves on disk (the store, the stat cache
 * and the key for environment digests) is all the next one knows.
 */
const CLI_MUTATIONS = new Set([
  'edit a source file',
  'same-size rewrite with times put back, immediately after the run',
  'rewrite an installed node_modules file with identical bytes',
  'change NODE_ENV',
  "change a script check's body to `echo skipped`, its inputs narrowed to src/**",
]);

const project = asyncProjects(throughCli);
describeMutationCampaign('native scan, through the CLI', {}, project, (m) => CLI_MUTATIONS.has(m.name));
describeMutationCampaign('JavaScript scan, through the CLI', { VOUCH_NATIVE: '0' }, project, (m) => CLI_MUTATIONS.has(m.name));
describeTreeCases('JavaScript scan, through the CLI', { VOUCH_NATIVE: '0' }, project);
