import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Json } from '../helpers/answers.js';
import { hostileInstallTree } from '../helpers/installTree.js';
import { CANNOT_DROP_PRIVILEGES, giveToNobody, vouchUnprivileged } from '../helpers/privileges.js';
import { cleanEnv, type TempProject } from '../helpers/project.js';

/*
 * The native scan against the JavaScript walk, run by the built CLI as another user: what a
 * directory's mode hides from that user. The rest runs in process, in
 * test/integration/nativeScan.test.ts.
 */

const NATIVE = cleanEnv();
const PORTABLE = cleanEnv({ VOUCH_NATIVE: '0' });
const BOTH = [NATIVE, PORTABLE];

const projects: TempProject[] = [];
afterEach(() => {
  for (const project of projects.splice(0)) project.remove();
});

function hostile(name: string): TempProject {
  const p = hostileInstallTree(name);
  projects.push(p);
  return p;
}

describe('the native scan, as another user', () => {
  // Kept listings are stat'ed through without read permission: the directory's new mode must
  // still send the walk to read it, and fail as the JavaScript walk does.
  it.skipIf(process.platform === 'win32' || CANNOT_DROP_PRIVILEGES).each(['000', '111'])('a directory made unreadable (mode %s) gives both the same problem', (mode) => {
    const p = hostile('native-unreadable');
    giveToNobody(p);
    const asNobody = (args: string[], env: NodeJS.ProcessEnv) => {
      const result = vouchUnprivileged(p, [...args, '--json'], env.VOUCH_NATIVE ? { VOUCH_NATIVE: env.VOUCH_NATIVE } : {});
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout);
    };
    asNobody(['run', 'check'], NATIVE);
    expect(asNobody(['status', 'check'], NATIVE).checks[0].freshness).toBe('CURRENT');
    const locked = join(p.root, 'node_modules/dep/lib');
    spawnSync('chmod', [mode, locked]);
    try {
      const answers = BOTH.map((env) => asNobody(['status', 'check'], env).checks[0]);
      for (const status of answers) {
        expect(status.freshness).toBe('UNVERIFIED');
        expect(status.reasons.map((r: Json) => r.code)).toContain('input-unreadable');
      }
      expect(answers[0].reasons).toEqual(answers[1].reasons);
    } finally {
      spawnSync('chmod', ['755', locked]);
    }
    // A directory's mode is not an input: readable again, the tree is as it was.
    expect(asNobody(['status', 'check'], NATIVE).checks[0].freshness).toBe('CURRENT');
  });

});
