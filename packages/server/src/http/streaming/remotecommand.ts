/**
 * The Kubernetes remote-command protocols over one WebSocket (what kubelet's
 * `cri/streaming/remotecommand` and kube-apiserver's stream translator speak for `exec` and
 * `attach`):
 *
 * - every message carries one channel: 0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize; in the
 *   binary protocols the first byte is the channel, in the `base64.` ones the first character is
 *   `'0' + channel` and the rest is base64 text;
 * - `v4.` and `v5.` write the outcome on the error channel as a JSON `Status` (exit codes in
 *   `details.causes` of reason `ExitCode`); the older ones write only a failure's message text;
 * - `v5.channel.k8s.io` lets the client close one of its streams (stdin) with the message
 *   `[255, channel]`, which `kubectl cp` needs to end the archive it sends;
 * - once the connection is set up, an empty message goes out on the lowest output channel the
 *   client asked for, which clients wait for.
 */
import { ApiError } from 'kubeloop/api';
import type { ExecOutcome, Stdin } from '../../controllers/kubelet/shell.js';
import type { WebSocketConnection } from './websocket.js';

/** The subprotocols of exec and attach, `''` for a client that names none (read as `channel.k8s.io`). */
export const REMOTE_COMMAND_PROTOCOLS = [
  'v5.channel.k8s.io',
  'v4.channel.k8s.io',
  'v4.base64.channel.k8s.io',
  'channel.k8s.io',
  'base64.channel.k8s.io',
  '',
] as const;

/** The channel numbers. */
export const Channel = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4 } as const;
/** v5: a client message `[STREAM_CLOSE, channel]` closes that channel. */
const STREAM_CLOSE = 255;

/** Which streams the client asked for (the `stdin`, `stdout`, `stderr`, `tty` query parameters). */
export interface StreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** Bytes a client sent on one channel, queued until read; an async iterable until closed. */
class ChunkQueue implements Stdin {
  private readonly queue: Buffer[] = [];
  private ended = false;
  private wake: (() => void) | undefined;

  push(b: Buffer): void {
    if (this.ended) return;
    this.queue.push(b);
    this.wake?.();
  }
  end(): void {
    this.ended = true;
    this.wake?.();
  }
  async *chunks(): AsyncIterable<Buffer> {
    for (;;) {
      const next = this.queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }
  async readAll(): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const c of this.chunks()) parts.push(c);
    return Buffer.concat(parts);
  }
}

/**
 * One exec or attach session on an accepted WebSocket: output channels out, stdin and resize in,
 * and the final status.
 */
export class RemoteCommandSession {
  /** What the client writes on stdin (ends when it closes stdin or the connection). */
  readonly stdin: Stdin;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  private readonly input = new ChunkQueue();
  private readonly abort = new AbortController();
  private readonly base64: boolean;
  private readonly versioned: boolean;

  constructor(
    private readonly ws: WebSocketConnection,
    readonly options: StreamOptions,
  ) {
    this.stdin = this.input;
    this.signal = this.abort.signal;
    this.base64 = ws.protocol.includes('base64');
    this.versioned = ws.protocol.startsWith('v4.') || ws.protocol.startsWith('v5.');
    const closable = ws.protocol === 'v5.channel.k8s.io';
    ws.on('message', (data) => {
      if (data.length === 0) return;
      if (closable && data[0] === STREAM_CLOSE) {
        if (data.length === 2 && data[1] === Channel.stdin) this.input.end();
        return;
      }
      let channel = data[0]!;
      let payload = data.subarray(1);
      if (this.base64) {
        channel -= 0x30;
        payload = Buffer.from(payload.toString('latin1'), 'base64');
      }
      if (channel === Channel.stdin && options.stdin) this.input.push(payload);
      // Resize events (channel 4) have no effect on a simulated terminal.
    });
    ws.on('close', () => {
      this.input.end();
      this.abort.abort();
    });
    if (!options.stdin) this.input.end();
    // Tell the client the streams are set up (it waits for this first message).
    this.write(
      options.stdout ? Channel.stdout : options.stderr ? Channel.stderr : Channel.error,
      Buffer.alloc(0),
    );
  }

  /** The protocol the client chose. */
  get protocol(): string {
    return this.ws.protocol;
  }

  /** Writes on an output channel; stderr goes to stdout with a TTY, and unrequested streams are dropped. */
  write(channel: number, data: Buffer | string): void {
    let ch = channel;
    if (ch === Channel.stderr && this.options.tty) ch = Channel.stdout;
    if (ch === Channel.stdout && !this.options.stdout) return;
    if (ch === Channel.stderr && !this.options.stderr) return;
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (this.base64) this.ws.send(String.fromCharCode(0x30 + ch) + bytes.toString('base64'), false);
    else this.ws.send(Buffer.concat([Buffer.from([ch]), bytes]));
  }

  /**
   * Writes the outcome on the error channel (the JSON Status of v4/v5, or a failure's message
   * in the older protocols), then closes the connection.
   */
  finish(outcome: ExecOutcome | ApiError, command: string[] = []): void {
    const status = statusOf(outcome, command, this.ws.protocol);
    if (this.versioned) this.write(Channel.error, JSON.stringify(status));
    else if (status.status !== 'Success') this.write(Channel.error, String(status.message ?? ''));
    this.ws.close(1000);
  }
}

/** The Status an exec's outcome is reported with, as kubelet and the apiserver's translator word it. */
export function statusOf(
  outcome: ExecOutcome | ApiError,
  command: string[],
  protocol: string,
): Record<string, unknown> {
  if (outcome instanceof ApiError) {
    const { kind: _k, apiVersion: _a, ...status } = outcome.status;
    return status;
  }
  if ('startError' in outcome) {
    // containerd's CRI streaming server: the runtime could not start the program.
    const id = Buffer.from(command.join('\0')).toString('hex').padEnd(64, '0').slice(0, 64);
    const {
      kind: _k,
      apiVersion: _a,
      ...status
    } = ApiError.internal(
      `error executing command in container: failed to exec in container: failed to start exec "${id}": ${outcome.startError}`,
    ).status;
    return status;
  }
  if (outcome.exitCode === 0) return { metadata: {}, status: 'Success' };
  // kubelet words the error as containerd reports it; kube-apiserver's v5 translator re-wraps
  // what its SPDY client decoded from kubelet's v4 status.
  const inner =
    protocol === 'v5.channel.k8s.io'
      ? `command terminated with exit code ${outcome.exitCode}`
      : `error executing command [${command.join(' ')}], exit code ${outcome.exitCode}`;
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: ${inner}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(outcome.exitCode) }] },
  };
}
