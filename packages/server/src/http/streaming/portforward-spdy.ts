/**
 * The kubelet's port-forward over SPDY (pkg/kubelet/cri/streaming/portforward/httpstream.go):
 * for each local connection kubectl opens two streams, `streamtype: error` then
 * `streamtype: data`, with the same `port` and `requestid` headers. Once both are there the
 * connection is forwarded; a failure is written on the error stream, which is then closed, and the
 * data stream after it.
 */
import type { Obj } from '../../util/object.js';
import { forwardConnection, type PortForwardTarget } from './portforward-target.js';
import type { SpdySession, SpdyStream } from './spdy.js';

/** How long the second stream of a pair may take (the kubelet's default stream creation timeout). */
export const STREAM_CREATION_TIMEOUT_MS = 30_000;

interface StreamPair {
  requestId: string;
  error?: SpdyStream;
  data?: SpdyStream;
  timer?: NodeJS.Timeout;
}

/**
 * Serves port-forward streams on a SPDY session until it closes.
 *
 * @param session the server side of the upgraded (or tunnelled) connection
 * @param pod the pod forwarded to
 * @param target where each connection goes
 */
export function serveSpdyPortForward(
  session: SpdySession,
  pod: Obj,
  target: PortForwardTarget,
  options: { streamCreationTimeoutMs?: number } = {},
): void {
  const pairs = new Map<string, StreamPair>();
  const timeoutMs = options.streamCreationTimeoutMs ?? STREAM_CREATION_TIMEOUT_MS;

  const remove = (p: StreamPair) => {
    clearTimeout(p.timer);
    if (pairs.get(p.requestId) === p) pairs.delete(p.requestId);
  };

  session.on('stream', (stream) => {
    // httpStreamReceived: a stream with bad headers is reset instead of replied to.
    if (!validStream(stream)) {
      stream.reset();
      return;
    }
    stream.reply();
    const requestId = requestIdOf(stream);
    let pair = pairs.get(requestId);
    if (!pair) {
      const created: StreamPair = { requestId };
      created.timer = setTimeout(() => {
        created.error?.end(`(conn=${connName}, request=${requestId}) timed out waiting for streams`);
        remove(created);
      }, timeoutMs);
      created.timer.unref();
      pairs.set(requestId, created);
      pair = created;
    }
    const type = stream.header('streamtype');
    if (pair[type as 'error' | 'data']) {
      pair.error?.write(`error processing stream for request ${requestId}: ${type} stream already assigned`);
      stream.resume();
      return;
    }
    if (type === 'error') {
      pair.error = stream;
      // Nothing is read from an error stream; kubectl half-closes it at once.
      stream.resume();
    } else pair.data = stream;
    if (pair.error && pair.data) {
      remove(pair);
      void forwardPair(pair as Required<StreamPair>, pod, target);
    }
  });

  session.on('close', () => {
    for (const p of pairs.values()) clearTimeout(p.timer);
    pairs.clear();
  });
}

// Go prints the connection pointer here; there is no such thing to print.
const connName = 'spdy';

async function forwardPair(p: Required<StreamPair>, pod: Obj, target: PortForwardTarget): Promise<void> {
  const port = Number(p.data.header('port'));
  const { error, data } = p;
  error.on('error', () => {});
  data.on('error', () => {});
  await forwardConnection({
    target,
    pod,
    port,
    data,
    reportError: (message) => {
      if (!error.destroyed && !error.writableEnded) error.write(message);
    },
  });
  // As the kubelet's deferred closes: the error stream first, then the data stream.
  if (!error.destroyed && !error.writableEnded) error.end();
  if (!data.destroyed && !data.writableEnded) data.end();
}

/** The stream checks of the kubelet's httpStreamReceived. */
function validStream(stream: SpdyStream): boolean {
  const port = stream.header('port');
  if (!/^[0-9]+$/.test(port) || Number(port) < 1 || Number(port) > 0xffff) return false;
  const type = stream.header('streamtype');
  return type === 'error' || type === 'data';
}

/**
 * The pair a stream belongs to: its `requestid`, or for clients too old to send one, a number
 * derived from the stream id as the kubelet does (error stream N and data stream N+2).
 */
function requestIdOf(stream: SpdyStream): string {
  const id = stream.header('requestid');
  if (id !== '') return id;
  return String(stream.header('streamtype') === 'error' ? stream.id : stream.id - 2);
}
