/**
 * Answers recorded from a real kube-apiserver (the anchor's 1.24, `../shared/tools/anchor`, each
 * checked unchanged in 1.32's sources) for requests where the local plane used to answer
 * otherwise: finalizers without a domain on built-in kinds, field labels, request options, bodies
 * that are not JSON objects, continue tokens, media types, and a create over an object that is
 * being deleted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../src/index.js';
import { crPath, establish, simpleCrd } from './crd/support.js';
import { httpClient } from './http.js';
import { failure } from './status-check.js';

const NS = 'default';
const CM = `/api/v1/namespaces/${NS}/configmaps`;

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
});
afterAll(() => cp?.stop());

const configMap = (metadata: object, extra: object = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata,
  ...extra,
});

describe('finalizers of built-in kinds', () => {
  const UNQUALIFIED = 'name is neither a standard finalizer name nor is it fully qualified';

  it('refuses one without a domain on kinds validated by core, on create and update', async () => {
    const refused: [string, object][] = [
      [CM, configMap({ name: 'fin-cm', finalizers: ['cleanup'] })],
      [
        `/apis/rbac.authorization.k8s.io/v1/clusterroles`,
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: 'fin-cr', finalizers: ['cleanup'] },
        },
      ],
      [
        `/apis/apps/v1/namespaces/${NS}/deployments`,
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'fin-deploy', finalizers: ['cleanup'] },
          spec: {
            selector: { matchLabels: { a: 'b' } },
            template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
          },
        },
      ],
      [
        `/api/v1/namespaces`,
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fin-ns', finalizers: ['cleanup'] } },
      ],
    ];
    for (const [path, body] of refused) {
      const status = failure(await http.post(path, body), 422, 'Invalid');
      expect(status.details.causes).toEqual([
        {
          reason: 'FieldValueInvalid',
          message: `Invalid value: "cleanup": ${UNQUALIFIED}`,
          field: 'metadata.finalizers[0]',
        },
      ]);
    }
    // Both rules at once, in Go's order: the generic name check, then core's.
    const both = failure(
      await http.post(CM, configMap({ name: 'fin-both', finalizers: ['bad finalizer'] })),
      422,
      'Invalid',
    );
    expect(both.details.causes.map((c: any) => c.field)).toEqual([
      'metadata.finalizers',
      'metadata.finalizers[0]',
    ]);
    // The standard ones and qualified ones pass; an update adding a bare one is refused.
    const ok = await http.post(
      CM,
      configMap({ name: 'fin-ok', finalizers: ['kubernetes', 'orphan', 'example.com/x'] }),
    );
    expect(ok.status, ok.text).toBe(201);
    const patched = await http.patch(
      `${CM}/fin-ok`,
      { metadata: { finalizers: ['cleanup'] } },
      'application/merge-patch+json',
    );
    failure(patched, 422, 'Invalid');
    await http.patch(`${CM}/fin-ok`, { metadata: { finalizers: null } }, 'application/merge-patch+json');
  });

  it('takes one without a domain where kube validates metadata generically', async () => {
    const taken: [string, object][] = [
      [
        `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`,
        {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: 'fin-lease', finalizers: ['cleanup'] },
        },
      ],
      [
        `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations`,
        {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingWebhookConfiguration',
          metadata: { name: 'fin-vwc', finalizers: ['cleanup'] },
        },
      ],
      [
        `/api/v1/namespaces/${NS}/events`,
        {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: 'fin-ev', finalizers: ['cleanup'] },
          involvedObject: { namespace: NS },
        },
      ],
    ];
    for (const [path, body] of taken) {
      const r = await http.post(`${path}?dryRun=All`, body);
      expect(r.status, r.text).toBe(201);
    }
  });
});

describe('field selectors', () => {
  it('are converted by the kind: its own labels, or apimachinery’s default two', async () => {
    failure(
      await http.get(`${CM}?fieldSelector=data.x%3D1`),
      400,
      'BadRequest',
      '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
    failure(
      await http.get(`/apis/apps/v1/namespaces/${NS}/replicasets?fieldSelector=status.replicas%3D1`),
      400,
      'BadRequest',
      '"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
    failure(
      await http.get(`/api/v1/namespaces?fieldSelector=name%3Ddefault`),
      400,
      'BadRequest',
      'field label not supported: name',
    );
    failure(
      await http.get(`/api/v1/nodes?fieldSelector=metadata.namespace%3Dx`),
      400,
      'BadRequest',
      'field label not supported: metadata.namespace',
    );
    failure(
      await http.get(`/apis/batch/v1/namespaces/${NS}/jobs?fieldSelector=spec.foo%3Dx`),
      400,
      'BadRequest',
      'field label "spec.foo" not supported for Job',
    );
    // A cluster-scoped kind without a conversion of its own still takes metadata.namespace.
    expect((await http.get(`/api/v1/persistentvolumes?fieldSelector=metadata.namespace%3D`)).status).toBe(
      200,
    );
    for (const ok of [
      `/api/v1/namespaces/${NS}/replicationcontrollers?fieldSelector=status.replicas%3D0`,
      `/apis/certificates.k8s.io/v1/certificatesigningrequests?fieldSelector=spec.signerName%3Dx`,
      `/api/v1/namespaces/${NS}/pods?fieldSelector=status.podIPs%3Dx`,
    ]) {
      const r = await http.get(ok);
      expect(r.status, `${ok}: ${r.text}`).toBe(200);
    }
  });

  it('take spec.host of a Pod as spec.nodeName', async () => {
    const pod = (name: string, nodeName: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { nodeName, containers: [{ name: 'c', image: 'x' }] },
    });
    await http.post(`/api/v1/namespaces/${NS}/pods`, pod('on-a', 'node-a'));
    await http.post(`/api/v1/namespaces/${NS}/pods`, pod('on-b', 'node-b'));
    const r = await http.get(`/api/v1/namespaces/${NS}/pods?fieldSelector=spec.host%3Dnode-a`);
    expect(r.json.items.map((p: any) => p.metadata.name)).toEqual(['on-a']);
  });
});

describe('request options', () => {
  it('refuse a dryRun other than All as invalid options of the verb', async () => {
    failure(
      await http.post(`${CM}?dryRun=Bogus`, configMap({ name: 'dry' })),
      422,
      'Invalid',
      'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Bogus"}: supported values: "All"',
    );
    await http.post(CM, configMap({ name: 'dry-2' }));
    failure(await http.send('DELETE', `${CM}/dry-2?dryRun=x`), 422, 'Invalid');
    expect((await http.get(`${CM}/dry-2?dryRun=x`)).status).toBe(200);
  });

  it('ignore a negative limit and take a negative grace period as 1 s', async () => {
    await http.post(CM, configMap({ name: 'neg-1' }));
    await http.post(CM, configMap({ name: 'neg-2' }));
    const list = await http.get(`${CM}?limit=-1`);
    expect(list.status, list.text).toBe(200);
    expect(list.json.metadata.continue).toBeUndefined();
    expect(list.json.items.length).toBeGreaterThanOrEqual(2);
    const deleted = await http.send('DELETE', `${CM}/neg-1?gracePeriodSeconds=-5`);
    expect(deleted.status, deleted.text).toBe(200);
  });

  it('word failed delete preconditions as rest.BeforeDelete does', async () => {
    const o = (await http.post(CM, configMap({ name: 'pre' }))).json;
    const del = (preconditions: object) =>
      http.send('DELETE', `${CM}/pre`, { raw: JSON.stringify({ preconditions }) });
    failure(
      await del({ resourceVersion: '1' }),
      409,
      'Conflict',
      `Operation cannot be fulfilled on ConfigMap "pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${o.metadata.resourceVersion}). The object might have been modified`,
    );
    const deploy = await http.get(`/apis/apps/v1/namespaces/${NS}/deployments/fin-missing`);
    expect(deploy.status).toBe(404);
  });

  it('cut a long generateName to 58 characters before the random suffix', async () => {
    const status = failure(
      await http.post(CM, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { generateName: 'g'.repeat(300) },
      }),
      422,
      'Invalid',
    );
    expect(status.details.causes.map((c: any) => c.field)).toEqual(['metadata.generateName']);
    expect(status.details.name).toMatch(/^g{58}[a-z0-9]{5}$/);
  });
});

describe('bodies that are not a JSON object', () => {
  const unrecognized = (why: string, shown: string) =>
    `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: ${why} (${shown})`;

  it('are refused with Go’s words and the start of the body', async () => {
    const cases: [string, string][] = [
      ['{"apiVersion":"v1",', unrecognized('unexpected end of JSON input', '{"apiVersion":"v1",')],
      [
        '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}} xx',
        unrecognized(`invalid character 'x' after top-level value`, '{"apiVersion":"v1","kind":"Con ...'),
      ],
      ['', unrecognized('unexpected end of JSON input', '<empty>')],
      [
        '[]',
        unrecognized(
          'json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }',
          '5b5d',
        ),
      ],
      [
        `{"a":${'['.repeat(2000)}${']'.repeat(2000)}}`,
        unrecognized(`invalid character '[' exceeded max depth`, `{"a":${'['.repeat(25)} ...`),
      ],
      ['{"a": tru}', unrecognized(`invalid character '}' in literal true (expecting 'e')`, '{"a": tru}')],
    ];
    for (const [raw, message] of cases)
      failure(await http.send('POST', CM, { raw }), 400, 'BadRequest', message);
    const before = await http.get(CM);
    expect(before.status).toBe(200);
  });

  it('take JSON null as an empty object', async () => {
    failure(
      await http.send('POST', CM, { raw: 'null' }),
      422,
      'Invalid',
      'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
    );
  });

  it('in another media type are a 415 listing what the kind decodes', async () => {
    const text = { headers: { 'Content-Type': 'text/plain' } };
    failure(
      await http.send('POST', CM, { raw: '{}', ...text }),
      415,
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    );
    failure(
      await http.send('PATCH', `${CM}/x`, { raw: '{}', headers: { 'Content-Type': 'application/json' } }),
      415,
      'UnsupportedMediaType',
      '415: Unsupported Media Type',
    );
  });
});

describe('continue tokens', () => {
  it('that are not one are refused as storage.DecodeContinue words it', async () => {
    const bad = (token: string) => http.get(`${CM}?limit=1&continue=${encodeURIComponent(token)}`);
    const prefix = 'invalid continue token: continue key is not valid';
    failure(
      await bad('garbage'),
      400,
      'BadRequest',
      `${prefix}: invalid character '\\u0081' looking for beginning of value`,
    );
    failure(await bad('a=b'), 400, 'BadRequest', `${prefix}: illegal base64 data at input byte 1`);
    const token = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    failure(
      await bad(token({ v: 'meta.k8s.io/v2', rv: 5, start: 'a' })),
      400,
      'BadRequest',
      `${prefix}: server does not recognize this encoded version meta.k8s.io/v2`,
    );
    failure(
      await bad(token({ v: 'meta.k8s.io/v1', rv: 0, start: 'a' })),
      400,
      'BadRequest',
      `${prefix}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)`,
    );
    failure(
      await bad(token({ v: 'meta.k8s.io/v1', rv: 5, start: '' })),
      400,
      'BadRequest',
      `${prefix}: encoded start key empty`,
    );
    failure(
      await bad(token({ v: 'meta.k8s.io/v1', rv: 5, start: '../x' })),
      400,
      'BadRequest',
      `${prefix}: ../x`,
    );
    // A real token still pages.
    await http.post(CM, configMap({ name: 'page-a' }));
    await http.post(CM, configMap({ name: 'page-b' }));
    const first = await http.get(`${CM}?limit=1`);
    const next = await http.get(`${CM}?limit=1&continue=${first.json.metadata.continue}`);
    expect(next.status, next.text).toBe(200);
    expect(next.json.items[0].metadata.name > first.json.items[0].metadata.name).toBe(true);
  });
});

describe('a create over an object being deleted', () => {
  it('says so in its AlreadyExists', async () => {
    await http.post(CM, configMap({ name: 'held', finalizers: ['example.com/hold'] }));
    await http.send('DELETE', `${CM}/held`);
    const again = failure(
      await http.post(CM, configMap({ name: 'held' })),
      409,
      'AlreadyExists',
      'object is being deleted: configmaps "held" already exists',
    );
    expect(again.details).toEqual({ name: 'held', kind: 'configmaps' });
    failure(
      await http.post(`${CM}?dryRun=All`, configMap({ name: 'held' })),
      409,
      'AlreadyExists',
      again.message,
    );
    await http.patch(`${CM}/held`, { metadata: { finalizers: null } }, 'application/merge-patch+json');
  });
});

describe('custom resources', () => {
  const W = crPath('answers.example.com', 'v1', 'widgets');
  beforeAll(async () => {
    await establish(
      http,
      simpleCrd('widgets', 'Widget', 'answers.example.com', {
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: { size: { type: 'integer' } },
                required: ['size'],
                'x-kubernetes-validations': [{ rule: 'self.size < 9', message: 'too big' }],
              },
            },
          },
        },
      }),
    );
  });
  const widget = (name: string, kind = 'Widget') => ({
    apiVersion: 'answers.example.com/v1',
    kind,
    metadata: { name },
    spec: { size: 1 },
  });

  it('refuse a body of another kind as an invalid object of that kind', async () => {
    failure(
      await http.post(W, widget('x', 'Other')),
      422,
      'Invalid',
      'Other.answers.example.com "x" is invalid: kind: Invalid value: "Other": must be Widget',
    );
  });

  it('answer a subresource they do not serve as their object not found', async () => {
    expect((await http.post(W, widget('w1'))).status).toBe(201);
    for (const path of [`${W}/w1/scale`, `${W}/w1/frob`, `${W}/nope/scale`]) {
      const name = path.split('/').at(-2);
      failure(await http.get(path), 404, 'NotFound', `widgets.answers.example.com "${name}" not found`);
    }
  });

  it('quote the nil value of the error that stops the CEL rules, as Go prints it', async () => {
    const status = failure(await http.post(W, { ...widget('w2'), spec: {} }), 422, 'Invalid');
    expect(status.message).toBe(
      'Widget.answers.example.com "w2" is invalid: [spec.size: Required value, <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]',
    );
  });
});

describe('pods/eviction', () => {
  const PODS = `/api/v1/namespaces/${NS}/pods`;
  const eviction = (name: string) => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name } });

  it('is served for create only, checks its name, and evicts a pending pod whatever its budget', async () => {
    // Pending for good: no node has the label it asks for.
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'pending', labels: { app: 'held' } },
      spec: { nodeSelector: { nowhere: 'true' }, containers: [{ name: 'c', image: 'x' }] },
    };
    expect((await http.post(PODS, pod)).status).toBe(201);
    const pdb = {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'held' },
      spec: { minAvailable: 5, selector: { matchLabels: { app: 'held' } } },
    };
    expect((await http.post(`/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`, pdb)).status).toBe(201);

    failure(await http.get(`${PODS}/pending/eviction`), 405, 'MethodNotAllowed');
    failure(
      await http.post(`${PODS}/pending/eviction`, eviction('other')),
      400,
      'BadRequest',
      'name in URL does not match name in Eviction object',
    );
    failure(
      await http.post(`${PODS}/nope/eviction`, eviction('nope')),
      404,
      'NotFound',
      'pods "nope" not found',
    );
    const dry = await http.post(`${PODS}/pending/eviction?dryRun=All`, eviction('pending'));
    expect(dry.status, dry.text).toBe(201);
    expect((await http.get(`${PODS}/pending`)).status).toBe(200);
    const done = await http.post(`${PODS}/pending/eviction`, eviction('pending'));
    expect(done.status, done.text).toBe(201);
    expect(done.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      code: 201,
    });
    expect((await http.get(`${PODS}/pending`)).status).toBe(404);
  });

  it('is in discovery as policy/v1 Eviction', async () => {
    const v1 = await http.get('/api/v1');
    expect(v1.json.resources).toContainEqual(
      expect.objectContaining({
        name: 'pods/eviction',
        group: 'policy',
        version: 'v1',
        kind: 'Eviction',
        verbs: ['create'],
      }),
    );
  });
});

describe('Services', () => {
  const SVC = `/api/v1/namespaces/${NS}/services`;
  const service = (name: string, spec: object) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec,
  });
  const one = async (body: object) => failure(await http.post(SVC, body), 422, 'Invalid').details.causes;

  it('refuse cluster IPs that are not addresses, outside the range, taken, or of another family', async () => {
    expect(await one(service('ip-abc', { clusterIP: 'abc', ports: [{ port: 80 }] }))).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "abc": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
        field: 'spec.clusterIPs[0]',
      },
    ]);
    expect(
      await one(
        service('ip-two', { clusterIP: '10.96.0.50', clusterIPs: ['10.96.0.51'], ports: [{ port: 80 }] }),
      ),
    ).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: []string{"10.96.0.51"}: first value must match `clusterIP`',
        field: 'spec.clusterIPs',
      },
    ]);
    expect((await one(service('ip-far', { clusterIP: '1.2.3.4', ports: [{ port: 80 }] })))[0].message).toBe(
      'Invalid value: []string{"1.2.3.4"}: failed to allocate IP 1.2.3.4: the provided IP (1.2.3.4) is not in the valid range. The range of valid IPs is 10.96.0.0/12',
    );
    const taken = (await http.get(`/api/v1/namespaces/default/services/kubernetes`)).json.spec.clusterIP;
    expect((await one(service('ip-taken', { clusterIP: taken, ports: [{ port: 80 }] })))[0].message).toBe(
      `Invalid value: []string{"${taken}"}: failed to allocate IP ${taken}: provided IP is already allocated`,
    );
    expect((await one(service('ip-v6', { clusterIP: 'fd00::1', ports: [{ port: 80 }] })))[0]).toEqual({
      reason: 'FieldValueInvalid',
      message: 'Invalid value: []string{"fd00::1"}: IPv6 is not configured on this cluster',
      field: 'spec.clusterIPs[0]',
    });
    const ok = await http.post(SVC, service('ip-chosen', { clusterIP: '10.96.7.7', ports: [{ port: 80 }] }));
    expect(ok.status, ok.text).toBe(201);
    expect(ok.json.spec.clusterIPs).toEqual(['10.96.7.7']);
  });

  it('refuse node ports outside the range or taken, and keep their own on update', async () => {
    const nodePort = (name: string, port: number) =>
      service(name, { type: 'NodePort', ports: [{ port: 80, nodePort: port }] });
    expect(await one(nodePort('np-far', 40000))).toEqual([
      {
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: 40000: provided port is not in the valid range. The range of valid ports is 30000-32767',
        field: 'spec.ports[0].nodePort',
      },
    ]);
    expect((await http.post(SVC, nodePort('np-a', 30555))).status).toBe(201);
    expect((await one(nodePort('np-b', 30555)))[0].message).toBe(
      'Invalid value: 30555: provided port is already allocated',
    );
    const relabel = await http.patch(
      `${SVC}/np-a`,
      { metadata: { labels: { a: 'b' } } },
      'application/merge-patch+json',
    );
    expect(relabel.status, relabel.text).toBe(200);
  });
});

describe('subresource and watch options', () => {
  it('refuse a Scale named otherwise than its URL', async () => {
    const deploy = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'scaled' },
      spec: {
        selector: { matchLabels: { a: 'scaled' } },
        template: {
          metadata: { labels: { a: 'scaled' } },
          spec: { containers: [{ name: 'c', image: 'x' }] },
        },
      },
    };
    expect((await http.post(`/apis/apps/v1/namespaces/${NS}/deployments`, deploy)).status).toBe(201);
    failure(
      await http.put(`/apis/apps/v1/namespaces/${NS}/deployments/scaled/scale`, {
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata: { name: 'other' },
        spec: { replicas: 2 },
      }),
      400,
      'BadRequest',
      'the name of the object (other) does not match the name on the URL (scaled)',
    );
  });

  it('refuse a watch’s faulty options together, as a 422 of the ListOptions', async () => {
    failure(
      await http.get(`${CM}?watch=1&resourceVersionMatch=Exact&resourceVersion=1`),
      422,
      'Invalid',
      'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]',
    );
  });
});

describe('writes without a name', () => {
  const undeterminable = (name: string) =>
    `the name of the object (${name} based on URL) was undeterminable: name must be provided`;

  it('are refused for an update, a patch that removes it, a Scale and an apply', async () => {
    await http.post(CM, configMap({ name: 'named' }, { data: { a: '1' } }));
    for (const body of [
      { apiVersion: 'v1', kind: 'ConfigMap', data: { a: '2' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: {}, data: { a: '2' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: '' }, data: { a: '2' } },
    ]) {
      failure(await http.put(`${CM}/named`, body), 400, 'BadRequest', undeterminable('named'));
    }
    failure(
      await http.patch(
        `${CM}/named`,
        [{ op: 'remove', path: '/metadata/name' }],
        'application/json-patch+json',
      ),
      400,
      'BadRequest',
      undeterminable('named'),
    );
    failure(
      await http.send('PATCH', `${CM}/fresh?fieldManager=m`, {
        raw: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'g-' } }),
        headers: { 'Content-Type': 'application/apply-patch+yaml' },
      }),
      400,
      'BadRequest',
      undeterminable('fresh'),
    );
    expect((await http.get(`${CM}/named`)).json.data).toEqual({ a: '1' });
  });

  it('an apply with duplicate keys is warned of under Warn and refused under Strict', async () => {
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup\ndata:\n  x: "1"\n  x: "2"\n';
    const send = (validation: string) =>
      http.send('PATCH', `${CM}/dup?fieldManager=m${validation}`, {
        raw: yaml,
        headers: { 'Content-Type': 'application/apply-patch+yaml' },
      });
    const warned = await send('');
    expect(warned.status, warned.text).toBe(201);
    expect(warned.headers.warning).toBe('299 - "line 7: key \\"x\\" already set in map"');
    failure(await send('&fieldValidation=Strict'), 400, 'BadRequest');
    expect((await send('&fieldValidation=Ignore')).headers.warning).toBeUndefined();
  });
});

describe('pod specs', () => {
  const PODS = `/api/v1/namespaces/${NS}/pods?dryRun=All`;
  const c = (extra: object = {}) => ({ name: 'c', image: 'nginx', ...extra });
  const causes = async (spec: object) => {
    const body = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'spec' },
      spec: { containers: [c()], ...spec },
    };
    const r = await http.post(PODS, body);
    if (r.status === 201) return [];
    return failure(r, 422, 'Invalid').details.causes.map((x: any) => `${x.field}: ${x.message}`);
  };
  const C0 = 'spec.containers[0]';

  it('refuse what kube-apiserver refuses, with its words', async () => {
    const cases: [object, string[]][] = [
      [
        { containers: [c({ livenessProbe: {} })] },
        [`${C0}.livenessProbe: Required value: must specify a handler type`],
      ],
      [
        { containers: [c({ livenessProbe: { exec: { command: ['x'] }, tcpSocket: { port: 80 } } })] },
        [`${C0}.livenessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type`],
      ],
      [
        { containers: [c({ readinessProbe: { httpGet: { port: 'Bad_Port' } } })] },
        [
          `${C0}.readinessProbe.httpGet.port: Invalid value: "Bad_Port": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
        ],
      ],
      [
        { containers: [c({ livenessProbe: { exec: { command: ['x'] }, periodSeconds: -1 } })] },
        [`${C0}.livenessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0`],
      ],
      [
        { containers: [c({ startupProbe: { exec: { command: ['x'] }, successThreshold: 2 } })] },
        [`${C0}.startupProbe.successThreshold: Invalid value: 2: must be 1`],
      ],
      [
        { volumes: [{ name: 'v', emptyDir: {}, hostPath: { path: '/x' } }] },
        ['spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type'],
      ],
      [
        {
          containers: [
            c({
              env: [
                {
                  name: 'A',
                  valueFrom: {
                    configMapKeyRef: { name: 'x', key: 'y' },
                    secretKeyRef: { name: 'x', key: 'y' },
                  },
                },
              ],
            }),
          ],
        },
        [`${C0}.env[0].valueFrom: Invalid value: "": may not have more than one field specified at a time`],
      ],
      [
        {
          containers: [
            c({ env: [{ name: 'A', value: 'v', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] }),
          ],
        },
        [`${C0}.env[0].valueFrom: Invalid value: "": may not be specified when \`value\` is not empty`],
      ],
      [
        { containers: [c({ env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'spec.bogus' } } }] })] },
        [
          `${C0}.env[0].valueFrom.fieldRef.fieldPath: Invalid value: "spec.bogus": error converting fieldPath: field label not supported: spec.bogus`,
        ],
      ],
      [
        { containers: [c({ env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'status.phase' } } }] })] },
        [
          `${C0}.env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "status.phase": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"`,
        ],
      ],
      [
        {
          affinity: {
            nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
          },
        },
        [
          'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term',
        ],
      ],
      [
        { securityContext: { runAsUser: -1 } },
        ['spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive'],
      ],
      [
        { hostname: 'Bad_Host' },
        [
          `spec.hostname: Invalid value: "Bad_Host": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
        ],
      ],
      [
        { containers: [c({ resources: { requests: { 'example.com/gpu': '1' } } })] },
        [`${C0}.resources.limits: Required value: Limit must be set for non overcommitable resources`],
      ],
      [
        { containers: [c({ terminationMessagePolicy: 'Bogus' })] },
        [`${C0}.terminationMessagePolicy: Invalid value: "Bogus": must be 'File' or 'FallbackToLogsOnError'`],
      ],
      [
        {
          topologySpreadConstraints: [
            { maxSkew: 0, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' },
          ],
        },
        ['spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero'],
      ],
      [
        {
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' },
            { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' },
          ],
        },
        [
          'spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{zone, DoNotSchedule}"',
        ],
      ],
      [
        { hostAliases: [{ ip: 'x' }] },
        [
          'spec.hostAliases[0].ip: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
        ],
      ],
    ];
    for (const [spec, want] of cases) expect(await causes(spec), JSON.stringify(spec)).toEqual(want);
  });

  it('take what kube-apiserver takes', async () => {
    for (const spec of [
      {
        containers: [
          c({ livenessProbe: { httpGet: { port: 'http' } }, ports: [{ name: 'http', containerPort: 80 }] }),
        ],
      },
      {
        containers: [
          c({ env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } }] }),
        ],
      },
      {
        containers: [
          c({ resources: { requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '1' } } }),
        ],
      },
      {
        topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway' }],
      },
      { hostAliases: [{ ip: '10.1.2.3', hostnames: ['a.local'] }] },
    ]) {
      expect(await causes(spec), JSON.stringify(spec)).toEqual([]);
    }
  });
});

describe('the RuntimeClass admission plugin', () => {
  const PODS = `/api/v1/namespaces/${NS}/pods?dryRun=All`;
  const pod = (spec: object) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'rcp' },
    spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
  });
  const rejected = (why: string) => `pods "rcp" is forbidden: ${why}`;

  it('refuses a missing class and overheads the class does not define, and applies its overhead and scheduling', async () => {
    const RC = '/apis/node.k8s.io/v1/runtimeclasses';
    await http.post(RC, {
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: 'rc-over' },
      handler: 'x',
      overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
      scheduling: {
        nodeSelector: { sandbox: 'true' },
        tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }],
      },
    });
    await http.post(RC, {
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: 'rc-plain' },
      handler: 'y',
    });
    const cases: [object, string][] = [
      [{ runtimeClassName: 'nope' }, 'pod rejected: RuntimeClass "nope" not found'],
      [
        { overhead: { cpu: '1' } },
        'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead',
      ],
      [
        { runtimeClassName: 'rc-plain', overhead: { cpu: '1' } },
        'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead',
      ],
      [
        { runtimeClassName: 'rc-over', overhead: { cpu: '1' } },
        "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
      ],
      [
        { runtimeClassName: 'rc-over', nodeSelector: { sandbox: 'false' } },
        'conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = false',
      ],
    ];
    for (const [spec, why] of cases)
      failure(await http.post(PODS, pod(spec)), 403, 'Forbidden', rejected(why));
    const applied = await http.post(
      PODS,
      pod({ runtimeClassName: 'rc-over', overhead: { cpu: '0.25', memory: '120Mi' } }),
    );
    expect(applied.status, applied.text).toBe(201);
    expect(applied.json.spec.overhead).toEqual({ cpu: '250m', memory: '120Mi' });
    expect(applied.json.spec.nodeSelector).toEqual({ sandbox: 'true' });
    expect(applied.json.spec.tolerations).toContainEqual({
      key: 'sandbox',
      operator: 'Exists',
      effect: 'NoSchedule',
    });
  });
});
