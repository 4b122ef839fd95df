import { constants } from 'node:os';
import type { Socket } from 'node:net';
import { VouchError } from '../core/errors.js';
import type { CheckSpawner, SpawnOutcome } from '../exec/spawnCheck.js';

/*
 * A check started by the native client that asked a resident server to run it
 * (native/clientRun.c), over the client's connection. Frames both ways are a
 * type byte, a u32 length and the payload, little-endian: this side sends 's'
 * (the check to start), the client answers 'p' (its process group), 'f' (it
 * could not start) or 'l' (it could not open the log), then 'd' (how it
 * ended). The client writes the log itself.
 */

const FIELD_NAMES = ['executable', 'argv', 'env', 'cwd', 'log'] as const;

export function frame(type: string, payload: Buffer | string): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeUInt32LE(body.length, 1);
  return Buffer.concat([head, body]);
}

function fields(values: Record<(typeof FIELD_NAMES)[number], string>): Buffer {
  return Buffer.concat(
    FIELD_NAMES.map((name) => {
      const bytes = Buffer.from(values[name]);
      const length = Buffer.alloc(4);
      length.writeUInt32LE(bytes.length);
      return Buffer.concat([length, bytes]);
    }),
  );
}

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]));

/**
 * Starts each check in the client on `connection`, one at a time. When the
 * client is gone before the check ends, its group is killed and the run fails
 * with no receipt: nothing says how the check ended.
 */
export function clientSpawner(connection: Socket): CheckSpawner {
  return (request) =>
    new Promise<SpawnOutcome>((resolve, reject) => {
      const words = [request.executable, request.cwd, request.logPath, ...request.argv, ...Object.entries(request.env).flat()];
      // As child_process refuses them: a NUL would end a word early in the client's framing.
      if (words.some((word) => word?.includes('\0'))) return reject(new VouchError('usage', `the command of ${request.argv[0] ?? 'the check'} holds a NUL byte, which no process can be given`));
      // The log was made empty, owner-only and through no link; the client opens it the same way.
      request.log.close();
      // Gone before its check was started (a Ctrl-C while the run waited for its lock): its 'close' has passed.
      if (connection.destroyed || !connection.writable) return reject(new Error('the process that asked for this run ended before its check started'));
      let pgid: number | null = null;
      let pending = Buffer.alloc(0);
      const finish = (outcome: SpawnOutcome | Error) => {
        connection.off('data', onData);
        connection.off('close', onClose);
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      const onClose = () => {
        if (pgid !== null) {
          try {
            process.kill(-pgid, 'SIGKILL');
          } catch {
            // the group has ended
          }
        }
        // Nobody is left to read this; it ends the run without a receipt.
        finish(new Error(`the process that asked for this run ended while ${request.argv[0] ?? 'the check'} ran`));
      };
      const onData = (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        while (pending.length >= 5) {
          const length = pending.readUInt32LE(1);
          if (pending.length < 5 + length) return;
          const type = String.fromCharCode(pending[0]!);
          const payload = pending.subarray(5, 5 + length);
          pending = pending.subarray(5 + length);
          if (type === 'p' && length === 4) {
            pgid = payload.readUInt32LE(0);
            request.onGroup(pgid);
          } else if (type === 'l') {
            // Before the check started: vouch's own failure, and no receipt, as runCheck answers a log it cannot open.
            return finish(new VouchError('state-dir-not-writable', payload.toString('utf8')));
          } else if (type === 'f') {
            return finish({ exitCode: 127, signal: null, interruptedBy: null, spawnError: payload.toString('utf8'), logFailure: null });
          } else if (type === 'd' && length >= 16) {
            const code = payload.readInt32LE(0);
            const signal = SIGNAL_NAMES.get(payload.readUInt32LE(4)) ?? null;
            const interruptedBy = SIGNAL_NAMES.get(payload.readUInt32LE(8)) ?? null;
            const why = payload.subarray(16, 16 + payload.readUInt32LE(12)).toString('utf8');
            return finish({ exitCode: code < 0 ? null : code, signal, interruptedBy, spawnError: null, logFailure: why === '' ? null : why });
          } else {
            connection.destroy();
            return;
          }
        }
      };
      connection.on('data', onData);
      connection.on('close', onClose);
      const env = Object.entries(request.env)
        .filter((entry): entry is [string, string] => entry[1] !== undefined)
        .map(([key, value]) => `${key}=${value}\0`)
        .join('');
      connection.write(frame('s', fields({ executable: request.executable, argv: request.argv.map((word) => `${word}\0`).join(''), env, cwd: request.cwd, log: request.logPath })));
    });
}
