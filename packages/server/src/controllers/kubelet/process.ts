/**
 * What a program of a simulated container sees: its standard input, its output, its container
 * (filesystem, environment, hostname) — the interface between the runtime, the programs and
 * the shell.
 */

import type { ContainerFs } from './vfs.js';
import { FsError } from './vfs.js';

/** The standard input of a process: its chunks until the client closes it. */
export interface Stdin {
  /** Reads everything until end of input. */
  readAll(): Promise<Buffer>;
  /** The chunks as they arrive. */
  chunks(): AsyncIterable<Buffer>;
}

/** An input with nothing in it (exec without `-i`). */
export const EMPTY_STDIN: Stdin = {
  readAll: () => Promise.resolve(Buffer.alloc(0)),
  chunks: async function* () {},
};

/** A stdin made of one buffer. */
export function bufferStdin(data: Buffer): Stdin {
  return {
    readAll: () => Promise.resolve(data),
    chunks: async function* () {
      if (data.length > 0) yield data;
    },
  };
}

/** Where a process's output goes. */
export interface ProcessIO {
  stdin: Stdin;
  stdout(data: Buffer | string): void;
  stderr(data: Buffer | string): void;
}

/** What a process sees of its container. */
export interface ProcessContext {
  fs: ContainerFs;
  /** Environment, in the order `env` prints it. */
  env: Map<string, string>;
  hostname: string;
  cwd: string;
  /** Writes to the container's main process output (`/proc/1/fd/1`, `/proc/1/fd/2`): its logs. */
  containerOutput(stream: 'stdout' | 'stderr', data: Buffer): void;
  /** Aborted when the exec's client goes away. */
  signal: AbortSignal;
  /** Whether stdin and stdout are a terminal (`kubectl exec -t`): a shell then prompts and echoes. */
  tty?: boolean;
}

/** How an exec ended: an exit code, or the runtime could not start the program. */
export type ExecOutcome = { exitCode: number } | { startError: string };

/** A program on the simulated image's PATH: its exit code once done. */
export type Program = (args: string[], ctx: ProcessContext, io: ProcessIO) => Promise<number>;

/** `exit N` (or a fatal shell error) unwinding a script. */
export class ExitSignal {
  constructor(readonly code: number) {}
}

/** The message of a filesystem error, as the named tool prints it (other errors are rethrown). */
export function fsMessage(tool: string, err: unknown, path: string): string {
  if (err instanceof FsError) return `${tool}: ${path}: ${err.reason}\n`;
  throw err;
}
