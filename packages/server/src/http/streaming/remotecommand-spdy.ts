/**
 * The remote-command session over SPDY/3.1 (kubelet's `remotecommand/httpstream.go`, what
 * client-go's `NewSPDYExecutor` speaks and kubectl falls back to when WebSockets fail):
 *
 * - the protocol is negotiated with `X-Stream-Protocol-Version` (`v4.channel.k8s.io`,
 *   `v3.channel.k8s.io`, `v2.channel.k8s.io`, `channel.k8s.io`);
 * - the client opens one stream per channel, named by its `streamType` header (`error`, `stdin`,
 *   `stdout`, `stderr`, and `resize` for a TTY from v3 on); the session starts once every stream
 *   the query asked for is there, or the connection is dropped after the stream creation timeout;
 * - v4 writes the outcome on the error stream as a JSON Status, v1–v3 a failure's text (v1's error
 *   stream is reset once the streams are set up, as 1.0 kubelets did, so it carries nothing);
 * - the client half-closes stdin to end the program's input; at the end every stream is closed
 *   and the connection goes away with GOAWAY.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { finished } from 'node:stream/promises';
import { Channel, RemoteCommandSession, type StreamOptions } from './remotecommand.js';
import { SPDY_UPGRADE, SpdySession, type SpdyStream } from './spdy.js';
import { rejectUpgrade } from './websocket.js';

/** The protocols kubelet's SPDY remote-command server speaks, in its order of preference. */
export const SPDY_REMOTE_COMMAND_PROTOCOLS = [
  'v4.channel.k8s.io',
  'v3.channel.k8s.io',
  'v2.channel.k8s.io',
  'channel.k8s.io',
] as const;

/** How long the client may take to open its streams (kubelet's DefaultStreamCreationTimeout). */
export const STREAM_CREATION_TIMEOUT_MS = 30_000;

const HEADER_PROTOCOL = 'X-Stream-Protocol-Version';

/** Whether a request asks for a SPDY/3.1 upgrade. */
export function isSpdyRequest(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase() === SPDY_UPGRADE.toLowerCase();
}

/**
 * httpstream.Handshake: the protocol both sides know, or the refusal already written (400 for a
 * request that offers none, 403 with the accepted list when nothing matches).
 */
export function negotiateSpdyProtocol(req: IncomingMessage, socket: Duplex): string | undefined {
  const offered = [req.headers[HEADER_PROTOCOL.toLowerCase()] ?? '']
    .flat()
    .flatMap((v) => v.split(','))
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (offered.length === 0) {
    rejectUpgrade(socket, 400, `unable to upgrade: ${HEADER_PROTOCOL} is required\n`, PLAIN);
    return undefined;
  }
  const chosen = offered.find((p) => (SPDY_REMOTE_COMMAND_PROTOCOLS as readonly string[]).includes(p));
  if (chosen) return chosen;
  const message = `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${SPDY_REMOTE_COMMAND_PROTOCOLS.join(' ')}]\n`;
  // Handshake answers 403; the caller's own http.Error then appends the message once more to
  // the body it can no longer change the status of.
  rejectUpgrade(socket, 403, message + message, {
    ...PLAIN,
    'X-Accepted-Stream-Protocol-Versions': SPDY_REMOTE_COMMAND_PROTOCOLS.join(', '),
  });
  return undefined;
}

const PLAIN = { 'X-Content-Type-Options': 'nosniff' };

/**
 * Upgrades the connection to SPDY with the negotiated protocol and waits for the client's streams.
 *
 * @param upgrade the socket and first bytes of the upgrade request
 * @param protocol what {@link negotiateSpdyProtocol} chose
 * @param options the streams the query asked for (kubelet's NewOptions: no stderr with a TTY)
 * @returns the session once every expected stream is open, or undefined when the client did not
 *   open them in time or went away first
 */
export function acceptSpdyRemoteCommand(
  upgrade: { socket: Duplex; head: Buffer },
  protocol: string,
  options: StreamOptions,
  timeoutMs: number = STREAM_CREATION_TIMEOUT_MS,
): Promise<RemoteCommandSession | undefined> {
  const { socket, head } = upgrade;
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${SPDY_UPGRADE}\r\n${HEADER_PROTOCOL}: ${protocol}\r\n\r\n`,
  );
  (socket as Duplex & { setNoDelay?(b: boolean): void }).setNoDelay?.(true);
  (socket as Duplex & { setTimeout?(ms: number): void }).setTimeout?.(0);
  if (head.length > 0) socket.unshift(head);
  const spdy = new SpdySession(socket);

  const resizable = protocol === 'v4.channel.k8s.io' || protocol === 'v3.channel.k8s.io';
  const expected =
    1 +
    Number(options.stdin) +
    Number(options.stdout) +
    Number(options.stderr) +
    Number(options.tty && resizable);
  const streams = new Map<string, SpdyStream>();
  let received = 0;

  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      // kubelet gives up on the session ("timed out waiting for client to create streams") and
      // leaves the connection to its idle timeout; nothing can happen on it, so it goes now.
      spdy.off('stream', onStream);
      spdy.close();
      resolve(undefined);
    }, timeoutMs);
    timer.unref();
    spdy.once('close', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    const onStream = (stream: SpdyStream) => {
      stream.on('error', () => {});
      stream.reply();
      const type = stream.header('streamtype');
      if (
        !['error', 'stdin', 'stdout', 'stderr', 'resize'].includes(type) ||
        (type === 'resize' && !resizable)
      ) {
        // kubelet logs "unexpected stream type" and leaves the stream be.
        stream.resume();
        return;
      }
      streams.set(type, stream);
      if (++received < expected) return;
      clearTimeout(timer);
      spdy.off('stream', onStream);
      resolve(startSession(spdy, streams, protocol, options));
    };
    spdy.on('stream', onStream);
  });
}

function startSession(
  spdy: SpdySession,
  streams: Map<string, SpdyStream>,
  protocol: string,
  options: StreamOptions,
): RemoteCommandSession {
  const error = streams.get('error');
  // v1 (kubelet 1.0): the error stream is reset once the streams are set up.
  if (protocol === 'channel.k8s.io') error?.reset();
  const out: Record<number, SpdyStream | undefined> = {
    [Channel.stdout]: streams.get('stdout'),
    [Channel.stderr]: streams.get('stderr'),
    [Channel.error]: protocol === 'channel.k8s.io' ? undefined : error,
  };
  const writable = (s: SpdyStream | undefined): s is SpdyStream =>
    s !== undefined && !s.destroyed && !s.writableEnded;
  const session = new RemoteCommandSession(
    {
      protocol,
      statusAsJson: protocol === 'v4.channel.k8s.io',
      write(channel, bytes) {
        const s = out[channel];
        if (writable(s) && bytes.length > 0) s.write(bytes);
      },
      close() {
        // kubelet closes the connection when the command is done: every stream ends, then GOAWAY
        // once what was written (a large `kubectl cp` archive may wait on the socket) is sent.
        const ending = [...streams.values()].filter(writable).map((s) => {
          s.end();
          return finished(s, { readable: false }).catch(() => undefined);
        });
        void Promise.all(ending).then(() => spdy.close());
      },
    },
    options,
  );
  const stdin = streams.get('stdin');
  if (stdin && options.stdin) {
    stdin.on('data', (chunk: Buffer) => session.receive(Channel.stdin, chunk));
    stdin.on('end', () => session.closeInput(Channel.stdin));
  } else stdin?.resume();
  const resize = streams.get('resize');
  resize?.on('data', (chunk: Buffer) => session.receive(Channel.resize, chunk));
  // What the client writes on the error and output streams means nothing; read it away.
  for (const type of ['error', 'stdout', 'stderr']) streams.get(type)?.resume();
  spdy.once('close', () => session.disconnected());
  return session;
}
