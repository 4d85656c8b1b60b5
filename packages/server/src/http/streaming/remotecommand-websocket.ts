/**
 * The remote-command session over one WebSocket (kubelet's `remotecommand/websocket.go` and
 * kube-apiserver's v5 stream translator):
 *
 * - every message carries one channel: in the binary protocols the first byte is the channel,
 *   in the `base64.` ones the first character is `'0' + channel` and the rest is base64 text;
 * - `v5.channel.k8s.io` lets the client close one of its streams (stdin) with the message
 *   `[255, channel]`, which `kubectl cp` needs to end the archive it sends;
 * - once the connection is set up, an empty message goes out on the lowest output channel the
 *   client asked for, which clients wait for.
 */
import { Channel, RemoteCommandSession, type StreamOptions } from './remotecommand.js';
import type { WebSocketConnection } from './websocket.js';

/** v5: a client message `[STREAM_CLOSE, channel]` closes that channel. */
const STREAM_CLOSE = 255;

/**
 * Starts a session on an accepted WebSocket.
 *
 * @param ws the connection, upgraded with one of `REMOTE_COMMAND_PROTOCOLS`
 * @param options the streams the client asked for
 */
export function webSocketSession(ws: WebSocketConnection, options: StreamOptions): RemoteCommandSession {
  const base64 = ws.protocol.includes('base64');
  const session = new RemoteCommandSession(
    {
      protocol: ws.protocol,
      statusAsJson: ws.protocol.startsWith('v4.') || ws.protocol.startsWith('v5.'),
      write(channel, bytes) {
        if (base64) ws.send(String.fromCharCode(0x30 + channel) + bytes.toString('base64'), false);
        else ws.send(Buffer.concat([Buffer.from([channel]), bytes]));
      },
      close: () => ws.close(1000),
    },
    options,
  );
  const closable = ws.protocol === 'v5.channel.k8s.io';
  ws.on('message', (data) => {
    if (data.length === 0) return;
    if (closable && data[0] === STREAM_CLOSE) {
      if (data.length === 2) session.closeInput(data[1]!);
      return;
    }
    let channel = data[0]!;
    let payload = data.subarray(1);
    if (base64) {
      channel -= 0x30;
      payload = Buffer.from(payload.toString('latin1'), 'base64');
    }
    session.receive(channel, payload);
  });
  ws.on('close', () => session.disconnected());
  // Tell the client the streams are set up (it waits for this first message).
  session.write(
    options.stdout ? Channel.stdout : options.stderr ? Channel.stderr : Channel.error,
    Buffer.alloc(0),
  );
  return session;
}
