import type { Client } from 'kubeloop/client';
import { answerAdmission, expectRoundTrip } from 'kubeloop/webhook';
import { describe, expect, it } from 'vitest';
import { Foo, FooV1 } from './api/foo.js';
import { fooConversion } from './conversion.js';
import { fooDefaulter, fooValidator } from './webhooks.js';

const foo = (name: string, deploymentName: string, replicas?: number): Foo =>
  ({
    apiVersion: 'samplecontroller.k8s.io/v1alpha1',
    kind: 'Foo',
    metadata: { name, namespace: 'default' },
    spec: { deploymentName, ...(replicas !== undefined && { replicas }) },
  }) as Foo;

const review = (object: Foo) =>
  Buffer.from(
    JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'u',
        kind: { group: 'samplecontroller.k8s.io', version: 'v1alpha1', kind: 'Foo' },
        resource: { group: 'samplecontroller.k8s.io', version: 'v1alpha1', resource: 'foos' },
        operation: 'CREATE',
        userInfo: { username: 'dev' },
        namespace: 'default',
        name: object.metadata.name,
        object,
      },
    }),
  );

describe('the sample operator’s webhooks', () => {
  it('default spec.replicas to 1', async () => {
    const r = await answerAdmission(fooDefaulter, review(foo('a', 'web')), 'application/json', {
      timeoutMs: 1000,
    });
    expect(JSON.parse(Buffer.from(r.response?.patch ?? '', 'base64').toString())).toEqual([
      { op: 'add', path: '/spec/replicas', value: 1 },
    ]);
  });

  it('refuse a deploymentName another Foo owns, naming it', async () => {
    const client = {
      api: () => ({ list: async () => ({ items: [foo('first', 'web', 1)] }) }),
    } as unknown as Client;
    const r = await answerAdmission(fooValidator, review(foo('second', 'web', 1)), 'application/json', {
      timeoutMs: 1000,
      client,
    });
    expect(r.response?.allowed).toBe(false);
    expect(r.response?.status?.message).toBe(
      'Foo.samplecontroller.k8s.io "second" is invalid: spec.deploymentName: Duplicate value: "web": already the Deployment of Foo "first"',
    );
    const ok = await answerAdmission(fooValidator, review(foo('second', 'api', 1)), 'application/json', {
      timeoutMs: 1000,
      client,
    });
    expect(ok.response?.allowed).toBe(true);
  });
});

describe('Foo’s v1alpha1 ⇄ v1 conversion', () => {
  it('round-trips both versions, status included', () => {
    expectRoundTrip(Foo, [
      Foo.build({
        metadata: { name: 'a', namespace: 'default', uid: 'u1' },
        spec: { deploymentName: 'web', replicas: 2 },
        status: { availableReplicas: 1 },
      }),
      FooV1.build({
        metadata: { name: 'b', namespace: 'default' },
        spec: { deployment: { name: 'api', replicas: 3 } },
      }),
    ]);
  });

  it('moves spec.deploymentName and spec.replicas under spec.deployment at v1', () => {
    const v1 = fooConversion.convert(foo('a', 'web', 2), 'samplecontroller.k8s.io/v1');
    expect(v1).toEqual({
      apiVersion: 'samplecontroller.k8s.io/v1',
      kind: 'Foo',
      metadata: { name: 'a', namespace: 'default' },
      spec: { deployment: { name: 'web', replicas: 2 } },
    });
  });
});
