/**
 * Somewhere text or a check's raw output goes: a process's stdout, a log, the
 * MCP run tool's tail. Only `write` is needed, so a command-line process can
 * write to its file descriptors without loading Node's streams.
 */
export interface Output {
  write(chunk: string | Uint8Array): unknown;
}
