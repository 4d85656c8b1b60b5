import { rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Client, Pod } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { writeTestImage } from './app.js';

let k: KubectlEnv;
let client: Client;
let imageDir: string;
const IMAGE = 'example.com/probed:dev';

beforeAll(async () => {
  imageDir = writeTestImage();
  k = await startKubectlEnv({
    nodes: {
      count: 1,
      processes: {
        images: { [IMAGE]: { dir: imageDir, entrypoint: ['node', 'server.js'] } },
        backoffScale: 0.01,
      },
    },
  });
  client = new Client(k.cp.clientConfig);
});
afterAll(async () => {
  await client.close();
  await k.stop();
  rmSync(imageDir, { recursive: true, force: true });
});

function get(ip: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: ip, port: 8080, path }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

const pods = () => client.api(Pod, 'default');
const create = (name: string, container: Record<string, unknown>) =>
  pods().create({
    metadata: { name },
    spec: {
      nodeName: 'kubeloop-node-1',
      terminationGracePeriodSeconds: 1,
      containers: [
        { name: 'app', image: IMAGE, ports: [{ name: 'http', containerPort: 8080 }], ...container },
      ],
    },
  });
const readyOf = (p: Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status;
const until = (name: string, check: (p: Pod) => boolean, what: string) =>
  eventually(
    async () => {
      const p = await pods().get(name);
      return check(p) ? p : undefined;
    },
    20_000,
    what,
  );

describe('probes of process-backed pods', () => {
  it('readiness: the pod is Ready while its HTTP probe succeeds, and not while it fails', async () => {
    await create('ready', {
      args: ['unready'],
      readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 1, failureThreshold: 1 },
    });
    const running = await until(
      'ready',
      (p) => p.status?.containerStatuses?.[0]?.state?.running !== undefined,
      'running',
    );
    expect(readyOf(running)).toBe('False');
    const ip = running.status?.podIP ?? '';
    await eventually(() => get(ip, '/set-ready?v=true').catch(() => undefined));
    await until('ready', (p) => readyOf(p) === 'True', 'Ready');
    await get(ip, '/set-ready?v=false');
    const unready = await until('ready', (p) => readyOf(p) === 'False', 'not Ready');
    // Not ready is not restarted.
    expect(unready.status?.containerStatuses?.[0]?.restartCount).toBe(0);
  });

  it('liveness: a container whose probe fails is killed and restarted', async () => {
    await create('live', {
      args: ['unready'],
      livenessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 1, failureThreshold: 2 },
      readinessProbe: { tcpSocket: { port: 'http' }, periodSeconds: 1 },
    });
    const p = await until(
      'live',
      (x) => (x.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1,
      'restart',
    );
    expect(p.status?.containerStatuses?.[0]?.lastState?.terminated).toBeDefined();
    const previous = await k.ok(['logs', 'live', '--previous']);
    expect(previous).toContain('got SIGTERM');
    expect(previous).toContain('failed liveness probe, will be restarted');
  });

  it('grpc: the pod is Ready once its process answers grpc.health.v1 SERVING', async () => {
    await create('grpc', {
      env: [{ name: 'GRPC_PORT', value: '9090' }],
      readinessProbe: { grpc: { port: 9090 }, periodSeconds: 1 },
    });
    const p = await until('grpc', (x) => readyOf(x) === 'True', 'Ready');
    expect(p.status?.containerStatuses?.[0]?.ready).toBe(true);
  });

  it('startup: the container is not started nor ready until its exec probe succeeds in its working directory', async () => {
    await create('slow', {
      startupProbe: {
        exec: { command: ['node', '-e', 'process.exit(require("fs").existsSync("started") ? 0 : 1)'] },
        periodSeconds: 1,
        failureThreshold: 60,
      },
    });
    const running = await until(
      'slow',
      (p) => p.status?.containerStatuses?.[0]?.state?.running !== undefined,
      'running',
    );
    expect(running.status?.containerStatuses?.[0]).toMatchObject({ started: false, ready: false });
    const env = JSON.parse(
      await eventually(() => get(running.status?.podIP ?? '', '/env').catch(() => undefined)),
    );
    writeFileSync(join(env.KUBELOOP_ROOT, 'app', 'started'), '');
    const started = await until('slow', (p) => readyOf(p) === 'True', 'Ready');
    expect(started.status?.containerStatuses?.[0]).toMatchObject({
      started: true,
      ready: true,
      restartCount: 0,
    });
  });
});
