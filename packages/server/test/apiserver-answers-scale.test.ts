/**
 * The `…/scale` subresource's bodies as a real kube-apiserver decodes them (the anchor's 1.24,
 * checked unchanged in 1.32's sources): a PUT of another kind is refused before anything is
 * stored, in the scheme's words for built-in resources and in client-go's scale scheme's for
 * custom resources; a JSON or merge patch whose result is not a Scale is a 422 on `patch`.
 * The local plane used to take these: a ConfigMap PUT to a custom resource's scale set its
 * replicas to nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../src/testing/http.js';
import { httpClient } from './http.js';
import { type KubectlEnv, startKubectlEnv } from './kubectl.js';
import { failure } from './status-check.js';

let env: KubectlEnv;
let http: ReturnType<typeof httpClient>;

const CR = '/apis/s.example.com/v1/namespaces/default/scalers';
const DEPLOYMENT = '/apis/apps/v1/namespaces/default/deployments';
const MERGE = 'application/merge-patch+json';
const JSONP = 'application/json-patch+json';

beforeAll(async () => {
  env = await startKubectlEnv();
  http = httpClient(env.cp);
  await env.ok(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'scalers.s.example.com' },
      spec: {
        group: 's.example.com',
        scope: 'Namespaced',
        names: { plural: 'scalers', kind: 'Scaler', singular: 'scaler', listKind: 'ScalerList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: {
              status: {},
              scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
            },
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', properties: { replicas: { type: 'integer' } } },
                  status: { type: 'object', properties: { replicas: { type: 'integer' } } },
                },
              },
            },
          },
        ],
      },
    }),
  });
  await env.ok(['wait', '--for=condition=Established', 'crd/scalers.s.example.com']);
  await env.ok(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 's.example.com/v1',
      kind: 'Scaler',
      metadata: { name: 's1' },
      spec: { replicas: 2 },
    }),
  });
  await env.ok(['create', 'deployment', 'd1', '--image=nginx', '--replicas=1']);
});
afterAll(() => env?.stop());

const scaleBody = (apiVersion: string, kind: string, name = 's1') => ({
  apiVersion,
  kind,
  metadata: { name, namespace: 'default' },
  spec: { replicas: 5 },
});

async function stored(path: string): Promise<Json> {
  const r = await http.get(path);
  expect(r.status).toBe(200);
  return r.json;
}

describe('PUT …/scale of another kind', () => {
  it('is refused for a built-in resource as the scheme decodes the body', async () => {
    const before = await stored(`${DEPLOYMENT}/d1`);
    const cases: [string, string, string][] = [
      [
        'v1',
        'ConfigMap',
        'ConfigMap in version "v1" cannot be handled as a Scale: converting (v1.ConfigMap) to (autoscaling.Scale): unknown conversion',
      ],
      [
        'autoscaling/v2',
        'Scale',
        'Scale in version "v2" cannot be handled as a Scale: no kind "Scale" is registered for version "autoscaling/v2" in scheme "pkg/runtime/scheme.go:100"',
      ],
      [
        'autoscaling/v1',
        'Foo',
        'Foo in version "v1" cannot be handled as a Scale: no kind "Foo" is registered for version "autoscaling/v1" in scheme "pkg/runtime/scheme.go:100"',
      ],
      // An old apps Scale converts, but is not the version of the URL.
      [
        'apps/v1beta1',
        'Scale',
        'the API version in the data (apps/v1beta1) does not match the expected API version (autoscaling/v1)',
      ],
    ];
    for (const [apiVersion, kind, message] of cases)
      failure(
        await http.put(`${DEPLOYMENT}/d1/scale`, scaleBody(apiVersion, kind, 'd1')),
        400,
        'BadRequest',
        message,
      );
    const after = await stored(`${DEPLOYMENT}/d1`);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.spec.replicas).toBe(1);
  });

  it("is refused for a custom resource in client-go's scale scheme's words, nothing stored", async () => {
    const before = await stored(`${CR}/s1`);
    for (const [apiVersion, kind] of [
      ['v1', 'ConfigMap'],
      ['autoscaling/v2', 'Scale'],
      ['apps/v1beta1', 'Scale'],
      ['autoscaling/v1', 'Foo'],
    ])
      failure(
        await http.put(`${CR}/s1/scale`, scaleBody(apiVersion!, kind!)),
        400,
        'BadRequest',
        'no kind is registered for the type v1.Scale in scheme "pkg/runtime/scheme.go:100"',
      );
    const after = await stored(`${CR}/s1`);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(after.metadata.generation).toBe(before.metadata.generation);
    expect(after.spec).toEqual({ replicas: 2 });
  });

  it('takes an autoscaling/v1 Scale, or one without apiVersion and kind, and kubectl scale', async () => {
    const put = await http.put(`${CR}/s1/scale`, scaleBody('autoscaling/v1', 'Scale'));
    expect(put.status, put.text).toBe(200);
    const bare = await http.put(`${DEPLOYMENT}/d1/scale`, {
      metadata: { name: 'd1', namespace: 'default' },
      spec: { replicas: 3 },
    });
    expect(bare.status, bare.text).toBe(200);
    await env.ok(['scale', 'scaler/s1', '--replicas=4']);
    expect((await stored(`${CR}/s1`)).spec.replicas).toBe(4);
    expect((await stored(`${DEPLOYMENT}/d1`)).spec.replicas).toBe(3);
  });
});

describe('PATCH …/scale whose result is not a Scale', () => {
  const invalid = (reason: string) =>
    expect.stringMatching(
      new RegExp(
        `^ "" is invalid: patch: Invalid value: "\\{.*\\}": ${reason.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`,
      ),
    );

  it('is a 422 on patch, for built-in and custom resources alike', async () => {
    for (const path of [`${DEPLOYMENT}/d1/scale`, `${CR}/s1/scale`]) {
      const kind = failure(await http.patch(path, { kind: 'ConfigMap' }, MERGE), 422, 'Invalid');
      expect(kind.message).toEqual(
        invalid(
          'no kind "ConfigMap" is registered for version "autoscaling/v1" in scheme "pkg/runtime/scheme.go:100"',
        ),
      );
      expect(kind.details.causes).toEqual([
        { reason: 'FieldValueInvalid', field: 'patch', message: expect.stringMatching(/^Invalid value: /) },
      ]);
      const version = failure(
        await http.patch(path, [{ op: 'replace', path: '/apiVersion', value: 'v1' }], JSONP),
        422,
        'Invalid',
      );
      expect(version.message).toEqual(
        invalid('no kind "Scale" is registered for version "v1" in scheme "pkg/runtime/scheme.go:100"'),
      );
    }
    // A kind the apiserver's scheme has does not convert into a Scale.
    const cm = failure(
      await http.patch(`${DEPLOYMENT}/d1/scale`, { apiVersion: 'v1', kind: 'ConfigMap' }, MERGE),
      422,
      'Invalid',
    );
    expect(cm.message).toEqual(
      invalid('converting (v1.ConfigMap) to (autoscaling.Scale): unknown conversion'),
    );
    // An old apps Scale converts, but its selector is a map, not autoscaling/v1's string.
    const apps = failure(
      await http.patch(`${DEPLOYMENT}/d1/scale`, { apiVersion: 'apps/v1beta1' }, MERGE),
      422,
      'Invalid',
    );
    expect(apps.message).toEqual(
      invalid(
        'json: cannot unmarshal string into Go struct field ScaleStatus.status.selector of type map[string]string',
      ),
    );
    expect((await stored(`${CR}/s1`)).spec.replicas).toBe(4);
    expect((await stored(`${DEPLOYMENT}/d1`)).spec.replicas).toBe(3);
  });
});
