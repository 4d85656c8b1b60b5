/**
 * The Kubernetes remote-command session of `exec` and `attach`, independent of the transport that
 * carries it (kubelet's `cri/streaming/remotecommand`):
 *
 * - five channels: 0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize — WebSocket messages tagged
 *   with the channel (./remotecommand-websocket.ts), or SPDY streams of that `streamType`
 *   (./remotecommand-spdy.ts);
 * - `v4.` and `v5.` write the outcome on the error channel as a JSON `Status` (exit codes in
 *   `details.causes` of reason `ExitCode`); the older ones write only a failure's message text;
 * - the resize channel carries JSON `{"Width":..,"Height":..}` terminal sizes, one after another;
 * - stdin ends when the client closes it (SPDY half-close, v5's close message) or goes away.
 */
import { ApiError } from 'kubeloop/api';
import type { ExecOutcome, Stdin } from '../../controllers/kubelet/shell.js';

/**
 * The WebSocket subprotocols of exec and attach, `''` for a client that names none (read as
 * `channel.k8s.io`).
 */
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

/** A terminal size the client sent on the resize channel (client-go's `TerminalSize`). */
export interface TerminalSize {
  width: number;
  height: number;
}

/** How a {@link RemoteCommandSession} reaches its client: one accepted WebSocket or SPDY connection. */
export interface RemoteCommandTransport {
  /** The protocol negotiated with the client (WebSocket subprotocol or `X-Stream-Protocol-Version`). */
  readonly protocol: string;
  /** Whether the error channel carries a JSON Status (v4, v5) rather than a failure's text. */
  readonly statusAsJson: boolean;
  /** Sends bytes on an output channel (stdout, stderr or error). */
  write(channel: number, data: Buffer): void;
  /** Ends the connection once the outcome is written. */
  close(): void;
}

/**
 * One exec or attach session: output channels out, stdin and resize in, and the final status.
 * The transport feeds what the client sends through {@link receive}, {@link closeInput} and
 * {@link disconnected}.
 */
export class RemoteCommandSession {
  /** What the client writes on stdin (ends when it closes stdin or the connection). */
  readonly stdin: Stdin;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /** The last terminal size the client sent (TTY sessions), if any. */
  terminalSize: TerminalSize | undefined;
  /** Told each terminal size the client sends (a process given a real terminal follows them). */
  private readonly resizeListeners: Array<(size: TerminalSize) => void> = [];
  private readonly input = new ChunkQueue();
  private readonly abort = new AbortController();
  private resizeText = '';
  private finished = false;

  constructor(
    private readonly transport: RemoteCommandTransport,
    readonly options: StreamOptions,
  ) {
    this.stdin = this.input;
    this.signal = this.abort.signal;
    if (!options.stdin) this.input.end();
  }

  /** Calls `listener` with each terminal size the client sends from now on. */
  onResize(listener: (size: TerminalSize) => void): void {
    this.resizeListeners.push(listener);
  }

  /** The protocol the client chose. */
  get protocol(): string {
    return this.transport.protocol;
  }

  /** Bytes the client sent on an input channel (stdin, resize); others are ignored as kubelet does. */
  receive(channel: number, payload: Buffer): void {
    if (channel === Channel.stdin && this.options.stdin) this.input.push(payload);
    else if (channel === Channel.resize) this.resized(payload);
  }

  /** The client closed an input channel: for stdin, the end of the program's input. */
  closeInput(channel: number): void {
    if (channel === Channel.stdin) this.input.end();
  }

  /** The connection went away: input ends and the program is told through {@link signal}. */
  disconnected(): void {
    this.input.end();
    this.abort.abort();
  }

  /** Writes on an output channel; stderr goes to stdout with a TTY, and unrequested streams are dropped. */
  write(channel: number, data: Buffer | string): void {
    if (this.finished) return;
    let ch = channel;
    if (ch === Channel.stderr && this.options.tty) ch = Channel.stdout;
    if (ch === Channel.stdout && !this.options.stdout) return;
    if (ch === Channel.stderr && !this.options.stderr) return;
    this.transport.write(ch, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  }

  /**
   * Writes the outcome on the error channel (the JSON Status of v4/v5, or a failure's message
   * in the older protocols), then closes the connection.
   */
  finish(outcome: ExecOutcome | ApiError, command: string[] = []): void {
    if (this.finished) return;
    const status = statusOf(outcome, command, this.transport.protocol);
    if (this.transport.statusAsJson) this.transport.write(Channel.error, Buffer.from(JSON.stringify(status)));
    else if (status.status !== 'Success')
      this.transport.write(Channel.error, Buffer.from(String(status.message ?? '')));
    this.finished = true;
    this.transport.close();
  }

  /**
   * The resize channel: a sequence of JSON objects (Go's json.Decoder on the stream), so a
   * message may hold several sizes or part of one.
   */
  private resized(payload: Buffer): void {
    this.resizeText += payload.toString('utf8');
    for (;;) {
      const text = this.resizeText.trimStart();
      const end = jsonObjectEnd(text);
      if (end < 0) {
        this.resizeText = text;
        return;
      }
      this.resizeText = text.slice(end);
      try {
        const size = JSON.parse(text.slice(0, end)) as { Width?: unknown; Height?: unknown };
        this.terminalSize = { width: Number(size.Width ?? 0), height: Number(size.Height ?? 0) };
        for (const l of this.resizeListeners) l(this.terminalSize);
      } catch {
        // kubelet's decoder stops at the first malformed size; later ones are ignored.
        this.resizeText = '';
        return;
      }
    }
  }
}

/** The length of the first complete JSON object at the start of text, or -1 while incomplete. */
function jsonObjectEnd(text: string): number {
  if (!text.startsWith('{')) return text.length === 0 ? -1 : text.length;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i + 1;
  }
  return -1;
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
