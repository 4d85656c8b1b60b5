import { rmSync } from 'node:fs';
import { Client, Pod } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../../src/testing/index.js';
import { eventually } from '../kubectl.js';
import { writeTestImage } from './app.js';

/**
 * Two control planes on one machine (two projects, or test files run in parallel) each run a
 * process-backed pod serving port 8080: pod addresses come from the loopback range the machine
 * shares, so each plane must give its pods addresses the other does not use.
 */
const IMAGE = 'example.com/two-planes:dev';
let imageDir: string;
const envs: TestEnv[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  imageDir = writeTestImage();
  for (let i = 0; i < 2; i++) {
    const env = await startTestEnv({
      nodes: {
        count: 1,
        processes: { images: { [IMAGE]: { dir: imageDir, entrypoint: ['node', 'server.js'] } } },
      },
    });
    envs.push(env);
    clients.push(new Client(env.clientConfig));
  }
});
afterAll(async () => {
  for (const c of clients) await c.close();
  for (const e of envs) await e.stop();
  rmSync(imageDir, { recursive: true, force: true });
});

describe('process-backed pods of two control planes', () => {
  it('each plane’s pod listens on its own address: both run, neither fails with EADDRINUSE', async () => {
    for (const c of clients) {
      await c.api(Pod, 'default').create({
        metadata: { name: 'web' },
        spec: {
          nodeName: 'kubeloop-node-1',
          containers: [{ name: 'app', image: IMAGE, ports: [{ containerPort: 8080 }] }],
        },
      });
    }
    const ready = await Promise.all(
      clients.map((c) =>
        eventually(
          async () => {
            const p = await c.api(Pod, 'default').get('web');
            const ok = p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True');
            return ok ? p : undefined;
          },
          20_000,
          'the pod Ready',
        ),
      ),
    );
    const [a, b] = ready.map((p) => p.status?.podIP);
    expect(a).toMatch(/^127\.244\./);
    expect(b).toMatch(/^127\.244\./);
    expect(a).not.toBe(b);
    for (const p of ready) expect(p.status?.containerStatuses?.[0]?.restartCount).toBe(0);
  });
});
