import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, cleanEnv, REPO, tempProject, type TempProject } from './project.js';

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

/** Starts `vouch prove --serve` in the workspace and resolves once it serves, with what it printed so far and since. */
export async function serveWithLog(project: TempProject): Promise<{ server: ChildProcess; stderr: () => string }> {
  const server = spawn(process.execPath, [CLI, 'prove', '--serve'], { cwd: project.root, env: cleanEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  server.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const deadline = Date.now() + 90_000;
  while (!/serving proves on/.test(stderr)) {
    if (Date.now() > deadline || server.exitCode !== null) {
      server.kill('SIGKILL');
      throw new Error(`the prover did not start: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { server, stderr: () => stderr };
}

/** Starts `vouch prove --serve` in the workspace and resolves once it serves. */
export async function serve(project: TempProject): Promise<ChildProcess> {
  return (await serveWithLog(project)).server;
}

/** Ends a served prover and waits for it. */
export async function stopServing(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  await exited;
}
