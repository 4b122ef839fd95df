/**
 * The library seam for agent runtimes that embed vouch without a hook: the
 * same matching, decisions and rewrite validation as `vouch hook`.
 *
 *   import { intercept } from 'vouch/intercept';
 *   const result = await intercept({ kind: 'shell', command: 'npm test', cwd: '/repo' });
 *   // { kind: 'unchanged' } | { kind: 'rewritten', command } | { kind: 'declined', reason }
 */
export type InterceptRequest = {
  kind: 'shell';
  command: string;
  cwd: string;
  /** The environment the command would run with; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** How a rewritten command names vouch, inserted verbatim (quote it yourself); default `vouch`. */
  program?: string;
};

export type InterceptResult = { kind: 'unchanged' } | { kind: 'rewritten'; command: string } | { kind: 'declined'; reason: string };

/** Never throws: on any error the command is left unchanged, and runs as typed. */
export async function intercept(request: InterceptRequest): Promise<InterceptResult> {
  try {
    if (request?.kind !== 'shell' || typeof request.command !== 'string' || typeof request.cwd !== 'string') return { kind: 'unchanged' };
    const { evaluateCommand } = await import('./evaluate.js');
    const { decision } = await evaluateCommand({
      command: request.command,
      cwd: request.cwd,
      env: request.env ?? process.env,
      ...(request.program !== undefined ? { program: request.program } : {}),
    });
    if (decision.kind === 'deny') return { kind: 'declined', reason: decision.reason };
    if (decision.kind === 'rewrite') return { kind: 'rewritten', command: decision.command };
    return { kind: 'unchanged' };
  } catch {
    return { kind: 'unchanged' };
  }
}
