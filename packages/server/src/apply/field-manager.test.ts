import { ApiError } from 'kubeloop/api';
import { describe, expect, it } from 'vitest';
import { Registry } from '../registry/registry.js';
import type { ResourceType } from '../registry/types.js';
import {
  applyConfiguration,
  fieldManagerCauses,
  LAST_APPLIED_ANNOTATION,
  managerOrUserAgent,
  updateManagedFields,
} from './field-manager.js';
import { manageScaleFields, scaleWithManagedFields } from './hooks.js';
import { decodeManagedFields, managerIdentifier, printManager } from './managed-fields.js';

type Obj = Record<string, any>;
const registry = new Registry();
const configMaps = registry.lookup('', 'v1', 'configmaps') as ResourceType;
const deployments = registry.lookup('apps', 'v1', 'deployments') as ResourceType;
const T1 = '2024-05-01T10:00:00Z';
const T2 = '2024-05-01T11:00:00Z';

const cm = (data: Obj, extra: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'default', ...extra },
  data,
});
/** A stored object: what the registry hands the field manager as `live`. */
const stored = (o: Obj): Obj => ({
  ...o,
  metadata: { uid: 'u1', resourceVersion: '7', creationTimestamp: T1, ...o.metadata },
});
const entries = (o: Obj) => o.metadata.managedFields as Obj[];

describe('managed fields of updates', () => {
  it('records a create as an Update entry, with "." on containers that did not exist', () => {
    const obj = stored(cm({ a: '1' }, { labels: { app: 'x' } }));
    updateManagedFields(configMaps, undefined, obj, { manager: 'kubectl-create', now: T1 });
    expect(entries(obj)).toEqual([
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'v1',
        time: T1,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:data': { '.': {}, 'f:a': {} },
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
        },
      },
    ]);
  });

  it('compares a create with the Go zero value of the kind (no "." on template.metadata)', () => {
    const d: Obj = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', namespace: 'default' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'd' } },
        template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    };
    updateManagedFields(deployments, undefined, d, { manager: 'm', now: T1 });
    expect(entries(d)[0]!.fieldsV1).toEqual({
      'f:spec': {
        'f:replicas': {},
        'f:selector': {},
        'f:template': {
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
          'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
        },
      },
    });
  });

  it('merges later changes of the same manager, gives changed fields to the new writer, names unknown writers', () => {
    const v1 = stored(cm({ a: '1', b: '1' }));
    updateManagedFields(configMaps, undefined, v1, { manager: 'one', now: T1 });
    const v2 = structuredClone(v1);
    v2.data.b = '2';
    updateManagedFields(configMaps, v1, v2, { manager: '', now: T2 });
    expect(entries(v2).map((e) => [e.manager, e.time, Object.keys(e.fieldsV1['f:data'])])).toEqual([
      ['one', T1, ['.', 'f:a']],
      ['unknown', T2, ['f:b']],
    ]);
  });

  it('keeps the live entries when the request leaves them out, and drops them all for managedFields: []', () => {
    const v1 = stored(cm({ a: '1' }));
    updateManagedFields(configMaps, undefined, v1, { manager: 'one', now: T1 });
    const omitted = structuredClone(v1);
    delete omitted.metadata.managedFields;
    omitted.data.a = '2';
    updateManagedFields(configMaps, v1, omitted, { manager: 'two', now: T2 });
    // `one` keeps the data map it created; `two` took the key it changed.
    expect(entries(omitted).map((e) => [e.manager, e.fieldsV1])).toEqual([
      ['one', { 'f:data': {} }],
      ['two', { 'f:data': { 'f:a': {} } }],
    ]);

    const reset = structuredClone(v1);
    reset.metadata.managedFields = [];
    reset.data.a = '3';
    updateManagedFields(configMaps, v1, reset, { manager: 'two', now: T2 });
    expect(reset.metadata.managedFields).toBeUndefined();
  });

  it('does not change entries or times for a write that changes nothing', () => {
    const v1 = stored(cm({ a: '1' }));
    updateManagedFields(configMaps, undefined, v1, { manager: 'one', now: T1 });
    const same = structuredClone(v1);
    updateManagedFields(configMaps, v1, same, { manager: 'two', now: T2 });
    expect(same.metadata.managedFields).toEqual(v1.metadata.managedFields);
  });

  it('caps update managers at 10 by merging the oldest into ancient-changes', () => {
    let live = stored(cm({}));
    updateManagedFields(configMaps, undefined, live, { manager: 'm0', now: T1 });
    for (let i = 1; i <= 11; i++) {
      const next = structuredClone(live);
      next.data[`k${i}`] = 'v';
      updateManagedFields(configMaps, live, next, {
        manager: `m${i}`,
        now: `2024-05-01T10:00:${String(i).padStart(2, '0')}Z`,
      });
      live = next;
    }
    const managers = entries(live).map((e) => e.manager);
    expect(managers).toHaveLength(10);
    expect(managers).toContain('ancient-changes');
    expect(managers).toContain('m11');
  });

  it('on /status only status changes count and request entries are ignored', () => {
    const d: Obj = stored({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', namespace: 'default' },
      spec: { replicas: 1 },
    });
    const next = structuredClone(d);
    next.status = { replicas: 1 };
    next.metadata.managedFields = [
      {
        manager: 'forged',
        operation: 'Update',
        apiVersion: 'apps/v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': {} },
      },
    ];
    updateManagedFields(deployments, d, next, { manager: 'ctrl', subresource: 'status', now: T1 });
    // The object had no entries: nothing is tracked until it is applied or recreated.
    expect(next.metadata.managedFields).toBeUndefined();

    updateManagedFields(deployments, undefined, d, { manager: 'creator', now: T1 });
    const next2 = structuredClone(d);
    next2.status = { replicas: 1 };
    updateManagedFields(deployments, d, next2, { manager: 'ctrl', subresource: 'status', now: T2 });
    expect(entries(next2).find((e) => e.manager === 'ctrl')).toMatchObject({
      subresource: 'status',
      fieldsV1: { 'f:status': { '.': {}, 'f:replicas': {} } },
    });
  });
});

describe('server-side apply', () => {
  it('creates with one Apply entry and no apiVersion in its identity', () => {
    const out = applyConfiguration(configMaps, undefined, cm({ a: '1' }), {
      manager: 'ci',
      force: false,
      now: T1,
    });
    expect(out.data).toEqual({ a: '1' });
    expect(entries(out)).toEqual([
      {
        manager: 'ci',
        operation: 'Apply',
        apiVersion: 'v1',
        time: T1,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:a': {} } },
      },
    ]);
  });

  it('gives what nobody tracked yet to before-first-apply, and conflicts with it', () => {
    const live = stored(cm({ a: '1' }));
    let err: unknown;
    try {
      applyConfiguration(configMaps, live, cm({ a: '2' }), { manager: 'ci', force: false, now: T1 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message: 'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a',
      details: {
        causes: [
          {
            reason: 'FieldManagerConflict',
            message: 'conflict with "before-first-apply" using v1',
            field: '.data.a',
          },
        ],
      },
    });
  });

  it('lists several conflicts by manager', () => {
    let live: Obj = applyConfiguration(configMaps, undefined, cm({ a: '1', b: '1' }), {
      manager: 'x',
      force: false,
      now: T1,
    });
    live = stored(live);
    const next = structuredClone(live);
    next.data.c = '1';
    updateManagedFields(configMaps, live, next, { manager: 'kubectl-edit', now: T2 });
    expect(() =>
      applyConfiguration(configMaps, next, cm({ a: '2', b: '2', c: '2' }), { manager: 'y', force: false }),
    ).toThrow(
      'Apply failed with 3 conflicts: conflicts with "kubectl-edit" using v1:\n- .data.c\nconflicts with "x":\n- .data.a\n- .data.b',
    );
  });

  it('refuses configurations of another kind, with managedFields, or that do not fit the schema', () => {
    const live = undefined;
    const o = { manager: 'ci', force: false };
    expect(() => applyConfiguration(configMaps, live, { ...cm({}), kind: 'Secret' }, o)).toThrow(
      'invalid object type: /v1, Kind=Secret',
    );
    expect(() => applyConfiguration(configMaps, live, cm({}, { managedFields: [] }), o)).toThrow(
      'metadata.managedFields must be nil',
    );
    expect(() => applyConfiguration(configMaps, live, { ...cm({}), spec: {} }, o)).toThrow(
      'failed to create typed patch object (default/c; /v1, Kind=ConfigMap): .spec: field not declared in schema',
    );
  });

  it('lets kubectl take over what its client-side apply annotation accounts for, and keeps that annotation current', () => {
    const lastApplied = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: { a: '1' },
    });
    const live = stored(cm({ a: '1' }, { annotations: { [LAST_APPLIED_ANNOTATION]: lastApplied } }));
    updateManagedFields(configMaps, undefined, live, { manager: 'kubectl-client-side-apply', now: T1 });
    const out: Obj = applyConfiguration(configMaps, live, cm({ a: '2' }), {
      manager: 'kubectl',
      force: false,
      now: T2,
    });
    expect(out.data.a).toBe('2');
    expect(out.metadata.annotations[LAST_APPLIED_ANNOTATION]).toBe(
      '{"apiVersion":"v1","data":{"a":"2"},"kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}\n',
    );
    // Any other manager still conflicts.
    expect(() =>
      applyConfiguration(configMaps, live, cm({ a: '3' }), { manager: 'ci', force: false }),
    ).toThrow(/conflict with "kubectl-client-side-apply"/);
  });
});

describe('scale subresource', () => {
  it('moves ownership of the replicas between the parent and its Scale', () => {
    const d = stored(
      applyConfiguration(
        deployments,
        undefined,
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'd', namespace: 'default' },
          spec: { replicas: 2 },
        },
        { manager: 'ci', force: false, now: T1 },
      ),
    );
    const scale = {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'd' },
      spec: { replicas: 2 },
    };
    expect(entries(scaleWithManagedFields(deployments, d, scale))).toEqual([
      {
        manager: 'ci',
        operation: 'Apply',
        apiVersion: 'autoscaling/v1',
        time: T1,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      },
    ]);
    manageScaleFields(deployments, d, scale, { ...scale, spec: { replicas: 5 } }, 'kubectl', false);
    expect(entries(d).map((e) => [e.manager, e.operation, e.apiVersion, e.subresource, e.fieldsV1])).toEqual([
      ['kubectl', 'Update', 'apps/v1', 'scale', { 'f:spec': { 'f:replicas': {} } }],
    ]);
  });
});

describe('managers', () => {
  it.each<[string | null, string | undefined, string]>([
    ['ci', 'kubectl/v1.32.0 (linux/amd64) kubernetes/abc', 'ci'],
    [null, 'kubectl/v1.32.0 (linux/amd64) kubernetes/abc', 'kubectl'],
    ['', 'my\u0007tool/1.0', 'mytool'],
    [null, undefined, ''],
    [null, 'x'.repeat(200), 'x'.repeat(128)],
  ])('fieldManager %j with User-Agent %j is %j', (fm, ua, want) => {
    expect(managerOrUserAgent(fm, ua)).toBe(want);
  });

  it('validates fieldManager like ValidateFieldManager', () => {
    expect(fieldManagerCauses('ok-manager')).toEqual([]);
    expect(fieldManagerCauses('x'.repeat(129))).toEqual([
      {
        reason: 'FieldValueTooLong',
        field: 'fieldManager',
        message: 'Too long: may not be more than 128 bytes',
      },
    ]);
    expect(fieldManagerCauses('a\u0007')).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'fieldManager',
        message: 'Invalid value: "a\\a": invalid character U+0007 (at position 1)',
      },
    ]);
  });

  it('identifies appliers without their API version, and prints managers as conflict messages do', () => {
    const apply = managerIdentifier({ manager: 'm', operation: 'Apply', apiVersion: 'v1' });
    const update = managerIdentifier({
      manager: 'm',
      operation: 'Update',
      apiVersion: 'apps/v1',
      subresource: 'status',
    });
    expect(apply).toBe('{"manager":"m","operation":"Apply"}');
    expect(printManager(apply)).toBe('"m"');
    expect(printManager(update)).toBe('"m" with subresource "status" using apps/v1');
  });

  it.each<[string, unknown, string]>([
    [
      'a bad operation',
      [{ manager: 'm', operation: 'Patch', apiVersion: 'v1', fieldsType: 'FieldsV1' }],
      'operation must be `Apply` or `Update`',
    ],
    [
      'no apiVersion',
      [{ manager: 'm', operation: 'Apply', fieldsType: 'FieldsV1' }],
      'apiVersion must not be empty',
    ],
    [
      'no fieldsType',
      [{ manager: 'm', operation: 'Apply', apiVersion: 'v1' }],
      'missing fieldsType in managed fields entry 0',
    ],
  ])('rejects entries with %s', (_name, e, message) => {
    expect(() => decodeManagedFields(e)).toThrow(message);
  });
});
