import { ApiError } from 'kubeloop/api';
import { beforeEach, describe, expect, it } from 'vitest';
import { Registry } from '../../registry/registry.js';
import { Store } from '../../storage/store.js';
import type { KubeObject } from '../../storage/types.js';
import type { Obj } from '../../util/object.js';
import type { AdmissionOptions } from '../options.js';
import type { WebhookCaller } from './client.js';
import { webhookAdmission } from './index.js';

/**
 * The dispatchers with a fake caller (no HTTP): the paths kube's API no longer lets a user reach
 * (sideEffects Some/Unknown, v1beta1 reviews) and the fine points of answers.
 */
const registry = new Registry();
const configmaps = registry.lookup('', 'v1', 'configmaps')!;

let store: Store;
let answer: (review: any) => unknown;
const sent: any[] = [];
const caller: WebhookCaller = {
  async post(_config, body) {
    sent.push(body);
    return answer(body);
  },
};
const respond =
  (extra: Obj, version = 'v1') =>
  (review: any) => ({
    apiVersion: `admission.k8s.io/${version}`,
    kind: 'AdmissionReview',
    response: { uid: review.request.uid, allowed: true, ...extra },
  });

async function configure(kind: 'mutating' | 'validating', hook: Obj): Promise<void> {
  await store.create(`/admissionregistration.k8s.io/${kind}webhookconfigurations/c`, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: kind === 'mutating' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration',
    metadata: { name: 'c' },
    webhooks: [
      {
        name: 'x.example.com',
        clientConfig: { url: 'https://127.0.0.1:1/x' },
        rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: '*' }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        failurePolicy: 'Fail',
        timeoutSeconds: 10,
        ...hook,
      },
    ],
  } as KubeObject);
}

const cm = (): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cm', namespace: 'default' },
  data: {},
});

async function failure(p: Promise<void> | undefined): Promise<ApiError> {
  const err = await Promise.resolve(p).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

beforeEach(async () => {
  store = Store.open();
  sent.length = 0;
  answer = respond({});
  await store.create('/core/namespaces/default', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'default' },
  } as KubeObject);
});

describe('webhook dispatchers', () => {
  it('refuse a dry run to a webhook with side effects, as kube does', async () => {
    await configure('validating', { sideEffects: 'Some' });
    const { validate } = webhookAdmission(store, registry, { caller });
    const err = await failure(validate('CREATE', configmaps, cm(), undefined, { dryRun: true }));
    expect(err.code).toBe(400);
    expect(err.message).toBe('admission webhook "x.example.com" does not support dry run');
    expect(sent).toHaveLength(0);
    // Without a dry run, the webhook is called.
    await validate('CREATE', configmaps, cm(), undefined, {});
    expect(sent).toHaveLength(1);
  });

  it('send a v1beta1 review to a webhook that accepts only that, and read its lenient answer', async () => {
    await configure('mutating', { admissionReviewVersions: ['v1beta1'] });
    const { mutate } = webhookAdmission(store, registry, { caller });
    answer = () => ({
      response: {
        allowed: true,
        patch: Buffer.from('[{"op":"add","path":"/data/x","value":"y"}]').toString('base64'),
      },
    });
    const obj = cm();
    await mutate('CREATE', configmaps, obj, undefined, {});
    expect(sent[0].apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(obj.data).toEqual({ x: 'y' });
  });

  it('fail on a webhook that accepts no known review version', async () => {
    await configure('validating', { admissionReviewVersions: ['v2'] });
    const { validate } = webhookAdmission(store, registry, { caller });
    const err = await failure(validate('CREATE', configmaps, cm(), undefined, {}));
    expect(err.message).toBe(
      'Internal error occurred: failed calling webhook "x.example.com": could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)',
    );
  });

  it('collect audit annotations under the webhook name, and refuse a patch from a validating webhook', async () => {
    await configure('validating', {});
    const { validate } = webhookAdmission(store, registry, { caller });
    answer = respond({ auditAnnotations: { reason: 'checked' } });
    const options: AdmissionOptions = { auditAnnotations: {} };
    await validate('CREATE', configmaps, cm(), undefined, options);
    expect(options.auditAnnotations).toEqual({ 'x.example.com/reason': 'checked' });
    answer = respond({ patchType: 'JSONPatch', patch: 'W10=' });
    const err = await failure(validate('CREATE', configmaps, cm(), undefined, {}));
    expect(err.message).toBe(
      'Internal error occurred: failed calling webhook "x.example.com": received invalid webhook response: validating webhook may not return response.patch',
    );
  });

  it('annotate every mutating call for the audit log as kube does: whether it mutated, and the patch', async () => {
    await configure('mutating', {});
    const { mutate } = webhookAdmission(store, registry, { caller });
    const patch = [{ value: { injected: 'yes' }, path: '/metadata/labels', op: 'add' }];
    answer = respond({
      patchType: 'JSONPatch',
      patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
    });
    const auditAnnotations: Record<string, string> = {};
    const obj = cm();
    await mutate('CREATE', configmaps, obj, undefined, { auditAnnotations });
    expect(auditAnnotations).toEqual({
      'mutation.webhook.admission.k8s.io/round_0_index_0':
        '{"configuration":"c","webhook":"x.example.com","mutated":true}',
      'patch.webhook.admission.k8s.io/round_0_index_0':
        '{"configuration":"c","webhook":"x.example.com","patch":[{"op":"add","path":"/metadata/labels","value":{"injected":"yes"}}],"patchType":"JSONPatch"}',
    });
    // No patch: mutated false, no patch annotation.
    answer = respond({});
    const quiet: Record<string, string> = {};
    await mutate('CREATE', configmaps, cm(), undefined, { auditAnnotations: quiet });
    expect(quiet).toEqual({
      'mutation.webhook.admission.k8s.io/round_0_index_0':
        '{"configuration":"c","webhook":"x.example.com","mutated":false}',
    });
  });

  it('word denials as ToStatusErr does', async () => {
    await configure('validating', {});
    const { validate } = webhookAdmission(store, registry, { caller });
    answer = (review: any) => ({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: review.request.uid, allowed: false, status: { code: 200 } },
    });
    const err = await failure(validate('CREATE', configmaps, cm(), undefined, {}));
    expect(err.code).toBe(400);
    expect(err.message).toBe('admission webhook "x.example.com" denied the request without explanation');
    answer = (review: any) => ({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: review.request.uid, allowed: false, status: { code: 409, reason: 'Conflict' } },
    });
    const conflict = await failure(validate('CREATE', configmaps, cm(), undefined, {}));
    expect([conflict.code, conflict.status.reason, conflict.message]).toEqual([
      409,
      'Conflict',
      'admission webhook "x.example.com" denied the request: Conflict',
    ]);
  });

  it('refuse a patch of a DELETE, and never call webhooks on the admission configuration kinds', async () => {
    await configure('mutating', {});
    const { mutate } = webhookAdmission(store, registry, { caller });
    answer = respond({
      patchType: 'JSONPatch',
      patch: Buffer.from('[{"op":"add","path":"/x","value":1}]').toString('base64'),
    });
    const err = await failure(mutate('DELETE', configmaps, cm(), cm(), {}));
    expect(err.message).toBe(
      'Internal error occurred: admission webhook "x.example.com" attempted to modify the object, which is not supported for this operation',
    );
    sent.length = 0;
    const vwc = registry.lookup('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations')!;
    expect(mutate('CREATE', vwc, { metadata: { name: 'v' } }, undefined, {})).toBeUndefined();
    expect(sent).toHaveLength(0);
  });

  it('send an equivalent kind in its own form: a core Event as an events.k8s.io Event', async () => {
    await configure('validating', {
      rules: [
        { operations: ['CREATE'], apiGroups: ['events.k8s.io'], apiVersions: ['v1'], resources: ['events'] },
      ],
    });
    const { validate } = webhookAdmission(store, registry, { caller });
    const events = registry.lookup('', 'v1', 'events')!;
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e', namespace: 'default' },
      message: 'hello',
      reason: 'Testing',
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
    };
    await validate('CREATE', events, event, undefined, {});
    const request = sent[0].request;
    expect(request.kind).toEqual({ group: 'events.k8s.io', version: 'v1', kind: 'Event' });
    expect(request.requestKind).toEqual({ group: '', version: 'v1', kind: 'Event' });
    expect(request.object).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      note: 'hello',
      regarding: { name: 'p' },
    });
  });
});
