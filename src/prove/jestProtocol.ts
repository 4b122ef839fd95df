/** The messages between the Jest stage and its host process (src/prove/jestHost.ts), over Node's IPC channel. */

export interface JestLoad {
  kind: 'load';
  workspace: string;
  /** The workspace's `jest` package entry (its `require` condition), which exports `runCLI`. */
  entry: string;
  /** A private directory for Jest's transform and haste-map caches, never inside the workspace. */
  cacheDirectory: string;
  /** vouch's resolver module, put before the workspace's own resolver. */
  resolver: string;
}

export interface JestRun {
  kind: 'run';
  id: number;
  /** Absolute path → text: the drafts and the test at its fresh path. */
  files: Array<[string, string]>;
  test: string;
  /** The test's declared path, absolute: asked about when Jest does not run the fresh one. */
  declared: string;
}

export type JestRequest = JestLoad | JestRun;

/** An error as Jest reported it, reduced to what can cross the channel. */
export interface JestError {
  name?: string;
  message: string;
  stack?: string;
}

export interface JestTest {
  fullName: string;
  status: string;
  failures: JestError[];
}

/** What Jest said about the test file, or why it said nothing. */
export interface JestOutcome {
  /** Whether Jest ran the file at all (its config's testMatch, testRegex and ignore patterns admit it). */
  found: boolean;
  /** When not found: whether the config admits the declared path (a pattern naming the file exactly). */
  declaredAdmitted?: boolean;
  /** The suite could not run: a module that does not load, no tests declared. */
  execError?: JestError;
  tests: JestTest[];
  /** An error of the whole run, outside any test file. */
  runError?: string;
}

export type JestReply =
  | { kind: 'loaded' }
  | { kind: 'progress' }
  | { kind: 'result'; id: number; outcome: JestOutcome }
  | { kind: 'failed'; id?: number; origin: 'workspace' | 'instrument'; message: string };
