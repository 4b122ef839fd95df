import { locateProject, type ProjectPlace } from '../api/project.js';
import { writeJson, type CliIo } from './io.js';
import { parseCommand } from './options.js';

/** A command that only reaches the running observer ("vouch observer", "vouch stop"): one question, one report. */
export interface ObserverControl<Answer> {
  ask(place: ProjectPlace, env: NodeJS.ProcessEnv): Promise<Answer>;
  /** The --json document (src/core/json/). */
  json(answer: Answer): { schema: 1 };
  text(answer: Answer): string;
}

export async function runObserverControl<Answer>(command: string, argv: string[], io: CliIo, control: ObserverControl<Answer>): Promise<number> {
  const { values } = parseCommand(command, argv, {});
  // Only where the observer is, not the whole project: it can be reported on and stopped even
  // when the root is gone or the config's checks are broken.
  const place = locateProject({ cwd: io.cwd, config: values.config, stateDir: values['state-dir'], root: values.root });
  const answer = await control.ask(place, io.env);
  if (values.json) writeJson(io, control.json(answer));
  else io.stdout.write(control.text(answer));
  return 0;
}
