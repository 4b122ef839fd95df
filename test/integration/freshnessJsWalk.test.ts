import { expect, it } from 'vitest';
import { loadAddon } from '../../src/fs/nativeAddon.js';
import { asyncProjects, describeMutationCampaign, describeTreeCases } from '../helpers/freshnessCampaign.js';

// The freshness campaign with the JavaScript walk every machine has, in a file of its own so that
// it runs beside the native one. Each command gets VOUCH_NATIVE=0 from its env
// (test/helpers/inProcess.ts), and the whole file has it too.
process.env.VOUCH_NATIVE = '0';
const project = asyncProjects();

it('the JavaScript walk is the one these tests use', () => {
  expect(loadAddon()).toBeNull();
});

// The mutations no scan looks at (the env, the command, a script's body) run with the native scan.
describeMutationCampaign('JavaScript scan', { VOUCH_NATIVE: '0' }, project, (m) => m.scanned !== false);
describeTreeCases('JavaScript scan', { VOUCH_NATIVE: '0' }, project);
