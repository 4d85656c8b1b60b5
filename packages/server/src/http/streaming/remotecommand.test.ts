import { ApiError } from 'kubeloop/api';
import { describe, expect, it } from 'vitest';
import {
  Channel,
  RemoteCommandSession,
  type RemoteCommandTransport,
  type StreamOptions,
} from './remotecommand.js';

/** A transport that records what the session sends. */
function recorder(protocol: string, statusAsJson: boolean) {
  const sent: [number, string][] = [];
  let closed = 0;
  const transport: RemoteCommandTransport = {
    protocol,
    statusAsJson,
    write: (channel, data) => sent.push([channel, data.toString()]),
    close: () => {
      closed++;
    },
  };
  return { transport, sent, closed: () => closed };
}

const opts = (o: Partial<StreamOptions>): StreamOptions => ({
  stdin: false,
  stdout: false,
  stderr: false,
  tty: false,
  ...o,
});

describe('RemoteCommandSession (whichever transport carries it)', () => {
  it('sends stderr on stdout with a TTY and drops the streams the client did not ask for', () => {
    const r = recorder('v4.channel.k8s.io', true);
    const tty = new RemoteCommandSession(r.transport, opts({ stdout: true, tty: true }));
    tty.write(Channel.stderr, 'e');
    const plain = new RemoteCommandSession(r.transport, opts({ stderr: true }));
    plain.write(Channel.stdout, 'dropped');
    plain.write(Channel.stderr, 'kept');
    expect(r.sent).toEqual([
      [Channel.stdout, 'e'],
      [Channel.stderr, 'kept'],
    ]);
  });

  it('finishes once: a JSON Status for v4, the failure text (nothing for success) for older protocols', () => {
    const v4 = recorder('v4.channel.k8s.io', true);
    const s = new RemoteCommandSession(v4.transport, opts({ stdout: true }));
    s.finish({ exitCode: 0 });
    s.finish({ exitCode: 1 });
    s.write(Channel.stdout, 'late');
    expect(v4.sent).toEqual([[Channel.error, '{"metadata":{},"status":"Success"}']]);
    expect(v4.closed()).toBe(1);

    const v3 = recorder('v3.channel.k8s.io', false);
    new RemoteCommandSession(v3.transport, opts({ stdout: true })).finish({ exitCode: 0 });
    new RemoteCommandSession(v3.transport, opts({ stdout: true })).finish(ApiError.internal('boom'));
    expect(v3.sent).toEqual([[Channel.error, 'Internal error occurred: boom']]);
  });

  it('reads terminal sizes from the resize channel, and stdin until it is closed', async () => {
    const r = recorder('v5.channel.k8s.io', true);
    const s = new RemoteCommandSession(r.transport, opts({ stdin: true, stdout: true, tty: true }));
    s.receive(Channel.resize, Buffer.from(' {"Width":100,"Hei'));
    expect(s.terminalSize).toBeUndefined();
    s.receive(Channel.resize, Buffer.from('ght":30}\n'));
    expect(s.terminalSize).toEqual({ width: 100, height: 30 });
    s.receive(Channel.stdin, Buffer.from('in'));
    s.closeInput(Channel.stdin);
    s.receive(Channel.stdin, Buffer.from('after the close'));
    expect((await s.stdin.readAll()).toString()).toBe('in');
    expect(s.signal.aborted).toBe(false);
    s.disconnected();
    expect(s.signal.aborted).toBe(true);
  });
});
