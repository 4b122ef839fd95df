import { STAGES, toolchainRunner, type ClaimProject, type Stage, type Toolchain } from './claim.js';
import { ClaimError } from './claimError.js';

/**
 * The claim receipt token:
 *
 *   vouch-claim:<digest>:<stage>:typescript@V:<linter>@V:<runner>@V:config@<config-digest>:<project>@<options-digest>
 *
 * where <runner> is `vitest` or `jest`.
 *
 * A token is a statement that can be recomputed, not an authenticator: it
 * says "this claim, with this control stage, was judged by these tool
 * versions, so configured, under this project", and anyone holding the claim
 * and the workspace can prove it again and compare. It carries no secret and no signature, so
 * possessing one proves nothing by itself.
 *
 * The project is the last field and is parsed as the remainder, because a
 * tsconfig path may hold ':' and '@'; its options digest follows the last '@'.
 */
export interface ClaimToken {
  digest: string;
  stage: Stage;
  toolchain: Toolchain;
  /** The judge config digest (JudgeConfig.digest): the linters', the runner's and the project's config files. */
  config: string;
  project: ClaimProject;
}

const PREFIX = 'vouch-claim:';
const DIGEST = /^[0-9a-f]{64}$/;
const OPTIONS_DIGEST = /^[0-9a-f]{8,64}$/;
/** Versions and the linter name sit between ':' separators, so they may hold neither ':' nor '@' (bar a scope) nor blanks. */
const VERSION = /^[0-9A-Za-z][0-9A-Za-z.+_-]*$/;
const LINTER = /^(@[0-9a-z._-]+\/)?[0-9a-z][0-9a-z._-]*$/;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

export function formatClaimToken(token: ClaimToken): string {
  const { digest, stage, toolchain, config, project } = token;
  // A token that could not be parsed back would be a statement nobody can check, so formatting refuses it.
  const refuse = (what: string, value: string) => {
    throw new ClaimError('instrument', 'malformed', `cannot form a claim receipt token: ${what} "${value}" does not fit the token grammar`);
  };
  if (!DIGEST.test(digest)) refuse('digest', digest);
  if (!STAGES.includes(stage)) refuse('stage', stage);
  if (!VERSION.test(toolchain.typescript)) refuse('typescript version', toolchain.typescript);
  if (!LINTER.test(toolchain.linter.name)) refuse('linter name', toolchain.linter.name);
  if (!VERSION.test(toolchain.linter.version)) refuse('linter version', toolchain.linter.version);
  const runner = toolchainRunner(toolchain);
  if (!VERSION.test(runner.version)) refuse(`${runner.name} version`, runner.version);
  if (!OPTIONS_DIGEST.test(config)) refuse('config digest', config);
  if (project.tsconfig === '' || CONTROL_CHARACTERS.test(project.tsconfig)) refuse('project', project.tsconfig);
  if (!OPTIONS_DIGEST.test(project.optionsDigest)) refuse('options digest', project.optionsDigest);
  return [
    'vouch-claim',
    digest,
    stage,
    `typescript@${toolchain.typescript}`,
    `${toolchain.linter.name}@${toolchain.linter.version}`,
    `${runner.name}@${runner.version}`,
    `config@${config}`,
    `${project.tsconfig}@${project.optionsDigest}`,
  ].join(':');
}

/** Splits `name@version` at its last '@', so a scoped name keeps its own. */
function splitAt(field: string): [string, string] | null {
  const at = field.lastIndexOf('@');
  if (at <= 0) return null;
  return [field.slice(0, at), field.slice(at + 1)];
}

export function parseClaimToken(text: string): ClaimToken {
  const malformed = (why: string): never => {
    throw new ClaimError('claimant', 'malformed', `not a claim receipt token (${why}); expected vouch-claim:<digest>:<stage>:typescript@V:<linter>@V:<vitest|jest>@V:config@<config-digest>:<project>@<options-digest>`);
  };
  if (!text.startsWith(PREFIX)) malformed('it must start with "vouch-claim:"');
  if (CONTROL_CHARACTERS.test(text)) malformed('it holds a control character');
  const fields: string[] = [];
  let rest = text.slice(PREFIX.length);
  for (let i = 0; i < 6; i++) {
    const colon = rest.indexOf(':');
    if (colon < 0) malformed(`it has ${i + 2} of its 8 fields`);
    fields.push(rest.slice(0, colon));
    rest = rest.slice(colon + 1);
  }
  const [digest = '', stage = '', typescriptField = '', linterField = '', vitestField = '', configField = ''] = fields;
  if (!DIGEST.test(digest)) malformed('the digest must be 64 lowercase hex digits');
  if (!STAGES.includes(stage as Stage)) malformed(`the stage must be one of ${STAGES.join(', ')}`);
  const typescript = splitAt(typescriptField);
  if (typescript === null || typescript[0] !== 'typescript' || !VERSION.test(typescript[1])) malformed('the third field must be typescript@<version>');
  const linter = splitAt(linterField);
  if (linter === null || !LINTER.test(linter[0]) || !VERSION.test(linter[1])) malformed('the fourth field must be <linter>@<version>');
  const vitest = splitAt(vitestField);
  if (vitest === null || (vitest[0] !== 'vitest' && vitest[0] !== 'jest') || !VERSION.test(vitest[1])) malformed('the fifth field must be vitest@<version> or jest@<version>');
  const config = splitAt(configField);
  if (config === null || config[0] !== 'config' || !OPTIONS_DIGEST.test(config[1])) malformed('the sixth field must be config@<config-digest>');
  const project = splitAt(rest);
  if (project === null || project[0] === '' || !OPTIONS_DIGEST.test(project[1])) malformed('the last field must be <project>@<options-digest>');
  // The checks above returned early through `malformed`; these are now known to be pairs.
  const [, typescriptVersion] = typescript as [string, string];
  const [linterName, linterVersion] = linter as [string, string];
  const [runnerName, runnerVersion] = vitest as [string, string];
  const [, configDigest] = config as [string, string];
  const [tsconfig, optionsDigest] = project as [string, string];
  return {
    digest,
    stage: stage as Stage,
    toolchain: { typescript: typescriptVersion, linter: { name: linterName, version: linterVersion }, [runnerName]: runnerVersion },
    config: configDigest,
    project: { tsconfig, optionsDigest },
  };
}
