/**
 * The wire of the streaming subresources, driven with a plain WebSocket client: each
 * remote-command subprotocol's framing and status, the handshake and request errors, and
 * discovery.
 */
import { once } from 'node:events';
import { Client, Pod } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type ControlPlane, SIMULATE_ANNOTATION, startTestEnv } from '../../src/index.js';
import { type HttpResult, httpClient } from '../http.js';
import { eventually } from '../kubectl.js';

let cp: ControlPlane;
let client: Client;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  cp = await startTestEnv({ nodes: { count: 1, timeScale: 0.01 } });
  client = new Client(cp.clientConfig);
  http = httpClient(cp);
  const pods = client.api(Pod, 'default');
  await pods.create({
    metadata: { name: 'p' },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
  });
  await pods.create({
    metadata: { name: 'failed', annotations: { [SIMULATE_ANNOTATION]: 'fail' } },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
  });
  await pods.create({
    metadata: { name: 'unscheduled' },
    spec: { schedulerName: 'nobody', containers: [{ name: 'app', image: 'nginx:1.27' }] },
  });
  await eventually(async () => (await pods.get('p')).status?.phase === 'Running');
  await eventually(async () => (await pods.get('failed')).status?.phase === 'Failed');
}, 60_000);
afterAll(async () => {
  await client?.close();
  await cp?.stop();
});

interface Session {
  protocol: string;
  messages: Array<{ data: Buffer; binary: boolean }>;
  close: { code: number };
}

/** Opens an exec WebSocket, sends nothing, and collects every message until the server closes. */
async function session(
  path: string,
  protocols: string[] | undefined,
  headers?: Record<string, string>,
): Promise<Session> {
  const url = `${cp.url.replace('https', 'wss')}${path}`;
  const ws = new WebSocket(url, protocols ?? [], {
    ca: cp.clientConfig.caData,
    headers: headers ?? { Authorization: `Bearer ${cp.clientConfig.token}` },
  });
  const messages: Session['messages'] = [];
  ws.on('message', (data: Buffer, binary: boolean) => messages.push({ data, binary }));
  await once(ws, 'open');
  const [code] = (await once(ws, 'close')) as [number];
  return { protocol: ws.protocol, messages, close: { code } };
}

/** The upgrade answer when the server refuses the WebSocket. */
async function refused(
  path: string,
  protocols: string[],
  token: string | null = cp.clientConfig.token,
): Promise<HttpResult> {
  const ws = new WebSocket(`${cp.url.replace('https', 'wss')}${path}`, protocols, {
    ca: cp.clientConfig.caData,
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
  ws.on('error', () => undefined);
  const [, res] = (await once(ws, 'unexpected-response')) as [unknown, import('node:http').IncomingMessage];
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode ?? 0, headers: res.headers, text, json };
}

const exec = (pod: string, ...command: string[]) =>
  `/api/v1/namespaces/default/pods/${pod}/exec?${command.map((c) => `command=${encodeURIComponent(c)}`).join('&')}&stdout=true&stderr=true`;

describe('remote-command subprotocols', () => {
  it('v5/v4: binary frames, an empty first stdout frame, a JSON Status on channel 3, close 1000', async () => {
    const s = await session(exec('p', 'sh', '-c', 'echo hi; exit 3'), [
      'v5.channel.k8s.io',
      'v4.channel.k8s.io',
    ]);
    expect(s.protocol).toBe('v5.channel.k8s.io');
    expect(s.messages.every((m) => m.binary)).toBe(true);
    expect(s.messages[0]!.data).toEqual(Buffer.from([1]));
    expect(s.messages[1]!.data).toEqual(Buffer.from('\x01hi\n'));
    expect(s.messages[2]!.data[0]).toBe(3);
    expect(JSON.parse(s.messages[2]!.data.subarray(1).toString())).toEqual({
      metadata: {},
      status: 'Failure',
      message: 'command terminated with non-zero exit code: command terminated with exit code 3',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
    expect(s.close.code).toBe(1000);

    const v4 = await session(exec('p', 'sh', '-c', 'exit 3'), ['v4.channel.k8s.io']);
    expect(JSON.parse(v4.messages.at(-1)!.data.subarray(1).toString()).message).toBe(
      'command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3',
    );
    const ok = await session(exec('p', 'true'), ['v4.channel.k8s.io']);
    expect(ok.messages.at(-1)!.data.toString('latin1')).toBe('\x03{"metadata":{},"status":"Success"}');
  });

  it('base64.channel.k8s.io: text frames of "<channel digit><base64>", the error as plain text', async () => {
    const s = await session(exec('p', 'sh', '-c', 'echo hi; exit 3'), ['base64.channel.k8s.io']);
    expect(s.protocol).toBe('base64.channel.k8s.io');
    expect(s.messages.map((m) => [m.binary, m.data.toString()])).toEqual([
      [false, '1'],
      [false, `1${Buffer.from('hi\n').toString('base64')}`],
      [
        false,
        `3${Buffer.from('command terminated with non-zero exit code: error executing command [sh -c echo hi; exit 3], exit code 3').toString('base64')}`,
      ],
    ]);
  });

  it('channel.k8s.io (or no protocol): nothing on the error channel for a success', async () => {
    for (const protocols of [['channel.k8s.io'], undefined]) {
      const s = await session(exec('p', 'echo', 'x'), protocols);
      expect(s.messages.map((m) => m.data.toString('latin1'))).toEqual(['\x01', '\x01x\n']);
    }
  });

  it('an unknown program fails with the runtime message in an InternalError', async () => {
    const s = await session(exec('p', 'nope'), ['v4.channel.k8s.io']);
    const status = JSON.parse(s.messages.at(-1)!.data.subarray(1).toString());
    expect(status).toMatchObject({ status: 'Failure', reason: 'InternalError', code: 500 });
    expect(status.message).toMatch(
      /^Internal error occurred: error executing command in container: failed to exec in container: failed to start exec "[0-9a-f]{64}": OCI runtime exec failed: exec failed: unable to start container process: exec: "nope": executable file not found in \$PATH: unknown$/,
    );
  });
});

describe('authentication', () => {
  it('takes a bearer token from the base64url.bearer.authorization.k8s.io subprotocol', async () => {
    const bearer = `base64url.bearer.authorization.k8s.io.${Buffer.from(cp.clientConfig.token ?? '').toString('base64url')}`;
    const s = await session(exec('p', 'echo', 'ok'), [bearer, 'v4.channel.k8s.io'], {});
    expect(s.protocol).toBe('v4.channel.k8s.io');
    expect(s.messages[1]!.data.toString('latin1')).toBe('\x01ok\n');
    const wrong = `base64url.bearer.authorization.k8s.io.${Buffer.from('nope').toString('base64url')}`;
    expect((await refused(exec('p', 'true'), [wrong, 'v4.channel.k8s.io'], null)).status).toBe(401);
  });

  it('takes the token protocol out of the offer, and refuses a token offered alone (no protocol to echo)', async () => {
    const bearer = `base64url.bearer.authorization.k8s.io.${Buffer.from(cp.clientConfig.token ?? '').toString('base64url')}`;
    // Offered after the stream's protocol: still not chosen, since it is gone once authenticated.
    const s = await session(exec('p', 'echo', 'ok'), ['v5.channel.k8s.io', bearer], {});
    expect(s.protocol).toBe('v5.channel.k8s.io');
    expect((await refused(exec('p', 'true'), [bearer], null)).status).toBe(401);
  });
});

describe('a terminal', () => {
  it('an interactive sh with -t prompts, echoes, edits the line and exits with its code', async () => {
    const url = `${cp.url.replace('https', 'wss')}/api/v1/namespaces/default/pods/p/exec?command=sh&stdin=true&stdout=true&tty=true`;
    const ws = new WebSocket(url, ['v5.channel.k8s.io'], {
      ca: cp.clientConfig.caData,
      headers: { Authorization: `Bearer ${cp.clientConfig.token}` },
    });
    let stdout = '';
    let status: unknown;
    ws.on('message', (d: Buffer) => {
      if (d[0] === 1) stdout += d.subarray(1).toString();
      if (d[0] === 3) status = JSON.parse(d.subarray(1).toString());
    });
    await once(ws, 'open');
    const type = (text: string) => ws.send(Buffer.concat([Buffer.from([0]), Buffer.from(text)]));
    await eventually(() => stdout === '# ');
    type('echo hx\x7fi\r');
    await eventually(() => stdout.endsWith('hi\r\n# '));
    type('exit 3\r');
    await once(ws, 'close');
    expect(stdout).toBe('# echo hx\b \bi\r\nhi\r\n# exit 3\r\n');
    expect(status).toMatchObject({ reason: 'NonZeroExitCode', details: { causes: [{ message: '3' }] } });
  });
});

describe('errors', () => {
  it('refuses subprotocols it does not speak with 403, as kubelet does', async () => {
    expect((await refused(exec('p', 'true'), ['v3.channel.k8s.io'])).status).toBe(403);
  });
  it('answers kube-apiserver Status errors before the upgrade', async () => {
    const missing = await refused(exec('nope', 'true'), ['v5.channel.k8s.io']);
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({
      kind: 'Status',
      reason: 'NotFound',
      message: 'pods "nope" not found',
    });
    const noHost = await refused(exec('unscheduled', 'true'), ['v5.channel.k8s.io']);
    expect(noHost.json).toMatchObject({
      code: 400,
      message: 'pod unscheduled does not have a host assigned',
    });
    // No credentials: system:anonymous, whom RBAC does not let exec.
    const anonymous = await refused(exec('p', 'true'), ['v5.channel.k8s.io'], null);
    expect(anonymous.status).toBe(403);
    expect(anonymous.json).toMatchObject({ reason: 'Forbidden' });
    expect((anonymous.json as { message: string }).message).toContain('User "system:anonymous" cannot');
    const plain = await http.post(exec('p', 'true'), { raw: '' });
    expect(plain.json).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'Upgrade request required',
    });
  });
  it('a container that is not running: kubelet text for v4, a Status from the v5 translator', async () => {
    const v4 = await refused(exec('failed', 'true'), ['v4.channel.k8s.io']);
    expect([v4.status, v4.text]).toEqual([500, 'container not found ("app")']);
    const v5 = await session(exec('failed', 'true'), ['v5.channel.k8s.io']);
    expect(JSON.parse(v5.messages.at(-1)!.data.subarray(1).toString())).toMatchObject({
      reason: 'InternalError',
      message: 'Internal error occurred: unable to upgrade connection: container not found ("app")',
    });
  });
  it('logs: empty for a pod without a node, BadRequest for a bad option, 405 for POST', async () => {
    const empty = await http.get('/api/v1/namespaces/default/pods/unscheduled/log');
    expect([empty.status, empty.text]).toEqual([200, '']);
    const bad = await http.get('/api/v1/namespaces/default/pods/p/log?tailLines=-1');
    expect(bad.json).toMatchObject({ code: 422, reason: 'Invalid' });
    expect((await http.post('/api/v1/namespaces/default/pods/p/log', { raw: '' })).status).toBe(405);
    const previous = await http.get('/api/v1/namespaces/default/pods/failed/log?previous=true');
    expect(previous.json).toMatchObject({
      code: 400,
      message: 'previous terminated container "app" in pod "failed" not found',
    });
  });
});

describe('discovery', () => {
  it('lists the connect subresources of pods with their verbs, in both forms', async () => {
    const core = await http.get('/api/v1');
    const byName = new Map(core.json.resources.map((r: { name: string }) => [r.name, r]));
    expect(byName.get('pods/exec')).toEqual({
      name: 'pods/exec',
      singularName: '',
      namespaced: true,
      kind: 'PodExecOptions',
      verbs: ['create', 'get'],
    });
    expect(byName.get('pods/attach')).toMatchObject({ kind: 'PodAttachOptions', verbs: ['create', 'get'] });
    expect(byName.get('pods/log')).toMatchObject({ kind: 'Pod', verbs: ['get'] });
    expect(byName.get('pods/portforward')).toMatchObject({
      kind: 'PodPortForwardOptions',
      verbs: ['create', 'get'],
    });
    const aggregated = await http.get('/api', {
      headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' },
    });
    const pods = aggregated.json.items[0].versions[0].resources.find(
      (r: { resource: string }) => r.resource === 'pods',
    );
    // Sorted by name, as kube-apiserver installs the paths it lists.
    expect(pods.subresources.map((s: { subresource: string }) => s.subresource)).toEqual([
      'attach',
      'binding',
      'ephemeralcontainers',
      'eviction',
      'exec',
      'log',
      'portforward',
      'status',
    ]);
  });
});
