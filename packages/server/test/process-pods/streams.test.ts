import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { Client, Pod } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { writeTestImage } from './app.js';

let k: KubectlEnv;
let client: Client;
let imageDir: string;
let podIP: string;
const IMAGE = 'example.com/streams:dev';

function get(host: string, port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  imageDir = writeTestImage();
  k = await startKubectlEnv({
    nodes: {
      count: 1,
      processes: { images: { [IMAGE]: { dir: imageDir, entrypoint: ['node', 'server.js'] } } },
    },
  });
  client = new Client(k.cp.clientConfig);
  await client.api(Pod, 'default').create({
    metadata: { name: 'web' },
    spec: {
      nodeName: 'kubeloop-node-1',
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'app',
          image: IMAGE,
          env: [{ name: 'MODE', value: 'streams' }],
          ports: [{ containerPort: 8080 }],
          readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 1 },
        },
      ],
    },
  });
  const pod = await eventually(async () => {
    const p = await client.api(Pod, 'default').get('web');
    return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
  }, 15_000);
  podIP = pod.status?.podIP ?? '';
});
afterAll(async () => {
  await client.close();
  await k.stop();
  rmSync(imageDir, { recursive: true, force: true });
});

describe('kubectl and process-backed pods', () => {
  it('logs: what the process wrote, and followed as it writes', async () => {
    expect(await k.ok(['logs', 'web'])).toMatch(/^started serve as \d+\nlistening\n/);
    const follow = k.spawn(['logs', '-f', 'web']);
    await eventually(() => follow.output().includes('listening'));
    await get(podIP, 8080, '/log?line=followed-line');
    await eventually(() => follow.output().includes('followed-line\n'));
    await follow.stop();
  });

  it('exec: runs a command in the process working directory, with its environment, stdin and exit code', async () => {
    const out = await k.ok([
      'exec',
      'web',
      '--',
      'node',
      '-e',
      'console.log(process.cwd(), process.env.MODE)',
    ]);
    const [cwd, mode] = out.trim().split(' ');
    expect(cwd).toMatch(/\/app$/);
    expect(mode).toBe('streams');
    const echoed = await k.ok(
      ['exec', '-i', 'web', '--', 'node', '-e', 'process.stdin.pipe(process.stdout)'],
      {
        input: 'through stdin\n',
      },
    );
    expect(echoed).toBe('through stdin\n');
    const failed = await k.run(['exec', 'web', '--', 'node', '-e', 'process.exit(7)']);
    expect(failed.code).toBe(7);
    const missing = await k.run(['exec', 'web', '--', 'no-such-program']);
    expect(missing.stderr).toContain('executable file not found in $PATH');
  });

  it('exec -t: the command gets a terminal of the client size, which follows the resize channel', async () => {
    const path = '/api/v1/namespaces/default/pods/web/exec?command=sh&stdin=true&stdout=true&tty=true';
    const ws = new WebSocket(`${k.cp.url.replace('https', 'wss')}${path}`, ['v5.channel.k8s.io'], {
      ca: k.cp.clientConfig.caData,
      headers: { Authorization: `Bearer ${k.cp.clientConfig.token}` },
    });
    let out = '';
    let status = '';
    ws.on('message', (data: Buffer) => {
      if (data[0] === 1) out += data.subarray(1).toString();
      if (data[0] === 3) status += data.subarray(1).toString();
    });
    await once(ws, 'open');
    const send = (channel: number, text: string) =>
      ws.send(Buffer.concat([Buffer.from([channel]), Buffer.from(text)]));
    // As kubectl: the terminal size first, then what is typed. The markers are printed as
    // $(…) so that the terminal's echo of the typed line does not match them.
    send(4, JSON.stringify({ Width: 100, Height: 40 }));
    send(0, 'tty; until [ "$(stty size)" = "40 100" ]; do sleep 0.05; done; echo first$(echo -size)\n');
    await eventually(() => /\/dev\/pts\/\d+[\s\S]*first-size/.test(out), 10_000, 'the first size');
    send(4, JSON.stringify({ Width: 120, Height: 50 }));
    send(0, 'until [ "$(stty size)" = "50 120" ]; do sleep 0.05; done; echo re$(echo sized)\n');
    await eventually(() => out.includes('resized'), 10_000, 'the new size');
    send(0, 'exit 3\n');
    await once(ws, 'close');
    expect(JSON.parse(status)).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
  });

  it('port-forward: connects to the process port', async () => {
    const pf = k.spawn(['port-forward', 'pod/web', ':8080']);
    const port = Number(
      (await eventually(() => /Forwarding from 127\.0\.0\.1:(\d+) -> 8080/.exec(pf.output())))[1],
    );
    expect(await get('127.0.0.1', port, '/ready')).toBe('true');
    await pf.stop();
  });

  it('metrics: the process real memory and CPU', async () => {
    const m = JSON.parse(
      await k.ok(['get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web']),
    ) as { containers: { name: string; usage: { cpu: string; memory: string } }[] };
    const memoryKi = Number(m.containers[0]?.usage.memory.replace(/Ki$/, ''));
    // A Node.js process holds tens of MiB: far above a simulated pod's 8 MiB.
    expect(memoryKi).toBeGreaterThan(20 * 1024);
    const top = await k.ok(['top', 'pod', 'web', '--no-headers']);
    expect(top).toMatch(/^web\s+\d+m\s+\d+Mi/);
  });

  it('attach -i: what the client types reaches the process stdin, and its output comes back', async () => {
    await client.api(Pod, 'default').create({
      metadata: { name: 'cat' },
      spec: {
        nodeName: 'kubeloop-node-1',
        restartPolicy: 'Never',
        containers: [{ name: 'app', image: IMAGE, args: ['cat'], stdin: true, stdinOnce: true }],
      },
    });
    await eventually(async () => {
      const p = await client.api(Pod, 'default').get('cat');
      return p.status?.containerStatuses?.[0]?.state?.running;
    });
    const r = await k.run(['attach', '-i', 'cat'], { input: 'typed line\n', timeoutMs: 30_000 });
    expect(r.stdout).toContain('got typed line');
    // stdinOnce: the end of the client's input ended the process's, and so the container.
    expect(r.code).toBe(0);
    const p = await eventually(async () => {
      const got = await client.api(Pod, 'default').get('cat');
      return got.status?.phase === 'Succeeded' ? got : undefined;
    });
    expect(p.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
  });
});
