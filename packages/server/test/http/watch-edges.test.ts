/**
 * Watch edges: an object leaving a selector is DELETED with the state that matched; one entering
 * it is ADDED with its new state; a timeout beyond a Node timer's range is still a timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { httpClient } from '../http.js';
import { eventually } from '../kubectl.js';

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
});
afterAll(async () => {
  http?.close();
  await cp?.stop();
});

const CM = '/api/v1/namespaces/default/configmaps';
const merge = (name: string, patch: unknown) =>
  http.patch(`${CM}/${name}`, patch, 'application/merge-patch+json');

describe('selectors', () => {
  it('leaving a label selector: DELETED with the previous state at the new revision; entering: ADDED', async () => {
    const created = await http.post(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'sel', labels: { team: 'a' } },
      data: { v: '1' },
    });
    expect(created.status).toBe(201);
    const w = http.watch(
      `${CM}?watch=true&labelSelector=team%3Da&resourceVersion=${created.json.metadata.resourceVersion}`,
    );
    try {
      const left = await merge('sel', { metadata: { labels: { team: 'b' } }, data: { v: '2' } });
      expect(left.status).toBe(200);
      const back = await merge('sel', { metadata: { labels: { team: 'a' } }, data: { v: '3' } });
      expect(back.status).toBe(200);
      await eventually(() => w.events.length >= 2, 10_000, 'two events');
      const [deleted, added] = w.events;
      expect(deleted.type).toBe('DELETED');
      expect(deleted.object.metadata.labels).toEqual({ team: 'a' });
      expect(deleted.object.data).toEqual({ v: '1' });
      expect(deleted.object.metadata.resourceVersion).toBe(left.json.metadata.resourceVersion);
      expect(added.type).toBe('ADDED');
      expect(added.object.data).toEqual({ v: '3' });
      expect(added.object.metadata.resourceVersion).toBe(back.json.metadata.resourceVersion);
    } finally {
      w.close();
    }
  });

  it('leaving a field selector: DELETED with the previous state', async () => {
    const created = await http.post(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'fsel' },
      data: { v: '1' },
    });
    const w = http.watch(
      `${CM}?watch=true&fieldSelector=metadata.name%3Dfsel&resourceVersion=${created.json.metadata.resourceVersion}`,
    );
    try {
      // A pod's phase is a field selector that changes; for ConfigMaps, deletion is the only exit.
      const ok = await http.delete(`${CM}/fsel`);
      expect(ok.status).toBe(200);
      const ev = await eventually(() => w.events[0], 10_000, 'the DELETED event');
      expect(ev.type).toBe('DELETED');
      expect(ev.object.data).toEqual({ v: '1' });
    } finally {
      w.close();
    }
  });

  it('a pod leaving a status.phase field selector is DELETED with the phase that matched', async () => {
    const pods = '/api/v1/namespaces/default/pods';
    const created = await http.post(pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'phase' },
      spec: { nodeName: 'nowhere', containers: [{ name: 'c', image: 'busybox' }] },
    });
    expect(created.status, created.text).toBe(201);
    const current = await http.get(`${pods}/phase`);
    const phase = current.json.status?.phase ?? 'Pending';
    const w = http.watch(
      `${pods}?watch=true&fieldSelector=status.phase%3D${phase}&resourceVersion=${current.json.metadata.resourceVersion}`,
    );
    try {
      const other = phase === 'Failed' ? 'Succeeded' : 'Failed';
      const r = await http.patch(
        `${pods}/phase/status`,
        { status: { phase: other } },
        'application/merge-patch+json',
      );
      expect(r.status, r.text).toBe(200);
      const ev = await eventually(
        () => w.events.find((e) => e.type === 'DELETED'),
        10_000,
        'the DELETED event',
      );
      expect(ev.object.status.phase).toBe(phase);
      expect(ev.object.metadata.resourceVersion).toBe(r.json.metadata.resourceVersion);
    } finally {
      w.close();
    }
  });
});

describe('timeoutSeconds', () => {
  it.each([2_147_484, 99_999_999_999])('%s seconds: the watch stays open and delivers events', async (s) => {
    const list = await http.get(CM);
    const w = http.watch(
      `${CM}?watch=true&timeoutSeconds=${s}&resourceVersion=${list.json.metadata.resourceVersion}`,
    );
    try {
      await eventually(() => w.status === 200, 10_000, 'the watch to start');
      const name = `long-${s}`;
      expect((await http.post(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } })).status).toBe(
        201,
      );
      const ev = await eventually(
        () => w.events.find((e) => e.object?.metadata?.name === name),
        10_000,
        'the event',
      );
      expect(ev.type).toBe('ADDED');
      expect(w.ended).toBe(false);
    } finally {
      w.close();
    }
  });
});
