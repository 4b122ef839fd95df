import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, tempProject, type TempProject } from './project.js';

export const DEMO_APP = join(REPO, 'examples', 'demo-app');

/** A copy of the bundled example workspace, as a git repository of its own; its tools are the repo's. */
export function demoWorkspace(name: string): TempProject {
  const project = tempProject(name, {}, { git: false });
  cpSync(DEMO_APP, project.root, { recursive: true, filter: (source) => !/[\\/](node_modules|\.vouch)$/.test(source) });
  project.git('init', '-q');
  project.git('add', '-A');
  project.git('commit', '-qm', 'demo');
  return project;
}

export function readClaim(project: TempProject, name: string): any {
  return JSON.parse(readFileSync(join(project.root, 'claims', `${name}.json`), 'utf8'));
}

/** The version a workspace tool reports: the one installed for the repo, which the example resolves to. */
export function installedVersion(name: string): string {
  return JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')).version;
}
