/**
 * The SPDY/3.1 wire of `pods/exec` and `pods/attach`, driven with a raw SPDY client: kubelet's
 * protocol negotiation and its refusals, the streams of each remote-command version, and what
 * each version writes on the error stream.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import type { Duplex } from 'node:stream';
import { Client, Pod } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLAG_FIN, SpdyDecoder, SpdyEncoder, type SpdyFrame } from '../../src/http/streaming/spdy.js';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { eventually } from '../kubectl.js';

let cp: ControlPlane;
let client: Client;

beforeAll(async () => {
  cp = await startTestEnv({ nodes: { count: 1, timeScale: 0.01 } });
  client = new Client(cp.clientConfig);
  const pods = client.api(Pod, 'default');
  for (const name of ['p', 'a'])
    await pods.create({ metadata: { name }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } });
  await eventually(async () => (await pods.get('p')).status?.phase === 'Running');
  await eventually(async () => (await pods.get('a')).status?.phase === 'Running');
}, 60_000);
afterAll(async () => {
  await client?.close();
  await cp?.stop();
});

/** What the server sent on each stream the client opened, by streamType, until it went away. */
interface Upgraded {
  status: 101;
  protocol: string | undefined;
  data: Record<string, string>;
  /** Stream types the server ended with FIN, and those it reset. */
  fin: string[];
  reset: string[];
  goaway: boolean;
}
interface Refused {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * POSTs an exec/attach SPDY upgrade, opens one stream per type (in client-go's order), writes
 * `stdin` then half-closes it, and collects frames until the server closes the connection.
 */
function spdy(
  path: string,
  opts: {
    protocols?: string[];
    streams: string[];
    stdin?: string;
    upgrade?: string;
    /** Written on the resize stream once the streams are open. */
    after?: Buffer[];
    /** Called with what has arrived so far, at each frame. */
    progress?: (data: Record<string, string>) => void;
  },
): Promise<Upgraded | Refused> {
  const { server, token, caData } = cp.clientConfig;
  const headers: Record<string, string | string[]> = {
    Authorization: `Bearer ${token}`,
    Connection: 'Upgrade',
    Upgrade: opts.upgrade ?? 'SPDY/3.1',
  };
  if (opts.protocols) headers['X-Stream-Protocol-Version'] = opts.protocols;
  return new Promise((resolve, reject) => {
    const req = request(`${server}${path}`, { method: 'POST', ca: caData, headers });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('upgrade', (res, socket: Duplex, head: Buffer) => {
      const enc = new SpdyEncoder();
      const dec = new SpdyDecoder();
      const types = new Map<number, string>();
      const out: Upgraded = {
        status: 101,
        protocol: res.headers['x-stream-protocol-version'] as string | undefined,
        data: {},
        fin: [],
        reset: [],
        goaway: false,
      };
      let chain = Promise.resolve();
      const take = (c: Buffer) => {
        chain = chain.then(async () => {
          for (const f of (await dec.push(c)) as SpdyFrame[]) {
            if (f.type === 'data') {
              const t = types.get(f.streamId) ?? '?';
              out.data[t] = (out.data[t] ?? '') + f.data.toString();
              if (f.flags & FLAG_FIN) out.fin.push(t);
            } else if (f.type === 'rst_stream') out.reset.push(types.get(f.streamId) ?? '?');
            else if (f.type === 'goaway') out.goaway = true;
          }
          opts.progress?.(out.data);
        });
      };
      if (head.length > 0) take(head);
      socket.on('data', take);
      socket.on('error', reject);
      socket.on('close', () => void chain.then(() => resolve(out)));
      let id = 1;
      for (const type of opts.streams) {
        types.set(id, type);
        socket.write(
          enc.encode({
            type: 'syn_stream',
            streamId: id,
            associatedToStreamId: 0,
            priority: 0,
            slot: 0,
            flags: 0,
            headers: { streamtype: [type] },
          }),
        );
        id += 2;
      }
      const stdinId = 1 + 2 * opts.streams.indexOf('stdin');
      if (opts.stdin !== undefined && stdinId > 0) {
        socket.write(
          enc.encode({ type: 'data', streamId: stdinId, flags: 0, data: Buffer.from(opts.stdin) }),
        );
        socket.write(enc.encode({ type: 'data', streamId: stdinId, flags: FLAG_FIN, data: Buffer.alloc(0) }));
      }
      const resizeId = 1 + 2 * opts.streams.indexOf('resize');
      for (const b of opts.after ?? [])
        socket.write(enc.encode({ type: 'data', streamId: resizeId, flags: 0, data: b }));
    });
    req.on('error', reject);
    req.end();
  });
}

const execIn = (pod: string, query: string, ...command: string[]) =>
  `/api/v1/namespaces/default/pods/${pod}/exec?${command.map((c) => `command=${encodeURIComponent(c)}`).join('&')}&${query}`;
const exec = (query: string, ...command: string[]) => execIn('p', query, ...command);
const ALL = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];

describe('SPDY remote-command versions', () => {
  it('v4: output on its streams, the exit code as a JSON Status on the error stream, all ended', async () => {
    const r = (await spdy(exec('stdout=true&stderr=true', 'sh', '-c', 'echo out; echo err >&2; exit 3'), {
      protocols: ALL,
      streams: ['error', 'stdout', 'stderr'],
    })) as Upgraded;
    expect(r).toMatchObject({ status: 101, protocol: 'v4.channel.k8s.io', goaway: true });
    expect(r.data.stdout).toBe('out\n');
    expect(r.data.stderr).toBe('err\n');
    expect(JSON.parse(r.data.error ?? '')).toEqual({
      metadata: {},
      status: 'Failure',
      message:
        'command terminated with non-zero exit code: error executing command [sh -c echo out; echo err >&2; exit 3], exit code 3',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
    expect(r.fin.sort()).toEqual(['error', 'stderr', 'stdout']);
  });

  it('v4: a success is a Success Status; stdin ends with the half-close', async () => {
    const r = (await spdy(exec('stdin=true&stdout=true', 'cat'), {
      protocols: ALL,
      streams: ['error', 'stdin', 'stdout'],
      stdin: 'piped\n',
    })) as Upgraded;
    expect(r.data.stdout).toBe('piped\n');
    expect(JSON.parse(r.data.error ?? '')).toEqual({ metadata: {}, status: 'Success' });
  });

  it('v3 and v2: the failure as text on the error stream, nothing for a success', async () => {
    for (const protocol of ['v3.channel.k8s.io', 'v2.channel.k8s.io']) {
      const failed = (await spdy(exec('stdout=true', 'sh', '-c', 'exit 2'), {
        protocols: [protocol],
        streams: ['error', 'stdout'],
      })) as Upgraded;
      expect(failed.protocol).toBe(protocol);
      expect(failed.data.error).toBe(
        'command terminated with non-zero exit code: error executing command [sh -c exit 2], exit code 2',
      );
      const ok = (await spdy(exec('stdout=true', 'echo', 'fine'), {
        protocols: [protocol],
        streams: ['error', 'stdout'],
      })) as Upgraded;
      expect(ok.data.stdout).toBe('fine\n');
      expect(ok.data.error ?? '').toBe('');
    }
  });

  it('a TTY waits for the resize stream from v3 on, not in v2, and has no stderr stream', async () => {
    const v3 = (await spdy(exec('stdout=true&stderr=true&tty=true', 'sh', '-c', 'echo e >&2'), {
      protocols: ['v3.channel.k8s.io'],
      streams: ['error', 'stdout', 'resize'],
      after: [Buffer.from('{"Width":80,"Height":24}')],
    })) as Upgraded;
    expect(v3.data.stdout).toBe('e\n');
    const v2 = (await spdy(exec('stdout=true&tty=true', 'echo', 'two'), {
      protocols: ['v2.channel.k8s.io'],
      streams: ['error', 'stdout'],
    })) as Upgraded;
    expect(v2.data.stdout).toBe('two\n');
  });

  it('channel.k8s.io (v1): the error stream is reset once the streams are set up', async () => {
    const r = (await spdy(exec('stdout=true', 'sh', '-c', 'echo v1; exit 5'), {
      protocols: ['channel.k8s.io'],
      streams: ['error', 'stdout'],
    })) as Upgraded;
    expect(r.protocol).toBe('channel.k8s.io');
    expect(r.data.stdout).toBe('v1\n');
    expect(r.data.error ?? '').toBe('');
    expect(r.reset).toEqual(['error']);
  });

  it('attach: what the container writes from then on', async () => {
    let seen = '';
    const attach = spdy('/api/v1/namespaces/default/pods/a/attach?stdout=true', {
      protocols: ALL,
      streams: ['error', 'stdout'],
      progress: (data) => {
        seen = data.stdout ?? '';
      },
    });
    // Written until the attach shows it: the attach may not follow the container yet at first.
    await eventually(async () => {
      await spdy(execIn('a', 'stdout=true', 'sh', '-c', 'echo to-attach > /proc/1/fd/1'), {
        protocols: ALL,
        streams: ['error', 'stdout'],
      });
      return seen.includes('to-attach\n');
    });
    // The attach runs until the container or the client ends; the pod's deletion ends the container.
    await client.api(Pod, 'default').delete('a', { gracePeriodSeconds: 0 });
    const r = (await attach) as Upgraded;
    expect(r.data.stdout).toContain('to-attach\n');
  });
});

describe('SPDY refusals, as kubelet answers them', () => {
  it('403 with the accepted protocols when none is shared', async () => {
    const r = (await spdy(exec('stdout=true', 'true'), {
      protocols: ['v5.channel.k8s.io', 'v9.channel.k8s.io'],
      streams: [],
    })) as Refused;
    const message =
      'unable to upgrade: unable to negotiate protocol: client supports [v5.channel.k8s.io v9.channel.k8s.io], server accepts [v4.channel.k8s.io v3.channel.k8s.io v2.channel.k8s.io channel.k8s.io]\n';
    expect(r.status).toBe(403);
    expect(r.headers['x-accepted-stream-protocol-versions']).toBe(
      'v4.channel.k8s.io, v3.channel.k8s.io, v2.channel.k8s.io, channel.k8s.io',
    );
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.body).toBe(message + message);
  });

  it('400 when no protocol is offered, or the upgrade is neither SPDY nor WebSocket', async () => {
    expect(await spdy(exec('stdout=true', 'true'), { streams: [] })).toMatchObject({
      status: 400,
      body: 'unable to upgrade: X-Stream-Protocol-Version is required\n',
    });
    expect(
      await spdy(exec('stdout=true', 'true'), { protocols: ALL, streams: [], upgrade: 'h2c' }),
    ).toMatchObject({ status: 400, body: 'unable to upgrade: missing upgrade headers in request\n' });
  });

  it('400 for no stream at all, before any negotiation', async () => {
    expect(await spdy(exec('', 'true'), { protocols: ALL, streams: [] })).toMatchObject({
      status: 400,
      body: 'you must specify at least 1 of stdin, stdout, stderr',
    });
  });
});
