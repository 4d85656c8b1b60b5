import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { Client, Endpoints, Pod, Service } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { writeTestImage } from './app.js';

let k: KubectlEnv;
let client: Client;
let imageDir: string;
const IMAGE = 'example.com/svc:dev';

function get(host: string, port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // A connection per request: the proxy balances connections.
    const req = request({ host, port, path, agent: false }, (res) => {
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
});
afterAll(async () => {
  await client.close();
  await k.stop();
  rmSync(imageDir, { recursive: true, force: true });
});

describe('Services of process-backed pods', () => {
  it('list the pods loopback IPs as endpoints, and answer at the loopback address of their ClusterIP', async () => {
    for (const name of ['svc-a', 'svc-b'])
      await client.api(Pod, 'default').create({
        metadata: { name, labels: { app: 'svc' } },
        spec: {
          nodeName: 'kubeloop-node-1',
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'app',
              image: IMAGE,
              ports: [{ name: 'http', containerPort: 8080 }],
              readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 1 },
            },
          ],
        },
      });
    const svc = await client.api(Service, 'default').create({
      metadata: { name: 'web' },
      spec: { selector: { app: 'svc' }, ports: [{ name: 'web', port: 8081, targetPort: 'http' }] },
    });
    const ep = await eventually(
      async () => {
        const e = await client
          .api(Endpoints, 'default')
          .get('web')
          .catch(() => undefined);
        return (e?.subsets?.[0]?.addresses?.length ?? 0) === 2 ? e : undefined;
      },
      15_000,
      'two ready endpoints',
    );
    for (const a of ep.subsets?.[0]?.addresses ?? []) expect(a.ip).toMatch(/^127\.244\./);
    expect(ep.subsets?.[0]?.ports?.[0]?.port).toBe(8080);
    // EndpointSlices too (where kube-apiserver's webhook client looks for a Service's endpoints).
    const want = (ep.subsets?.[0]?.addresses ?? []).map((a) => a.ip).sort();
    await eventually(
      async () => {
        const slices = await client.request<{ items: { endpoints: { addresses: string[] }[] }[] }>(
          'GET',
          '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb',
        );
        const got = slices.items.flatMap((sl) => sl.endpoints.flatMap((e) => e.addresses)).sort();
        return JSON.stringify(got) === JSON.stringify(want);
      },
      10_000,
      'the EndpointSlice addresses',
    );

    const address = `127.${svc.spec?.clusterIP?.split('.').slice(1).join('.')}`;
    // Round robin over both pods.
    const hosts = new Set<string>();
    await eventually(
      async () => {
        const env = JSON.parse(await get(address, 8081, '/env').catch(() => '{}'));
        if (env.HOSTNAME) hosts.add(env.HOSTNAME);
        return hosts.size === 2;
      },
      10_000,
      'both pods answering through the Service',
    );
    expect([...hosts].sort()).toEqual(['svc-a', 'svc-b']);
  });

  it('resolve Service DNS names for the pods processes: short, namespaced and full; others not found', async () => {
    // In a pod of the Service above: its name through the search list, then fully qualified.
    const script = `
      const http = require('node:http');
      const get = (url) => new Promise((resolve) => http.get(url, (r) => { let b = ''; r.on('data', (d) => (b += d)); r.on('end', () => resolve(JSON.parse(b).HOSTNAME)); }).on('error', (e) => resolve(e.code)));
      (async () => {
        for (const host of ['web', 'web.default', 'web.default.svc.cluster.local', 'nope.default.svc.cluster.local'])
          console.log(host, await get('http://' + host + ':8081/env'));
      })();`;
    const out = await eventually(
      async () => {
        const text = await k.ok(['exec', 'svc-a', '--', 'node', '-e', script]);
        return text.includes('ENOTFOUND') && !/web\S* (ENOTFOUND|ECONNREFUSED)/.test(text) ? text : undefined;
      },
      10_000,
      'the names resolved',
    );
    const lines = out.trim().split('\n');
    for (const line of lines.slice(0, 3)) expect(line).toMatch(/^web\S* svc-[ab]$/);
    expect(lines[3]).toBe('nope.default.svc.cluster.local ENOTFOUND');
  });
});
