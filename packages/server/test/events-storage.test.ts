import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../src/index.js';
import { httpClient } from './http.js';
import { eventually } from './kubectl.js';

const CORE = '/api/v1/namespaces/default/events';
const V1 = '/apis/events.k8s.io/v1/namespaces/default/events';

const newStyle = (name: string, regarding: string) => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name, namespace: 'default' },
  eventTime: '2026-11-21T10:00:00.000000Z',
  reportingController: 'example.com/foo-controller',
  reportingInstance: 'foo-controller-0',
  action: 'Reconcile',
  reason: 'ErrResourceExists',
  regarding: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: regarding, uid: 'u-1' },
  note: 'Resource "taken" already exists and is not managed by Foo',
  type: 'Warning',
});

describe('core/v1 and events.k8s.io/v1 Events are one collection, as in kube-apiserver', () => {
  let cp: ControlPlane;
  let http: ReturnType<typeof httpClient>;

  beforeAll(async () => {
    cp = await startTestEnv({ controllers: false });
    http = httpClient(cp);
  });
  afterAll(() => cp.stop());

  it('an events.k8s.io event is a core event with the core field names', async () => {
    const made = await http.post(V1, newStyle('a.1', 'cm-a'));
    expect(made.status).toBe(201);
    expect(made.json.apiVersion).toBe('events.k8s.io/v1');
    expect(made.json.note).toBe('Resource "taken" already exists and is not managed by Foo');

    const core = await http.get(`${CORE}/a.1`);
    expect(core.status).toBe(200);
    expect(core.json).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      involvedObject: { kind: 'ConfigMap', name: 'cm-a', uid: 'u-1' },
      reason: 'ErrResourceExists',
      message: 'Resource "taken" already exists and is not managed by Foo',
      source: {},
      firstTimestamp: null,
      lastTimestamp: null,
      type: 'Warning',
      eventTime: '2026-11-21T10:00:00.000000Z',
      action: 'Reconcile',
      reportingComponent: 'example.com/foo-controller',
      reportingInstance: 'foo-controller-0',
    });
    expect(core.json).not.toHaveProperty('note');
    expect(core.json).not.toHaveProperty('regarding');
    expect(core.json.metadata.uid).toBe(made.json.metadata.uid);
    expect(core.json.metadata.resourceVersion).toBe(made.json.metadata.resourceVersion);
  });

  it('a core event reads through events.k8s.io with its deprecated* fields', async () => {
    const made = await http.post(CORE, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'b.1', namespace: 'default' },
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
      reason: 'Scheduled',
      message: 'Successfully assigned default/p to node-1',
      source: { component: 'default-scheduler' },
      firstTimestamp: '2026-11-21T10:00:00Z',
      lastTimestamp: '2026-11-21T10:00:05Z',
      count: 2,
      type: 'Normal',
    });
    expect(made.status).toBe(201);
    const v1 = await http.get(`${V1}/b.1`);
    expect(v1.status).toBe(200);
    expect(v1.json).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      regarding: { kind: 'Pod', name: 'p' },
      reason: 'Scheduled',
      note: 'Successfully assigned default/p to node-1',
      type: 'Normal',
      deprecatedSource: { component: 'default-scheduler' },
      deprecatedFirstTimestamp: '2026-11-21T10:00:00Z',
      deprecatedLastTimestamp: '2026-11-21T10:00:05Z',
      deprecatedCount: 2,
      eventTime: null,
    });
    expect(v1.json).not.toHaveProperty('message');
    expect(v1.json).not.toHaveProperty('involvedObject');
  });

  it('lists, field selectors and watches see both, each in its own spelling', async () => {
    const coreList = await http.get(CORE);
    const v1List = await http.get(V1);
    const names = (l: { items: Array<{ metadata: { name: string } }> }) =>
      l.items.map((i) => i.metadata.name);
    expect(names(coreList.json)).toEqual(expect.arrayContaining(['a.1', 'b.1']));
    expect(names(v1List.json)).toEqual(names(coreList.json));
    // Items of a built-in list carry no type meta; each is in events.k8s.io's spelling.
    expect(v1List.json.apiVersion).toBe('events.k8s.io/v1');
    expect(
      v1List.json.items.every(
        (i: Record<string, unknown>) => !('apiVersion' in i) && !('involvedObject' in i),
      ),
    ).toBe(true);

    const byRegarding = await http.get(`${V1}?fieldSelector=regarding.name%3Dcm-a`);
    expect(names(byRegarding.json)).toEqual(['a.1']);
    const byInvolved = await http.get(`${CORE}?fieldSelector=involvedObject.name%3Dcm-a`);
    expect(names(byInvolved.json)).toEqual(['a.1']);

    const rv = coreList.json.metadata.resourceVersion as string;
    const coreWatch = http.watch(`${CORE}?watch=true&resourceVersion=${rv}`);
    await http.post(V1, newStyle('c.1', 'cm-c'));
    await eventually(() => expect(coreWatch.events.map((e) => e.object.metadata.name)).toContain('c.1'));
    const added = coreWatch.events.find((e) => e.object.metadata.name === 'c.1');
    expect(added.type).toBe('ADDED');
    expect(added.object.apiVersion).toBe('v1');
    expect(added.object.message).toBe('Resource "taken" already exists and is not managed by Foo');
    coreWatch.close();
  });

  it('updates through events.k8s.io keep the immutable fields and only change what changed', async () => {
    const current = (await http.get(`${V1}/a.1`)).json;
    const same = await http.put(`${V1}/a.1`, current);
    expect(same.status).toBe(200);
    expect(same.json.metadata.resourceVersion).toBe(current.metadata.resourceVersion);

    const series = await http.patch(
      `${V1}/a.1`,
      { series: { count: 2, lastObservedTime: '2026-11-21T10:01:00.000000Z' } },
      'application/merge-patch+json',
    );
    expect(series.status).toBe(200);
    expect(series.json.series.count).toBe(2);
    expect((await http.get(`${CORE}/a.1`)).json.series).toEqual({
      count: 2,
      lastObservedTime: '2026-11-21T10:01:00.000000Z',
    });

    const changed = await http.patch(`${V1}/a.1`, { note: 'other' }, 'application/merge-patch+json');
    expect(changed.status).toBe(422);
    expect(changed.json.message).toContain('message: Invalid value');
  });

  it('a delete through one API removes the event from both', async () => {
    expect((await http.delete(`${CORE}/a.1`)).status).toBe(200);
    expect((await http.get(`${V1}/a.1`)).status).toBe(404);
    expect((await http.delete(`${V1}/b.1`)).status).toBe(200);
    expect((await http.get(`${CORE}/b.1`)).status).toBe(404);
  });
});
