/*
 * What a task runner (turbo, nx) is configured to do around a workspace
 * package's script, as far as it decides whether a command through it runs
 * exactly that script and nothing else. Pure: exec/readTaskRunners.ts reads it.
 */

export interface TaskRunnerTask {
  /**
   * The tasks that run before (or, for turbo's "with", beside) this one:
   * turbo's "dependsOn" and "with" (https://turborepo.com/docs/reference/configuration#dependson),
   * nx's targetDefaults "dependsOn" (https://nx.dev/reference/nx-json#target-defaults),
   * and for nx a note when the default sets an executor, command or options.
   * Non-empty: the runner runs other tasks too, or runs this one otherwise.
   */
  dependsOn: string[];
}

export interface TaskRunnerConfig {
  /** Tasks by name as the root file declares them: "test", and turbo's "a#test" and "//#test" keys as they are. */
  tasks: Record<string, TaskRunnerTask>;
  /** Packages whose task the runner may configure otherwise: their own turbo.json / project.json / package.json "nx", or a turbo "a#task" key; "//" for turbo's root tasks. */
  overridden: string[];
  /**
   * Why nothing run through this runner can be told exactly (a malformed or
   * oversized file, an nx plugin that may infer targets); absent when it can.
   */
  blocked?: string;
}

/** A config through which no command resolves, with the reason. */
export function blockedConfig(why: string): TaskRunnerConfig {
  return { tasks: {}, overridden: [], blocked: why };
}
