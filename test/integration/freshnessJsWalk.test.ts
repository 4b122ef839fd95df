import { expect, it } from 'vitest';
import { loadAddon } from '../../src/fs/nativeAddon.js';
import { asyncProjects, describeMutationCampaign, describeTreeCases } from '../helpers/freshnessCampaign.js';

// The freshness campaign with the JavaScript walk every machine has, in a file of its own: the
// addon is loaded once per process, and this file's process must never load it. Vitest runs each
// integration file in a process of its own (https://vitest.dev/config/#isolate).
process.env.VOUCH_NATIVE = '0';
const project = asyncProjects();

it('the JavaScript walk is the one these tests use', () => {
  expect(loadAddon()).toBeNull();
});

describeMutationCampaign('JavaScript scan', { VOUCH_NATIVE: '0' }, project);
describeTreeCases('JavaScript scan', { VOUCH_NATIVE: '0' }, project);
