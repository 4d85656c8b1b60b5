/**
 * DELETE's finalizers for the garbage collector as kube's generic registry sets them
 * (`deletionFinalizersForGarbageCollection`), compared request by request with a real
 * kube-apiserver (the anchor's 1.24, checked unchanged in 1.32's sources):
 * - `orphan` and `foregroundDeletion` follow the request's policy, then the object's own, then
 *   the kind's default; an explicit Background removes them, and a delete of an object already
 *   being deleted changes them too (the local plane ignored the second delete);
 * - with no finalizer left the object is deleted at once;
 * - a v1 ReplicationController orphans its pods by default, an Event never waits (no dependents);
 * - a collection delete answers the objects as they were listed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../src/testing/http.js';
import { httpClient } from './http.js';
import { type KubectlEnv, startKubectlEnv } from './kubectl.js';

let env: KubectlEnv;
let http: ReturnType<typeof httpClient>;

const NS = '/api/v1/namespaces/default';
const CM = `${NS}/configmaps`;

beforeAll(async () => {
  // No garbage collector: the finalizers stay as the API server left them.
  env = await startKubectlEnv({ controllers: false });
  http = httpClient(env.cp);
});
afterAll(() => env?.stop());

async function configMap(name: string, finalizers?: string[]): Promise<void> {
  const r = await http.post(CM, { metadata: { name, ...(finalizers && { finalizers }) } });
  expect(r.status, r.text).toBe(201);
}

/** The object's finalizers, or undefined once it is gone. */
async function finalizers(path: string): Promise<string[] | undefined> {
  const r = await http.get(path);
  if (r.status === 404) return undefined;
  expect(r.status, r.text).toBe(200);
  expect(r.json.metadata.deletionTimestamp).toBeTruthy();
  return r.json.metadata.finalizers ?? [];
}

const del = (path: string, body?: Json) => http.delete(path, body === undefined ? undefined : { body });

describe('a delete of an object already being deleted', () => {
  it('moves the garbage collector finalizers to the new policy', async () => {
    await configMap('again', ['example.com/x']);
    expect((await del(`${CM}/again`)).status).toBe(200);
    expect(await finalizers(`${CM}/again`)).toEqual(['example.com/x']);
    await del(`${CM}/again`, { propagationPolicy: 'Foreground' });
    expect(await finalizers(`${CM}/again`)).toEqual(['example.com/x', 'foregroundDeletion']);
    await del(`${CM}/again`, { propagationPolicy: 'Orphan' });
    expect(await finalizers(`${CM}/again`)).toEqual(['example.com/x', 'orphan']);
    await del(`${CM}/again`, { propagationPolicy: 'Background' });
    expect(await finalizers(`${CM}/again`)).toEqual(['example.com/x']);
    // Dry run changes nothing.
    await del(`${CM}/again?dryRun=All`);
    const dry = await http.delete(`${CM}/again?dryRun=All&propagationPolicy=Foreground`);
    expect(dry.json.metadata.finalizers).toEqual(['example.com/x', 'foregroundDeletion']);
    expect(await finalizers(`${CM}/again`)).toEqual(['example.com/x']);
    await http.patch(`${CM}/again`, { metadata: { finalizers: null } }, 'application/merge-patch+json');
    expect(await finalizers(`${CM}/again`)).toBeUndefined();
  });

  it('deletes it at once when the new policy leaves no finalizer', async () => {
    await configMap('fg');
    await del(`${CM}/fg`, { propagationPolicy: 'Foreground' });
    expect(await finalizers(`${CM}/fg`)).toEqual(['foregroundDeletion']);
    const r = await del(`${CM}/fg`, { propagationPolicy: 'Background' });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'fg' } });
    expect(await finalizers(`${CM}/fg`)).toBeUndefined();
  });
});

describe('a first delete', () => {
  it("drops an object's own orphan finalizer under an explicit Background", async () => {
    await configMap('own-orphan', ['orphan']);
    const r = await del(`${CM}/own-orphan`, { propagationPolicy: 'Background' });
    expect(r.json).toMatchObject({ kind: 'Status', status: 'Success' });
    expect(await finalizers(`${CM}/own-orphan`)).toBeUndefined();
  });

  it('keeps an object’s own orphan finalizer when no policy is given', async () => {
    await configMap('kept-orphan', ['orphan']);
    await del(`${CM}/kept-orphan`);
    expect(await finalizers(`${CM}/kept-orphan`)).toEqual(['orphan']);
  });

  it('takes orphanDependents=false as neither orphan nor foreground: deleted, a Success Status', async () => {
    await configMap('no-orphan', ['foregroundDeletion']);
    const r = await http.delete(`${CM}/no-orphan?orphanDependents=false`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ kind: 'Status', status: 'Success' });
    expect(await finalizers(`${CM}/no-orphan`)).toBeUndefined();
  });
});

describe("the kind's default policy", () => {
  it('orphans a v1 ReplicationController’s pods unless told otherwise', async () => {
    const rc = (name: string) => ({
      metadata: { name },
      spec: {
        replicas: 0,
        selector: { app: name },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    });
    for (const name of ['rc-raw', 'rc-kubectl'])
      expect((await http.post(`${NS}/replicationcontrollers`, rc(name))).status).toBe(201);
    await del(`${NS}/replicationcontrollers/rc-raw`);
    expect(await finalizers(`${NS}/replicationcontrollers/rc-raw`)).toEqual(['orphan']);
    // kubectl asks for Background: no orphan finalizer.
    await env.ok(['delete', 'rc', 'rc-kubectl', '--wait=false']);
    expect(await finalizers(`${NS}/replicationcontrollers/rc-kubectl`)).toBeUndefined();
  });

  it('never adds a finalizer to an Event, whatever the policy', async () => {
    for (const [path, body] of [
      [
        `${NS}/events`,
        { metadata: { name: 'ev' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' } },
      ],
      [
        '/apis/events.k8s.io/v1/namespaces/default/events',
        {
          metadata: { name: 'ev2' },
          eventTime: '2026-01-01T00:00:00.000000Z',
          reportingController: 'x.io/c',
          reportingInstance: 'i',
          action: 'A',
          reason: 'R',
          type: 'Normal',
        },
      ],
    ] as const) {
      const created = await http.post(path, body);
      expect(created.status, created.text).toBe(201);
      const r = await del(`${path}/${body.metadata.name}`, { propagationPolicy: 'Foreground' });
      expect(r.json).toMatchObject({ kind: 'Status', status: 'Success' });
      expect((await http.get(`${path}/${body.metadata.name}`)).status).toBe(404);
    }
  });
});

describe('DELETE of a collection', () => {
  it('answers the objects as they were listed, before their deletion began', async () => {
    await configMap('dc-a', ['example.com/x']);
    await configMap('dc-b');
    const r = await http.delete(`${CM}?fieldSelector=metadata.name%3Ddc-a`);
    expect(r.status).toBe(200);
    expect(r.json.items.map((i: Json) => [i.metadata.name, i.metadata.deletionTimestamp])).toEqual([
      ['dc-a', undefined],
    ]);
    expect(await finalizers(`${CM}/dc-a`)).toEqual(['example.com/x']);
    expect((await http.get(`${CM}/dc-b`)).status).toBe(200);
    await http.patch(`${CM}/dc-a`, { metadata: { finalizers: [] } }, 'application/merge-patch+json');
  });
});
