/**
 * CRD conversion through `kubeloop/webhook` end to end on the local control plane: the SDK's
 * `/convert` named in the CRD (URL client config and its CA), a list and a watch read with
 * kubectl at the spoke version.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type KubectlEnv, startKubectlEnv } from '@kubeloop/server/testing';
import { defineResource, Type } from 'kubeloop';
import { toYaml, webhookConfigurations, withConversionWebhook } from 'kubeloop/manifests';
import { conversion, validator, WebhookServer } from 'kubeloop/webhook';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const GROUP = 'conversions.kubeloop.dev';

// A kind of two versions converted by the SDK's /convert (v1 the hub, v2 a spoke).
const Bar = defineResource({
  group: GROUP,
  kind: 'Bar',
  versions: {
    v1: {
      spec: Type.Object({ deploymentName: Type.String(), replicas: Type.Optional(Type.Integer()) }),
      storage: true,
    },
    v2: {
      spec: Type.Object({
        deployment: Type.Object({ name: Type.String(), replicas: Type.Optional(Type.Integer()) }),
      }),
    },
  },
});

const barConversion = conversion(Bar, {
  hub: 'v1',
  spokes: {
    v2: {
      toHub: (o) => ({
        metadata: o.metadata,
        spec: { deploymentName: o.spec.deployment.name, replicas: o.spec.deployment.replicas },
      }),
      fromHub: (h) => ({
        metadata: h.metadata,
        spec: {
          deployment: {
            name: h.spec.deploymentName,
            ...(h.spec.replicas !== undefined && { replicas: h.spec.replicas }),
          },
        },
      }),
    },
  },
});

let k: KubectlEnv;
let dir: string;
let server: WebhookServer;

const bar = (name: string, spec: Record<string, unknown>) =>
  toYaml([{ apiVersion: `${GROUP}/v1`, kind: 'Bar', metadata: { name, namespace: 'default' }, spec }]);

beforeAll(async () => {
  k = await startKubectlEnv();
  dir = await mkdtemp(join(tmpdir(), 'kubeloop-conversion-e2e-'));
  // No certificates in the directory: the server makes its CA, which the CRD then names.
  server = new WebhookServer({ port: 0, certDir: dir }).register(
    barConversion,
    // Registered for v1 only: a write at v2 reaches it converted (matchPolicy Equivalent).
    validator(Bar, {
      update: (old, bar) => ({ warnings: [`replicas ${old.spec.replicas} → ${bar.spec.replicas}`] }),
    }),
  );
  await server.listen();
  const crd = withConversionWebhook(Bar.crd(), { target: { url: server.url }, caBundle: server.caBundle });
  await k.ok(['apply', '-f', '-'], { input: toYaml([crd]) });
  await k.ok(['wait', '--for=condition=Established', `crd/bars.${GROUP}`]);
  const configs = webhookConfigurations(server.webhooks, {
    target: { url: server.url },
    caBundle: server.caBundle,
  });
  await k.ok(['apply', '-f', '-'], { input: toYaml(configs) });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await k?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('conversion through the API server', () => {
  it('lists and watches v2 through the SDK’s /convert', async () => {
    await k.ok(['apply', '-f', '-'], { input: bar('conv', { deploymentName: 'web', replicas: 3 }) });
    const list = JSON.parse(await k.ok(['get', `bars.v2.${GROUP}`, '-o', 'json'])) as {
      items: Array<{ apiVersion: string; metadata: { name: string }; spec: unknown }>;
    };
    const conv = list.items.find((i) => i.metadata.name === 'conv');
    expect(conv?.apiVersion).toBe(`${GROUP}/v2`);
    expect(conv?.spec).toEqual({ deployment: { name: 'web', replicas: 3 } });

    const watch = k.spawn(['get', `bars.v2.${GROUP}`, '--watch', '--output-watch-events', '-o', 'json']);
    try {
      await k.ok(['apply', '-f', '-'], { input: bar('watched', { deploymentName: 'api', replicas: 2 }) });
      // The watch prints events as they come; the new object's is the one this test waits for.
      for (let i = 0; i < 300 && !watch.output().includes('"api"'); i++)
        await new Promise((r) => setTimeout(r, 50));
      const events = watch
        .output()
        .trim()
        .split('\n')
        .map(
          (l) =>
            JSON.parse(l) as {
              type: string;
              object: { apiVersion: string; metadata: { name: string }; spec: unknown };
            },
        );
      const seen = events.find((e) => e.object.metadata.name === 'watched');
      expect(seen).toMatchObject({
        type: 'ADDED',
        object: { apiVersion: `${GROUP}/v2`, spec: { deployment: { name: 'api', replicas: 2 } } },
      });
    } finally {
      await watch.stop();
    }
  });

  it('passes a write at v2 to the v1 webhooks, converted through /convert both ways', async () => {
    await k.ok(['apply', '-f', '-'], { input: bar('upd', { deploymentName: 'web', replicas: 3 }) });
    const r = await k.run([
      'patch',
      `bars.v2.${GROUP}`,
      'upd',
      '--type=merge',
      '-p',
      '{"spec":{"deployment":{"replicas":5}}}',
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Warning: replicas 3 → 5');
    expect(await k.ok(['get', `bars.v1.${GROUP}`, 'upd', '-o', 'jsonpath={.spec.replicas}'])).toBe('5');
  });
});
