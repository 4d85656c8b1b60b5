/**
 * The kubelet's port-forward over the WebSocket channel protocol
 * (pkg/kubelet/cri/streaming/portforward/websocket.go, apimachinery's wsstream): the ports come
 * from the query; port i gets channel 2i for data (both ways) and 2i+1 for errors (to the client);
 * each channel's first message is the port as 2 little-endian bytes. Every message starts with its
 * channel: a byte (`v4.channel.k8s.io`), or an ASCII digit before base64 text
 * (`v4.base64.channel.k8s.io`). When every port's forward is over, the connection closes.
 */
import { Duplex } from 'node:stream';
import type { Obj } from '../../util/object.js';
import { forwardConnection, type PortForwardTarget } from './portforward-target.js';
import type { WebSocketConnection } from './websocket.js';

const BASE64_PROTOCOL = 'v4.base64.channel.k8s.io';

/**
 * Forwards `ports` of `pod` over an accepted WebSocket (on `socket`) until every forward is over
 * or the client leaves.
 */
export function serveWebSocketPortForward(
  ws: WebSocketConnection,
  socket: Duplex,
  ports: number[],
  pod: Obj,
  target: PortForwardTarget,
): void {
  const base64 = ws.protocol === BASE64_PROTOCOL;
  const send = (channel: number, payload: Buffer): boolean =>
    base64
      ? ws.send(String.fromCharCode(0x30 + channel) + payload.toString('base64'), false)
      : ws.send(Buffer.concat([Buffer.from([channel]), payload]), true);

  const channels = ports.map((port, i) => {
    const portBytes = Buffer.alloc(2);
    portBytes.writeUInt16LE(port);
    send(2 * i, portBytes);
    send(2 * i + 1, portBytes);
    return new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        if (!ws.isOpen || send(2 * i, chunk)) cb();
        else ws.once('drain', () => cb()); // a close destroys this stream, dropping the write
      },
      final(cb) {
        // No half-close in this protocol: a port is done when the connection is.
        cb();
      },
    });
  });

  ws.on('message', (msg, isBinary) => {
    let channel: number;
    let payload: Buffer;
    if (base64) {
      if (isBinary || msg.length === 0) return;
      channel = (msg[0] as number) - 0x30;
      payload = Buffer.from(msg.subarray(1).toString('latin1'), 'base64');
    } else {
      if (msg.length === 0) return;
      channel = msg[0] as number;
      payload = msg.subarray(1);
    }
    // Only data channels are read; anything else is dropped, as wsstream does.
    if (channel % 2 !== 0 || payload.length === 0) return;
    channels[channel / 2]?.push(payload);
  });
  ws.on('close', () => {
    for (const c of channels) {
      c.push(null);
      c.destroy();
    }
  });

  void Promise.all(
    channels.map((data, i) =>
      forwardConnection({
        target,
        pod,
        port: ports[i] as number,
        data,
        reportError: (message) => {
          send(2 * i + 1, Buffer.from(message));
        },
      }),
    ),
  ).then(() => {
    // The kubelet's websocket Close: a close frame, then the connection, without waiting for the
    // peer's answer. The Python client needs that end of input to read the frames it buffered.
    ws.close();
    socket.end();
  });
}
