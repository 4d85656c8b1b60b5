/**
 * The webhook server inside a Manager, against the local control plane: it listens before the
 * caches sync, `/readyz` follows it, handlers read the manager's cache, its metrics are on the
 * manager's `/metrics`, and the manager's stop closes it.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigMap } from 'kubeloop/client';
import { fieldErrors, validator, WebhookServer } from 'kubeloop/webhook';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fetchText,
  type RuntimeEnv,
  run,
  sample,
  startRuntimeEnv,
  testManager,
  Widget,
} from '../runtime/controller/helpers.js';

let t: RuntimeEnv;
let dir: string;
beforeAll(async () => {
  t = await startRuntimeEnv();
  dir = await mkdtemp(join(tmpdir(), 'kubeloop-webhook-mgr-'));
});
afterAll(async () => {
  await t.stop();
  await rm(dir, { recursive: true, force: true });
});

function post(server: WebhookServer, path: string, body: unknown): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${server.url}${path}`,
      { method: 'POST', ca: server.caBundle, agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('WebhookServer in a Manager', () => {
  it('is ready with the manager, reads its cache, reports on its /metrics, and stops with it', async () => {
    const ns = 'wh-manager';
    await t.namespace(ns);
    await t.client.api(ConfigMap, ns).create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'taken', namespace: ns },
    });
    const m = testManager(t.newClient());
    const server = new WebhookServer({ port: 0, certDir: dir }).register(
      validator(Widget, {
        // A name already used by a ConfigMap is refused: the cache of the manager answers.
        create: async (w, ctx) => {
          const clash = await ctx.cache?.get(ConfigMap, w.metadata?.name ?? '', w.metadata?.namespace);
          return clash ? { errors: [fieldErrors.duplicate('metadata.name', w.metadata?.name)] } : undefined;
        },
      }),
    );
    server.setupWithManager(m);
    // The informer the handler reads is asked for up front, so the manager's sync covers it.
    m.add({
      name: 'configmaps',
      prepare: ({ cache }) => void cache.list(ConfigMap, { namespace: ns }),
      start: () => {},
    });
    const { done } = await run(m);
    expect((await fetchText(`${m.healthUrl}/readyz`)).status).toBe(200);

    const review = (name: string) => ({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: name,
        kind: { group: 'runtime.kubeloop.dev', version: 'v1', kind: 'Widget' },
        resource: { group: 'runtime.kubeloop.dev', version: 'v1', resource: 'widgets' },
        operation: 'CREATE',
        userInfo: { username: 'alice' },
        namespace: ns,
        name,
        object: {
          apiVersion: 'runtime.kubeloop.dev/v1',
          kind: 'Widget',
          metadata: { name, namespace: ns },
          spec: { size: 1 },
        },
      },
    });
    const path = '/validate-runtime-kubeloop-dev-v1-widget';
    const refused = await post(server, path, review('taken'));
    expect(refused.response).toMatchObject({
      allowed: false,
      status: {
        code: 422,
        reason: 'Invalid',
        message: 'Widget.runtime.kubeloop.dev "taken" is invalid: metadata.name: Duplicate value: "taken"',
      },
    });
    expect((await post(server, path, review('free'))).response.allowed).toBe(true);

    const metrics = (await fetchText(`${m.metricsUrl}/metrics`)).text;
    expect(sample(metrics, 'controller_runtime_webhook_requests_total', { webhook: path, code: '200' })).toBe(
      2,
    );
    expect(sample(metrics, 'controller_runtime_webhook_requests_in_flight', { webhook: path })).toBe(0);
    expect(sample(metrics, 'controller_runtime_webhook_latency_seconds_count', { webhook: path })).toBe(2);

    // Readiness follows the server: closed, the manager is not ready.
    const url = server.url;
    await server.close();
    expect((await fetchText(`${m.healthUrl}/readyz`)).status).toBe(500);

    await m.stop();
    await done;
    await expect(fetch(url)).rejects.toThrow();
  });
});
