/**
 * `pods/portforward`: what kube-apiserver checks before it proxies the upgrade to the pod's
 * kubelet, then the kubelet's side of the three ways clients speak port-forward:
 * - SPDY/3.1 (`Upgrade: SPDY/3.1`, `X-Stream-Protocol-Version: portforward.k8s.io`): kubectl's
 *   fallback, streams paired by `requestid` (./portforward-spdy.ts);
 * - SPDY tunnelled in WebSocket binary messages (subprotocol `SPDY/3.1+portforward.k8s.io`):
 *   kubectl 1.30+'s first choice, the same SPDY session over another byte stream;
 * - the WebSocket channel protocol (`v4.channel.k8s.io`, `v4.base64.channel.k8s.io`): the Python
 *   client and client-node (./portforward-websocket.ts).
 *
 * Where a forwarded connection goes is pluggable ({@link PortForwardTarget}). A simulated pod has
 * no process behind it, so the default target answers as containerd does for a port nothing
 * listens on, and clients print what they print against a real cluster.
 */
import type { ServerResponse } from 'node:http';
import { Duplex } from 'node:stream';
import { ApiError } from 'kubeloop/api';
import type { Obj } from '../../util/object.js';
import type { ConnectHandler, ConnectRequest } from '../handlers/connect.js';
import type { StreamingDeps } from './deps.js';
import { getPod } from './pod-target.js';
import { serveSpdyPortForward } from './portforward-spdy.js';
import { type PortForwardTarget, simulatedPortForwardTarget } from './portforward-target.js';
import { serveWebSocketPortForward } from './portforward-websocket.js';
import { SPDY_UPGRADE, SpdySession } from './spdy.js';

export {
  forwardConnection,
  forwardErrorMessage,
  networkNamespaceOf,
  type PortForwardConnection,
  type PortForwardTarget,
  sandboxIdOf,
  simulatedPortForwardTarget,
} from './portforward-target.js';

import {
  acceptWebSocket,
  isWebSocketRequest,
  offeredProtocols,
  type WebSocketConnection,
} from './websocket.js';

const PORTFORWARD_PROTOCOL = 'portforward.k8s.io';
const TUNNEL_PROTOCOL = `${SPDY_UPGRADE}+${PORTFORWARD_PROTOCOL}`;

/**
 * The handler of `GET|POST /api/v1/namespaces/{ns}/pods/{name}/portforward`: the API server's
 * checks (query, pod, node, upgrade), the kubelet's (pod running, ports of a WebSocket request),
 * then the upgrade to SPDY, SPDY-in-WebSocket or the WebSocket channel protocol.
 *
 * @param deps the control plane's streaming dependencies; `deps.portForward` is the target
 *   (default {@link simulatedPortForwardTarget})
 */
export function portForwardHandler(deps: StreamingDeps): ConnectHandler {
  const target = deps.portForward ?? simulatedPortForwardTarget;
  return async (r) => {
    const { req, res, upgrade, query } = r;
    // The API server decodes PodPortForwardOptions from the query first (`ports`, comma-separated).
    const ports = parsePortsOption(query.getAll('ports'));
    const pod = getPod(deps.rest, deps.registry, r.namespace, r.name) as Obj;
    const node = ((pod.spec ?? {}) as Obj).nodeName as string | undefined;
    if (!node) throw ApiError.badRequest(`pod ${r.name} does not have a host assigned`);
    if (!upgrade) {
      req.resume();
      throw ApiError.badRequest('Upgrade request required');
    }
    // As for exec and attach: a node no simulated kubelet serves has nobody to forward.
    if (!deps.hasKubelet(node))
      throw ApiError.internal(`error dialing backend: no kubelet serves node "${node}"`);
    servePortForward(req, res, upgrade, ports, pod, target);
  };
}

function servePortForward(
  req: ConnectRequest['req'],
  res: ServerResponse,
  upgrade: NonNullable<ConnectRequest['upgrade']>,
  ports: { port: number; raw: string }[],
  pod: Obj,
  target: PortForwardTarget,
): void {
  const meta = (pod.metadata ?? {}) as Obj;
  const status = (pod.status ?? {}) as Obj;
  const { socket, head } = upgrade;
  const websocket = isWebSocketRequest(req);
  const tunnel = websocket && offeredProtocols(req).some((p) => p.startsWith(`${SPDY_UPGRADE}+`));

  // From here on the kubelet answers: plain text, relayed by the API server as it came.
  if (websocket && !tunnel) {
    const zero = ports.find((p) => p.port === 0);
    if (ports.length === 0 || zero) {
      kubeletError(res, 400, zero ? `port "${zero.raw}" must be > 0` : 'query parameter "port" is required');
      return;
    }
  }
  if (status.phase !== 'Running') {
    // The runtime lists no running sandbox for the pod (not started yet, or finished).
    kubeletError(res, 500, `pod not found ("${String(meta.name)}_${String(meta.namespace)}")`);
    return;
  }

  if (tunnel) {
    const ws = acceptWebSocket(req, socket, head, { protocols: [TUNNEL_PROTOCOL] });
    if (!ws) return;
    serveSpdyPortForward(new SpdySession(webSocketByteStream(ws)), pod, target);
    return;
  }
  if (websocket) {
    const ws = acceptWebSocket(req, socket, head, {
      protocols: ['', 'v4.channel.k8s.io', 'v4.base64.channel.k8s.io'],
    });
    if (!ws) return;
    serveWebSocketPortForward(
      ws,
      socket,
      ports.map((p) => p.port),
      pod,
      target,
    );
    return;
  }
  if ((req.headers.upgrade ?? '').toLowerCase() !== SPDY_UPGRADE.toLowerCase()) {
    // The kubelet also prints the request's headers here; they would carry the caller's token back.
    kubeletError(res, 400, `unable to upgrade: missing upgrade headers in request`);
    return;
  }
  const offered = [req.headers['x-stream-protocol-version'] ?? '']
    .flat()
    .join(',')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (offered.length > 0 && !offered.includes(PORTFORWARD_PROTOCOL)) {
    // httpstream.Handshake: no protocol in common.
    res.setHeader('X-Accepted-Stream-Protocol-Versions', PORTFORWARD_PROTOCOL);
    kubeletError(
      res,
      403,
      `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${PORTFORWARD_PROTOCOL}]`,
    );
    return;
  }
  const headers = ['HTTP/1.1 101 Switching Protocols', 'Connection: Upgrade', `Upgrade: ${SPDY_UPGRADE}`];
  if (offered.length > 0) headers.push(`X-Stream-Protocol-Version: ${PORTFORWARD_PROTOCOL}`);
  socket.write(`${headers.join('\r\n')}\r\n\r\n`);
  (socket as Duplex & { setNoDelay?(b: boolean): void; setTimeout?(ms: number): void }).setNoDelay?.(true);
  (socket as Duplex & { setTimeout?(ms: number): void }).setTimeout?.(0);
  if (head.length > 0) socket.unshift(head);
  serveSpdyPortForward(new SpdySession(socket), pod, target);
}

/** A kubelet's plain-text error, which the API server relays as it is. */
function kubeletError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
  res.end(message);
}

/** PodPortForwardOptions.ports from the query, as apimachinery converts `[]string` to `[]int32`. */
function parsePortsOption(values: string[]): { port: number; raw: string }[] {
  const out: { port: number; raw: string }[] = [];
  for (const value of values)
    for (const raw of value.split(',')) {
      const port = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN;
      if (Number.isNaN(port))
        throw ApiError.badRequest(
          `cannot convert to []int32: strconv.ParseUint: parsing ${JSON.stringify(raw)}: invalid syntax`,
        );
      if (port > 0xffff)
        throw ApiError.badRequest(
          `cannot convert to []int32: strconv.ParseUint: parsing ${JSON.stringify(raw)}: value out of range`,
        );
      out.push({ port, raw });
    }
  return out;
}

/**
 * The bytes of a WebSocket as a Duplex: each binary message in, each write out as one binary
 * message. This is how client-go's tunnelling connection carries SPDY.
 */
function webSocketByteStream(ws: WebSocketConnection): Duplex {
  const stream = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, cb) {
      if (!ws.isOpen || ws.send(chunk, true)) cb();
      else ws.once('drain', () => cb()); // a close destroys this stream, dropping the write
    },
    final(cb) {
      ws.close();
      cb();
    },
    destroy(err, cb) {
      ws.close();
      cb(err);
    },
  });
  ws.on('message', (data, isBinary) => {
    if (isBinary) stream.push(data);
  });
  ws.on('close', () => {
    stream.push(null);
    stream.destroy();
  });
  return stream;
}
