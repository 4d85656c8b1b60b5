/** Where a watch's events go (see {@link WatchSink}). */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Where a watch's events go: a chunked HTTP response, or a WebSocket (one message per event). */
export interface WatchSink {
  /** Starts the stream (the 200 and its headers, or the WebSocket handshake). */
  start(): void;
  /** Writes whole events, each ending with a newline. */
  write(chunk: string | Buffer): void;
  /** Ends the stream (idempotent). */
  end(): void;
  /** Drops the connection (a client that does not keep up). */
  destroy(): void;
  /** Called once when the connection is over, whoever ended it. */
  onClose(listener: () => void): void;
  /** Bytes queued and not yet sent. */
  readonly buffered: number;
  /** Sends what is queued now (a chunked response is corked until the next tick). */
  flushNow(): void;
  /** Resolves when more output may be queued, or the stream closed. */
  drained(): Promise<void>;
}

/**
 * The watch stream as a chunked HTTP response of newline-delimited events.
 *
 * Events are sent once per turn of the event loop, not once per tick: Node corks a response only
 * until the next tick, which comes before the answer of the request that made the change (it
 * awaits its write), so every write paid a watch's TLS record and `write(2)` per event first,
 * and a client watching what it writes read the event before the answer it waited for. Held to
 * the end of the turn (`setImmediate`), the events of a busy turn leave in one write, after the
 * answers.
 */
export function httpWatchSink(res: ServerResponse): WatchSink {
  let held: Socket | undefined;
  const release = () => {
    const socket = held;
    held = undefined;
    socket?.uncork();
  };
  return {
    start() {
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Cache-Control': 'no-cache, private',
        'Transfer-Encoding': 'chunked',
      });
      res.flushHeaders();
    },
    write(chunk) {
      const socket = res.socket as Socket | null;
      if (!held && socket && !socket.destroyed) {
        held = socket;
        socket.cork();
        setImmediate(release);
      }
      res.write(chunk);
    },
    end() {
      release();
      if (!res.writableEnded) res.end();
    },
    destroy() {
      held = undefined;
      res.destroy();
    },
    onClose: (listener) => void res.on('close', listener),
    get buffered() {
      return res.writableLength;
    },
    flushNow() {
      release();
      (res.socket as Socket | null)?.uncork();
    },
    drained: () => drained(res),
  };
}

/** Resolves when `res` can take more output, or has closed. */
function drained(res: ServerResponse): Promise<void> {
  if (res.destroyed || res.writableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
