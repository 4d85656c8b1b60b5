import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { fieldErrors } from '../api/field-errors.js';
import { ApiError } from '../api/status.js';
import { Pod } from '../client/builtin-kinds.js';
import { defineResource } from '../schema/define/resource.js';
import { defaulter, mutatePath, mutatingWebhook, validatePath, validator } from './admission.js';
import { answerAdmission } from './handle.js';
import { applyJsonPatch } from './patch.js';
import type { AdmissionRequest, AdmissionReview } from './types.js';

const Foo = defineResource({
  group: 'samplecontroller.example.com',
  version: 'v1alpha1',
  kind: 'Foo',
  spec: Type.Object({ deploymentName: Type.String(), replicas: Type.Optional(Type.Integer()) }),
});

const foo = (replicas?: number) => ({
  apiVersion: 'samplecontroller.example.com/v1alpha1',
  kind: 'Foo',
  metadata: { name: 'example', namespace: 'default' },
  spec: { deploymentName: 'web', ...(replicas !== undefined && { replicas }) },
});

function request(over: Partial<AdmissionRequest>): AdmissionRequest {
  return {
    uid: 'uid-1',
    kind: { group: 'samplecontroller.example.com', version: 'v1alpha1', kind: 'Foo' },
    resource: { group: 'samplecontroller.example.com', version: 'v1alpha1', resource: 'foos' },
    name: 'example',
    namespace: 'default',
    operation: 'CREATE',
    userInfo: { username: 'alice', groups: ['system:authenticated'] },
    ...over,
  };
}

const body = (req: AdmissionRequest) =>
  Buffer.from(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req }));
const json = 'application/json';
const opts = { timeoutMs: 2000 };
const patchOf = (r: AdmissionReview) =>
  JSON.parse(Buffer.from(r.response?.patch ?? '', 'base64').toString()) as [];

describe('paths', () => {
  it('are kubebuilder’s: group dots as dashes, version, kind lowercase; core group empty', () => {
    expect(mutatePath(Foo)).toBe('/mutate-samplecontroller-example-com-v1alpha1-foo');
    expect(validatePath(Foo)).toBe('/validate-samplecontroller-example-com-v1alpha1-foo');
    expect(mutatePath(Pod)).toBe('/mutate--v1-pod');
    const d = defaulter(Foo, () => {});
    expect(d.path).toBe('/mutate-samplecontroller-example-com-v1alpha1-foo');
    expect(d.name).toBe('mfoo-v1alpha1.kb.io');
    expect(d.target.plural).toBe('foos');
  });
});

describe('defaulter', () => {
  const d = defaulter(Foo, (obj, ctx) => {
    obj.spec.replicas ??= 1;
    if (ctx.user.username === 'alice') obj.metadata.labels = { 'example.com/owner': 'alice' };
  });

  it('answers the minimal JSON patch, with the request’s uid and the user from the request', async () => {
    const r = await answerAdmission(d, body(request({ object: foo() })), json, opts);
    expect(r).toMatchObject({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'uid-1', allowed: true, patchType: 'JSONPatch', status: { code: 200 } },
    });
    expect(patchOf(r)).toEqual([
      { op: 'add', path: '/metadata/labels', value: { 'example.com/owner': 'alice' } },
      { op: 'add', path: '/spec/replicas', value: 1 },
    ]);
    expect(applyJsonPatch(foo(), patchOf(r))).toMatchObject({ spec: { replicas: 1 } });
  });

  it('answers no patch when nothing changed, and skips DELETE as controller-runtime does', async () => {
    const bob = { username: 'bob' };
    const r = await answerAdmission(d, body(request({ object: foo(3), userInfo: bob })), json, opts);
    expect(r.response).toEqual({ uid: 'uid-1', allowed: true, status: { code: 200 } });
    const del = await answerAdmission(
      d,
      body(request({ operation: 'DELETE', oldObject: foo() })),
      json,
      opts,
    );
    expect(del.response).toEqual({ uid: 'uid-1', allowed: true, status: { code: 200 } });
  });

  it('accepts a returned object instead of an in-place change', async () => {
    const r2 = defaulter(Foo, (obj) => ({ ...obj, spec: { ...obj.spec, replicas: 7 } }));
    const r = await answerAdmission(r2, body(request({ object: foo(2) })), json, opts);
    expect(patchOf(r)).toEqual([{ op: 'replace', path: '/spec/replicas', value: 7 }]);
  });

  it('passes dryRun and the operation to the handler', async () => {
    let seen: unknown;
    const probe = defaulter(Foo, (_o, ctx) => {
      seen = { dryRun: ctx.dryRun, op: ctx.operation, uid: ctx.uid, ns: ctx.namespace, client: ctx.client };
    });
    await answerAdmission(
      probe,
      body(request({ object: foo(), dryRun: true, operation: 'UPDATE' })),
      json,
      opts,
    );
    expect(seen).toEqual({ dryRun: true, op: 'UPDATE', uid: 'uid-1', ns: 'default', client: undefined });
  });
});

describe('validator', () => {
  const v = validator(Foo, {
    create: (obj) =>
      (obj.spec.replicas ?? 0) > 5
        ? { errors: [fieldErrors.invalid('spec.replicas', obj.spec.replicas, 'must be at most 5')] }
        : { warnings: ['replicas is not set'] },
    update: (old, obj) =>
      old.spec.deploymentName !== obj.spec.deploymentName
        ? {
            errors: [
              fieldErrors.forbidden('spec.deploymentName', 'field is immutable'),
              fieldErrors.required('spec.owner'),
            ],
            warnings: ['w1'],
          }
        : undefined,
    delete: () => {
      throw new ApiError({ code: 403, reason: 'Forbidden', message: 'foos are kept forever' });
    },
  });

  it('routes DELETE only when a delete handler is given', () => {
    expect(v.operations).toEqual(['CREATE', 'UPDATE', 'DELETE']);
    expect(validator(Foo, {}).operations).toEqual(['CREATE', 'UPDATE']);
  });

  it('denies with a 422 Invalid Status whose causes are the field errors', async () => {
    const r = await answerAdmission(v, body(request({ object: foo(9) })), json, opts);
    expect(r.response).toEqual({
      uid: 'uid-1',
      allowed: false,
      status: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message:
          'Foo.samplecontroller.example.com "example" is invalid: spec.replicas: Invalid value: 9: must be at most 5',
        reason: 'Invalid',
        details: {
          name: 'example',
          group: 'samplecontroller.example.com',
          kind: 'Foo',
          causes: [
            {
              reason: 'FieldValueInvalid',
              message: 'Invalid value: 9: must be at most 5',
              field: 'spec.replicas',
            },
          ],
        },
        code: 422,
      },
    });
  });

  it('allows with warnings, and keeps warnings on a denial of several errors', async () => {
    const ok = await answerAdmission(v, body(request({ object: foo() })), json, opts);
    expect(ok.response).toEqual({
      uid: 'uid-1',
      allowed: true,
      status: { code: 200 },
      warnings: ['replicas is not set'],
    });
    const old = foo();
    const renamed = { ...foo(), spec: { deploymentName: 'other' } };
    const r = await answerAdmission(
      v,
      body(request({ operation: 'UPDATE', object: renamed, oldObject: old })),
      json,
      opts,
    );
    expect(r.response?.allowed).toBe(false);
    expect(r.response?.warnings).toEqual(['w1']);
    expect(r.response?.status?.message).toBe(
      'Foo.samplecontroller.example.com "example" is invalid: [spec.deploymentName: Forbidden: field is immutable, spec.owner: Required value]',
    );
  });

  it('denies with the Status of a thrown ApiError (delete gets the old object)', async () => {
    const r = await answerAdmission(v, body(request({ operation: 'DELETE', oldObject: foo() })), json, opts);
    expect(r.response).toMatchObject({
      allowed: false,
      status: { code: 403, reason: 'Forbidden', message: 'foos are kept forever' },
    });
  });
});

describe('failures are answered, never thrown', () => {
  it('a handler that throws: allowed false, code 500, controller-runtime’s panic message', async () => {
    let panics = 0;
    const boom = validator(Foo, {
      create: () => {
        throw new Error('index out of range');
      },
    });
    const r = await answerAdmission(boom, body(request({ object: foo() })), json, {
      ...opts,
      onPanic: () => panics++,
    });
    expect(r.response).toEqual({
      uid: 'uid-1',
      allowed: false,
      status: { code: 500, message: 'panic: index out of range [recovered]' },
    });
    expect(panics).toBe(1);
  });

  it('a handler that hangs: answered when the time is up, with its signal aborted', async () => {
    let signal: AbortSignal | undefined;
    const hang = defaulter(Foo, (_o, ctx) => {
      signal = ctx.signal;
      return new Promise<void>(() => {});
    });
    const r = await answerAdmission(hang, body(request({ object: foo() })), json, { timeoutMs: 50 });
    expect(r.response).toEqual({
      uid: 'uid-1',
      allowed: false,
      status: { code: 500, message: 'context deadline exceeded' },
    });
    expect(signal?.aborted).toBe(true);
  });

  it('deadlines share one timer: a shorter one after a longer pending one still expires first', async () => {
    // The long review stays pending while the short one times out; the quick one answers.
    let release: (() => void) | undefined;
    const slow = defaulter(Foo, () => new Promise<void>((ok) => (release = ok)));
    const hang = defaulter(Foo, () => new Promise<void>(() => {}));
    const quick = defaulter(Foo, (o) => {
      o.spec.replicas = 2;
    });
    const long = answerAdmission(slow, body(request({ object: foo() })), json, { timeoutMs: 60_000 });
    const short = await answerAdmission(hang, body(request({ object: foo() })), json, { timeoutMs: 30 });
    expect(short.response?.status).toEqual({ code: 500, message: 'context deadline exceeded' });
    const fine = await answerAdmission(quick, body(request({ object: foo() })), json, { timeoutMs: 30 });
    expect(fine.response?.allowed).toBe(true);
    release?.();
    expect((await long).response?.allowed).toBe(true);
  });

  it('bad requests: empty body, wrong content type, bad JSON, no request', async () => {
    const d = defaulter(Foo, () => {});
    const msg = async (b: string, t = json) =>
      (await answerAdmission(d, Buffer.from(b), t, opts)).response?.status;
    expect(await msg('')).toEqual({ code: 400, message: 'request body is empty' });
    expect(await msg('{}', 'text/plain')).toEqual({
      code: 400,
      message: 'contentType=text/plain, expected application/json',
    });
    expect((await msg('{'))?.code).toBe(400);
    expect(await msg('{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}')).toEqual({
      code: 400,
      message: 'got an empty AdmissionRequest',
    });
  });
});

describe('generic webhooks', () => {
  it('a Pod mutator answers the patch to the object it returns', async () => {
    const m = mutatingWebhook(Pod, (req) => {
      const pod = structuredClone(req.object) as Pod;
      pod.metadata = { ...pod.metadata, annotations: { 'sidecar.example.com/injected': 'true' } };
      return { allowed: true, object: pod };
    });
    expect(m.path).toBe('/mutate--v1-pod');
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [] } };
    const req = request({
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      object: pod,
    });
    const r = await answerAdmission(m, body(req), json, opts);
    expect(patchOf(r)).toEqual([
      { op: 'add', path: '/metadata/annotations', value: { 'sidecar.example.com/injected': 'true' } },
    ]);
  });
});
