/**
 * `pods/portforward` with real clients: kubectl 1.32 (SPDY tunnelled in a WebSocket, its default,
 * and plain SPDY/3.1 with KUBECTL_PORT_FORWARD_WEBSOCKETS=false), the Python client (WebSocket
 * `v4.channel.k8s.io`) and client-node's PortForward. A simulated pod refuses every port as
 * containerd does; pods labelled `echo` are forwarded by a pluggable target to a TCP echo server.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { CoreV1Api, KubeConfig, PortForward, type V1Pod } from '@kubernetes/client-node';
// Not re-exported by the package's index; PortForward takes it to inject the socket factory.
import { WebSocketHandler } from '@kubernetes/client-node/dist/web-socket-handler.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { networkNamespaceOf, sandboxIdOf } from '../src/http/streaming/portforward.js';
import { type ControlPlane, type PortForwardTarget, startTestEnv } from '../src/index.js';
import { eventually } from './kubectl.js';

const NS = 'default';

let cp: ControlPlane;
let core: CoreV1Api;
let kc: KubeConfig;
let dir: string;
let kubeconfigPath: string;
let echo: Server;
let echoPort: number;
const pods = new Map<string, V1Pod>();

/** Pods labelled `echo=true` reach the echo server; nothing backs the others (refused). */
const target: PortForwardTarget = async (c) => {
  const labels = ((c.pod.metadata as { labels?: Record<string, string> }).labels ?? {}) as Record<
    string,
    string
  >;
  if (labels.echo !== 'true') return undefined;
  const socket = connect(echoPort, '127.0.0.1');
  await once(socket, 'connect');
  return socket;
};

/** Creates a pod the simulated kubelet runs (or, with `phase`, leaves in that phase) and waits for it. */
async function createPod(
  name: string,
  opts: {
    echo?: boolean;
    simulate?: string;
    nodeName?: string;
    unschedulable?: boolean;
    phase?: string;
  } = {},
) {
  await core.createNamespacedPod({
    namespace: NS,
    body: {
      metadata: {
        name,
        ...(opts.echo && { labels: { echo: 'true' } }),
        ...(opts.simulate && { annotations: { 'kubeloop.dev/simulate': opts.simulate } }),
      },
      spec: {
        containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }] }],
        restartPolicy: opts.simulate ? 'Never' : 'Always',
        ...(opts.nodeName && { nodeName: opts.nodeName }),
        ...(opts.unschedulable && { nodeSelector: { 'kubeloop.dev/none': 'true' } }),
      },
    },
  });
  const pod = await eventually(
    async () => {
      const p = await core.readNamespacedPod({ name, namespace: NS });
      return p.status?.phase === (opts.phase ?? 'Running') ? p : undefined;
    },
    20_000,
    `pod ${name} ${opts.phase ?? 'Running'}`,
  );
  pods.set(name, pod);
}

beforeAll(async () => {
  echo = createServer((s) => s.pipe(s));
  echo.listen(0, '127.0.0.1');
  await once(echo, 'listening');
  echoPort = (echo.address() as { port: number }).port;
  cp = await startTestEnv({ nodes: { count: 1, timeScale: 0.01 }, portForward: target });
  kc = new KubeConfig();
  kc.loadFromString(cp.kubeconfig);
  core = kc.makeApiClient(CoreV1Api);
  dir = mkdtempSync(join(tmpdir(), 'kubeloop-pf-'));
  kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, cp.kubeconfig, { mode: 0o600 });
  await Promise.all([
    createPod('web'),
    createPod('echo', { echo: true }),
    createPod('done', { simulate: 'succeed', phase: 'Succeeded' }),
    createPod('unscheduled', { unschedulable: true, phase: 'Pending' }),
    createPod('elsewhere', { nodeName: 'node-without-kubelet', phase: 'Pending' }),
  ]);
}, 60_000);

afterAll(async () => {
  await cp?.stop();
  echo?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The kubelet's message for a refused port of a simulated pod. */
function refusal(name: string, port: number): string {
  const pod = pods.get(name) as unknown as Record<string, unknown>;
  return (
    `error forwarding port ${port} to pod ${sandboxIdOf(pod)}, uid : ` +
    `failed to execute portforward in network namespace "${networkNamespaceOf(pod)}": ` +
    `failed to connect to localhost:${port} inside namespace "${sandboxIdOf(pod)}", ` +
    `IPv4: dial tcp4 127.0.0.1:${port}: connect: connection refused ` +
    `IPv6 dial tcp6 [::1]:${port}: connect: connection refused `
  );
}

interface PortForwardProcess {
  child: ChildProcess;
  localPort: number;
  stderr: () => string;
  stdout: () => string;
  exited: Promise<number | null>;
}

/** Starts `kubectl port-forward` and waits for its "Forwarding from" line. */
async function kubectlPortForward(
  args: string[],
  env: Record<string, string> = {},
): Promise<PortForwardProcess> {
  const child = spawn('kubectl', ['--kubeconfig', kubeconfigPath, 'port-forward', ...args], {
    env: { ...process.env, HOME: dir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  let done = false;
  void exited.then(() => {
    done = true;
  });
  const m = await eventually(
    () => {
      if (done) throw new Error(`kubectl exited: ${stderr}`);
      return /Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(stdout);
    },
    20_000,
    'kubectl port-forward to listen',
  );
  return { child, localPort: Number(m[1]), stderr: () => stderr, stdout: () => stdout, exited };
}

/** Connections the echo "pod" holds open. */
function echoConnections(): Promise<number> {
  return new Promise((resolve, reject) => echo.getConnections((err, n) => (err ? reject(err) : resolve(n))));
}

/** A local port nobody listens on now (kubectl's message names the local port). */
async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address() as { port: number };
  await new Promise((r) => srv.close(r));
  return port;
}

/** Connects to a local port, sends `text`, half-closes and returns all it read back. */
async function roundTrip(port: number, text: string): Promise<string> {
  const s: Socket = connect(port, '127.0.0.1');
  const failed = new Promise<never>((_, reject) => s.on('error', reject));
  await Promise.race([once(s, 'connect'), failed]);
  let got = '';
  s.on('data', (d: Buffer) => {
    got += d.toString();
  });
  s.write(text);
  // Wait for the echo before half-closing, so the test shows data flowing both ways on an open stream.
  await eventually(() => got.length >= text.length, 10_000, 'the echo');
  s.end();
  await Promise.race([once(s, 'close'), failed]);
  return got;
}

describe.each([
  // The tunnel is a WebSocket GET; the fallback, a SPDY upgrade of a POST.
  ['SPDY tunnelled in a WebSocket (kubectl default)', {}, /GET https:\S+\/pods\/echo\/portforward 101/],
  [
    'plain SPDY/3.1 (KUBECTL_PORT_FORWARD_WEBSOCKETS=false)',
    { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' },
    /POST https:\S+\/pods\/echo\/portforward 101/,
  ],
])('kubectl port-forward over %s', (_name, env, upgradeLine) => {
  it('forwards connections to the pod target, several of them', async () => {
    const pf = await kubectlPortForward(['pod/echo', ':80', '-v=6'], env);
    try {
      expect(pf.stderr()).toMatch(upgradeLine);
      expect(await roundTrip(pf.localPort, 'hello')).toBe('hello');
      const many = await Promise.all(
        [1, 2, 3].map((i) => roundTrip(pf.localPort, `conn ${i} `.repeat(5000))),
      );
      expect(many).toEqual([1, 2, 3].map((i) => `conn ${i} `.repeat(5000)));
      expect(pf.stderr()).not.toMatch(/^E\d{4}/m);
    } finally {
      pf.child.kill('SIGTERM');
      await pf.exited;
    }
  });

  it('closes the connection to the pod when kubectl goes away', async () => {
    const pf = await kubectlPortForward(['pod/echo', ':80'], env);
    const s = connect(pf.localPort, '127.0.0.1');
    s.on('error', () => {});
    let got = '';
    s.on('data', (d: Buffer) => {
      got += d.toString();
    });
    s.write('still here');
    await eventually(() => got === 'still here');
    // Earlier tests' connections may still be closing.
    await eventually(async () => (await echoConnections()) === 1, 10_000, 'one connection to the pod');
    pf.child.kill('SIGKILL');
    await pf.exited;
    await eventually(async () => (await echoConnections()) === 0, 10_000, 'the pod side to close');
    s.destroy();
  });

  it('prints the kubelet error for a port nothing listens on, as against a real cluster', async () => {
    const local = await freePort();
    const pf = await kubectlPortForward(['pod/web', `${local}:80`], env);
    try {
      const s = connect(pf.localPort, '127.0.0.1');
      s.on('error', () => {});
      await once(s, 'connect');
      s.write('GET / HTTP/1.0\r\n\r\n');
      const code = await pf.exited;
      // klog's structured line, quotes escaped, exactly as kubectl 1.32 prints it against a cluster.
      const message = `an error occurred forwarding ${local} -> 80: ${refusal('web', 80)}`;
      expect(pf.stderr()).toMatch(
        /^E\d{4} [\d:.]+ +\d+ portforward\.go:\d+\] "Unhandled Error" err="an error/m,
      );
      expect(pf.stderr()).toContain(`err="${message.replaceAll('"', '\\"')}"`);
      expect(pf.stderr()).toContain('error: lost connection to pod');
      expect(code).toBe(1);
      s.destroy();
    } finally {
      pf.child.kill('SIGKILL');
    }
  });
});

describe('kubectl port-forward to a Service', () => {
  it("picks a pod behind the Service and maps the Service's port to the container's", async () => {
    await core.createNamespacedService({
      namespace: NS,
      body: {
        metadata: { name: 'echo-svc' },
        spec: { selector: { echo: 'true' }, ports: [{ port: 8080, targetPort: 80 }] },
      },
    });
    const pf = await kubectlPortForward(['svc/echo-svc', ':8080']);
    try {
      expect(pf.stdout()).toMatch(/Forwarding from 127\.0\.0\.1:\d+ -> 80/);
      expect(await roundTrip(pf.localPort, 'via the service')).toBe('via the service');
    } finally {
      pf.child.kill('SIGTERM');
      await pf.exited;
    }
  });
});

/** The Python client's portforward(): sends `payload` on `port` and reads as much back. */
const PYTHON_PORTFORWARD = `
import json, sys, time
from kubernetes import client, config
from kubernetes.stream import portforward
config.load_kube_config(sys.argv[1])
api = client.CoreV1Api()
name, port, payload = sys.argv[2], int(sys.argv[3]), sys.argv[4].encode()
out = {}
try:
    pf = portforward(api.connect_get_namespaced_pod_portforward, name, 'default', ports=str(port))
    s = pf.socket(port)
    s.settimeout(20)
    got = b''
    try:
        s.sendall(payload)
        while len(got) < len(payload):
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    except OSError:
        # The client closes its end of the socket as soon as the error channel speaks, which
        # may be before this sends (against a real kubelet too).
        pass
    out['data'] = got.decode()
    s.close()
    deadline = time.time() + 20
    while pf.error(port) is None and pf.connected and time.time() < deadline:
        time.sleep(0.02)
    out['error'] = pf.error(port)
except client.ApiException as e:
    out['status'] = e.status
    out['reason'] = e.reason
print(json.dumps(out))
`;

function python(name: string, port: number, payload: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(
      '/usr/bin/python3',
      ['-c', PYTHON_PORTFORWARD, kubeconfigPath, name, String(port), payload],
      { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout));
      },
    );
  });
}

describe('the Python client (WebSocket v4.channel.k8s.io)', () => {
  it('forwards to the pod target both ways', async () => {
    const payload = 'ping '.repeat(20_000);
    const out = await python('echo', 80, payload);
    expect(out.data).toBe(payload);
    expect(out.error ?? null).toBeNull();
  });

  it('reads the kubelet error of a port nothing listens on from the error channel', async () => {
    const out = await python('web', 80, 'GET / HTTP/1.0\r\n\r\n');
    expect(out).toEqual({ data: '', error: refusal('web', 80) });
  });

  it('fails the handshake of a missing pod with 404', async () => {
    expect(await python('nope', 80, 'x')).toMatchObject({
      status: 0,
      reason: 'Handshake status 404 Not Found',
    });
  });
});

describe('client-node PortForward (WebSocket v4.channel.k8s.io)', () => {
  async function forward(name: string) {
    const output = new PassThrough();
    const errors = new PassThrough();
    const input = new PassThrough();
    let out = '';
    let err = '';
    output.on('data', (d: Buffer) => {
      out += d.toString();
    });
    errors.on('data', (d: Buffer) => {
      err += d.toString();
    });
    // client-node's own socket is isomorphic-ws, whose default export vitest's module loader
    // does not resolve to the ws class; the same ws client is handed over through its factory.
    const handler = new WebSocketHandler(
      kc,
      (uri, protocols, opts) => new WebSocket(uri, protocols, opts) as never,
    );
    const ws = await new PortForward(kc, true, handler).portForward(NS, name, [80], output, errors, input);
    const close = () => (typeof ws === 'function' ? ws() : ws).close();
    return { input, out: () => out, err: () => err, close };
  }

  it('forwards to the pod target both ways', async () => {
    const pf = await forward('echo');
    try {
      pf.input.write('hello ');
      pf.input.write('client-node');
      expect(await eventually(() => pf.out() === 'hello client-node' && pf.out())).toBe('hello client-node');
      expect(pf.err()).toBe('');
      // Earlier tests' connections may still be closing.
      await eventually(async () => (await echoConnections()) === 1, 10_000, 'one connection to the pod');
    } finally {
      pf.close();
    }
    // Closing the WebSocket ends the forward: the pod side closes too.
    await eventually(async () => (await echoConnections()) === 0, 10_000, 'the pod side to close');
  });

  it('receives the kubelet error of a port nothing listens on on the error stream', async () => {
    const pf = await forward('web');
    try {
      expect(await eventually(() => pf.err())).toBe(refusal('web', 80));
      expect(pf.out()).toBe('');
    } finally {
      pf.close();
    }
  });
});

/** An upgrade request as a client sends it; the answer when the server does not switch protocols. */
function upgradeRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string; contentType: string }> {
  const { server, token, caData } = cp.clientConfig;
  return new Promise((resolve, reject) => {
    const req = request(`${server}${path}`, {
      method,
      ca: caData,
      headers: { Authorization: `Bearer ${token}`, ...headers },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString();
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body, contentType: String(res.headers['content-type']) }),
      );
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      reject(new Error('the server switched protocols'));
    });
    req.on('error', reject);
    req.end();
  });
}

const WS = {
  Connection: 'Upgrade',
  Upgrade: 'websocket',
  'Sec-WebSocket-Version': '13',
  'Sec-WebSocket-Key': Buffer.alloc(16, 7).toString('base64'),
  'Sec-WebSocket-Protocol': 'v4.channel.k8s.io',
};
const SPDY = {
  Connection: 'Upgrade',
  Upgrade: 'SPDY/3.1',
  'X-Stream-Protocol-Version': 'portforward.k8s.io',
};
const path = (pod: string, query = '') => `/api/v1/namespaces/${NS}/pods/${pod}/portforward${query}`;

describe('refusals, as kube-apiserver and the kubelet answer them', () => {
  it('answers the API server errors as Status: bad ports, missing pod, no node, no upgrade', async () => {
    const status = async (p: Promise<{ status: number; body: string }>) => {
      const r = await p;
      return { code: r.status, ...JSON.parse(r.body) };
    };
    expect(await status(upgradeRequest('GET', path('web', '?ports=abc'), WS))).toMatchObject({
      code: 400,
      kind: 'Status',
      reason: 'BadRequest',
      message: 'cannot convert to []int32: strconv.ParseUint: parsing "abc": invalid syntax',
    });
    expect(await status(upgradeRequest('POST', path('web', '?ports=70000'), SPDY))).toMatchObject({
      code: 400,
      message: 'cannot convert to []int32: strconv.ParseUint: parsing "70000": value out of range',
    });
    expect(await status(upgradeRequest('GET', path('nope', '?ports=80'), WS))).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'pods "nope" not found',
    });
    expect(await status(upgradeRequest('POST', path('unscheduled'), SPDY))).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'pod unscheduled does not have a host assigned',
    });
    expect(await status(upgradeRequest('GET', path('elsewhere', '?ports=80'), WS))).toMatchObject({
      code: 500,
      reason: 'InternalError',
      message:
        'Internal error occurred: error dialing backend: no kubelet serves node "node-without-kubelet"',
    });
    expect(await status(upgradeRequest('GET', path('web', '?ports=80'), {}))).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'Upgrade request required',
    });
  });

  it("relays the kubelet's plain-text errors: ports of a WebSocket request, a pod not running", async () => {
    expect(await upgradeRequest('GET', path('web'), WS)).toMatchObject({
      status: 400,
      body: 'query parameter "port" is required',
      contentType: 'text/plain; charset=utf-8',
    });
    expect(await upgradeRequest('GET', path('web', '?ports=0'), WS)).toMatchObject({
      status: 400,
      body: 'port "0" must be > 0',
    });
    expect(
      await upgradeRequest('POST', path('web'), { Connection: 'Upgrade', Upgrade: 'h2c' }),
    ).toMatchObject({
      status: 400,
      body: 'unable to upgrade: missing upgrade headers in request',
    });
    expect(
      await upgradeRequest('POST', path('web'), {
        ...SPDY,
        'X-Stream-Protocol-Version': 'v4.channel.k8s.io',
      }),
    ).toMatchObject({
      status: 403,
      body: 'unable to upgrade: unable to negotiate protocol: client supports [v4.channel.k8s.io], server accepts [portforward.k8s.io]',
    });
    expect(await upgradeRequest('POST', path('done'), SPDY)).toMatchObject({
      status: 500,
      body: 'pod not found ("done_default")',
    });
  });

  it('kubectl refuses a pod that is not running before it asks the server', async () => {
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn('kubectl', ['--kubeconfig', kubeconfigPath, 'port-forward', 'pod/done', ':80'], {
        env: { ...process.env, HOME: dir },
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(r).toEqual({
      code: 1,
      stderr: 'error: unable to forward port because pod is not running. Current status=Succeeded\n',
    });
  });
});

describe('the WebSocket channel protocol, as the kubelet speaks it', () => {
  it('opens two channels per port, each starting with its port, in v4.base64.channel.k8s.io too', async () => {
    const { server, token, caData } = cp.clientConfig;
    const url = `${server.replace('https:', 'wss:')}${path('echo', '?ports=80,81')}`;
    const ws = new WebSocket(url, ['v4.base64.channel.k8s.io'], {
      ca: caData,
      headers: { Authorization: `Bearer ${token}` },
    });
    const messages: string[] = [];
    ws.on('message', (d: Buffer) => messages.push(d.toString()));
    await once(ws, 'open');
    try {
      expect(ws.protocol).toBe('v4.base64.channel.k8s.io');
      const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64');
      const port = (p: number) => b64(Buffer.from([p & 0xff, p >> 8]));
      await eventually(() => messages.length >= 4);
      expect(messages.slice(0, 4)).toEqual([`0${port(80)}`, `1${port(80)}`, `2${port(81)}`, `3${port(81)}`]);
      ws.send(`0${b64('to 80')}`);
      ws.send(`2${b64('to 81')}`);
      await eventually(() => messages.length >= 6);
      expect(messages.slice(4).sort()).toEqual([`0${b64('to 80')}`, `2${b64('to 81')}`]);
    } finally {
      ws.close();
    }
  });
});
