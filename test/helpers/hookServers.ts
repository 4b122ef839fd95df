import { readdirSync, readFileSync } from 'node:fs';

/** The pids of resident hook servers (`… hook serve SOCKET`) whose socket is under dir. */
export function hookServersUnder(dir: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      const at = argv.indexOf('serve');
      if (at > 0 && argv[at - 1] === 'hook' && argv[at + 1]?.startsWith(dir)) found.push(Number(name));
    } catch {
      // gone
    }
  }
  return found;
}

export function killHookServers(dir: string): void {
  for (const pid of hookServersUnder(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
