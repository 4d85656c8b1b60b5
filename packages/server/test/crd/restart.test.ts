/**
 * CRDs stored in a `--data-dir` are served again the moment a restarted server is ready: the
 * CRD modules (schema checks, CEL), which a new server loads only with its first CRD write, are
 * loaded by the start of a server that has stored CRDs, before it answers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { startControlPlane } from '../../src/control-plane.js';
import { crPath, establish, httpClient, simpleCrd } from './support.js';

const dataDir = mkdtempSync(join(tmpdir(), 'kubeloop-crd-restart-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const G = 'restart.example.com';
const start = () => startControlPlane({ port: 0, dataDir, controllers: false, log: () => undefined });

test('a restarted server serves its stored CRDs, with their schemas, as soon as it is ready', async () => {
  const crd = simpleCrd('widgets', 'Widget', G, {
    schema: {
      openAPIV3Schema: {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: { size: { type: 'integer', minimum: 1 } },
            'x-kubernetes-validations': [{ rule: 'self.size < 100', message: 'too big' }],
          },
        },
      },
    },
  });
  const first = await start();
  const http1 = httpClient(first);
  try {
    await establish(http1, crd);
    const created = await http1.post(crPath(G, 'v1', 'widgets'), {
      apiVersion: `${G}/v1`,
      kind: 'Widget',
      metadata: { name: 'w1' },
      spec: { size: 3 },
    });
    expect(created.status).toBe(201);
  } finally {
    http1.close();
    await first.stop();
  }

  const second = await start();
  const http2 = httpClient(second);
  try {
    // No waiting: what was served before the restart is served when the start resolves.
    const got = await http2.get(crPath(G, 'v1', 'widgets', 'w1'));
    expect(got.status).toBe(200);
    expect(got.json.spec).toEqual({ size: 3 });
    // The stored schema is compiled again: its bounds and its CEL rule still hold.
    const tooBig = await http2.post(crPath(G, 'v1', 'widgets'), {
      apiVersion: `${G}/v1`,
      kind: 'Widget',
      metadata: { name: 'w2' },
      spec: { size: 100 },
    });
    expect(tooBig.status).toBe(422);
    expect(tooBig.json.message).toContain('too big');
    const tooSmall = await http2.post(crPath(G, 'v1', 'widgets'), {
      apiVersion: `${G}/v1`,
      kind: 'Widget',
      metadata: { name: 'w3' },
      spec: { size: 0 },
    });
    expect(tooSmall.status).toBe(422);
  } finally {
    http2.close();
    await second.stop();
  }
});
