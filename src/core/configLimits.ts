/**
 * Bounds on a config, refused beyond (docs/config.md, "Limits"). Every check's
 * globs are matched against every source path on every status, so the cost
 * grows with checks × globs × files; a config is untrusted input (a cloned
 * repository's), and without bounds one file could make each status take minutes.
 * Each bound is far above any real project's config.
 */
export const CONFIG_LIMITS = {
  /** Bytes of vouch.config.json. Real configs are a few KiB. */
  fileBytes: 1024 * 1024,
  /** Checks in one config. */
  checks: 256,
  /** Items in one list: a check's inputs, installed, env or command. */
  listItems: 1_000,
  /** Globs in the whole file, inputs and installed together. */
  globs: 10_000,
  /** Characters in one glob: Linux's PATH_MAX is 4,096 bytes, so no listed path is longer. */
  globLength: 4_096,
  /** Nesting of objects and arrays. A valid config nests four deep. */
  depth: 16,
} as const;

/**
 * Bumped whenever validation gets stricter, with the version: a config marked
 * valid by an older build is validated again (see "validated" in api/project.ts).
 */
export const CONFIG_RULES_REVISION = 2;
