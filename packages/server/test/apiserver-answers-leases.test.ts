/**
 * What leader election and admission configuration meet on a real kube-apiserver (compared
 * request by request with the anchor's 1.24, checked in 1.32's sources), where the local plane
 * said yes:
 * - kinds whose strategy refuses an update without a resourceVersion (`AllowUnconditionalUpdate`
 *   false): Leases, CRDs, APIServices, webhook configurations, ValidatingAdmissionPolicies and
 *   their bindings; the local plane let a blind PUT overwrite them;
 * - `metav1.MicroTime` (a Lease's renewTime, an Event's eventTime) decodes with exactly six
 *   digits of a second, `metav1.Time` with RFC 3339, in Go's words when they do not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient } from './http.js';
import { eventually, type KubectlEnv, startKubectlEnv } from './kubectl.js';
import { failure } from './status-check.js';

let env: KubectlEnv;
let http: ReturnType<typeof httpClient>;

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
const MICRO = '2006-01-02T15:04:05.000000Z07:00';

beforeAll(async () => {
  env = await startKubectlEnv();
  http = httpClient(env.cp);
});
afterAll(() => env?.stop());

describe('an update without a resourceVersion', () => {
  const AR = '/apis/admissionregistration.k8s.io/v1';
  const kinds: [string, string, object][] = [
    ['leases', LEASES, { spec: { holderIdentity: 'a' } }],
    [
      'customresourcedefinitions',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      {
        spec: {
          group: 'u.example.com',
          scope: 'Namespaced',
          names: { plural: 'gears', kind: 'Gear', singular: 'gear', listKind: 'GearList' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          ],
        },
      },
    ],
    ['mutatingwebhookconfigurations', `${AR}/mutatingwebhookconfigurations`, { webhooks: [] }],
    ['validatingwebhookconfigurations', `${AR}/validatingwebhookconfigurations`, { webhooks: [] }],
    [
      'validatingadmissionpolicies',
      `${AR}/validatingadmissionpolicies`,
      {
        spec: {
          matchConstraints: {
            resourceRules: [
              { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] },
            ],
          },
          validations: [{ expression: 'true' }],
        },
      },
    ],
    [
      'validatingadmissionpolicybindings',
      `${AR}/validatingadmissionpolicybindings`,
      { spec: { policyName: 'p', validationActions: ['Deny'] } },
    ],
  ];

  it.each(kinds)('is refused for %s, the stored object kept', async (resource, path, body) => {
    const name = resource === 'customresourcedefinitions' ? 'gears.u.example.com' : 'blind';
    const created = await http.post(path, { metadata: { name }, ...body });
    expect(created.status, created.text).toBe(201);
    const blind = { ...created.json, metadata: { name, labels: { changed: 'yes' } } };
    const status = failure(await http.put(`${path}/${name}`, blind), 422, 'Invalid');
    expect(status.message).toMatch(
      / is invalid: metadata\.resourceVersion: Invalid value: 0x0: must be specified for an update$/,
    );
    expect(status.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: 0x0: must be specified for an update',
        field: 'metadata.resourceVersion',
      },
    ]);
    const after = await http.get(`${path}/${name}`);
    expect(after.json.metadata.labels).toBeUndefined();
    // With the resourceVersion it read, the same update passes (read again when a controller,
    // such as the policy's type checker, wrote the status meanwhile).
    const ok = await eventually(async () => {
      const current = await http.get(`${path}/${name}`);
      const r = await http.put(`${path}/${name}`, {
        ...blind,
        metadata: { ...blind.metadata, resourceVersion: current.json.metadata.resourceVersion },
      });
      return r.status === 409 ? undefined : r;
    });
    expect(ok.status, ok.text).toBe(200);
  });

  it('is still taken for a ConfigMap; kubectl replace reads the resourceVersion first', async () => {
    await env.ok(['create', 'configmap', 'blind']);
    const put = await http.put('/api/v1/namespaces/default/configmaps/blind', {
      metadata: { name: 'blind' },
      data: { a: '1' },
    });
    expect(put.status, put.text).toBe(200);
    const lease = JSON.stringify({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'replaced' },
      spec: { holderIdentity: 'me' },
    });
    await env.ok(['create', '-f', '-'], { input: lease });
    // kubectl replace fetches the resourceVersion when the file has none, as kubectl's Helper does.
    await env.ok(['replace', '-f', '-'], { input: lease.replace('"me"', '"you"') });
    expect((await http.get(`${LEASES}/replaced`)).json.spec.holderIdentity).toBe('you');
  });
});

describe('timestamps', () => {
  it("decodes a Lease's MicroTime with six digits of a second only", async () => {
    const lease = (renewTime: string) => ({ metadata: { name: 'micro' }, spec: { renewTime } });
    failure(
      await http.post(`${LEASES}?dryRun=All`, lease('2026-01-01T00:00:00Z')),
      400,
      'BadRequest',
      `Lease in version "v1" cannot be handled as a Lease: parsing time "2026-01-01T00:00:00Z" as "${MICRO}": cannot parse "Z" as ".000000"`,
    );
    failure(
      await http.post(`${LEASES}?dryRun=All`, lease('2026-02-30T00:00:00.000000Z')),
      400,
      'BadRequest',
      'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-02-30T00:00:00.000000Z": day out of range',
    );
    expect((await http.post(`${LEASES}?dryRun=All`, lease('2026-01-01T00:00:00.000000Z'))).status).toBe(201);
    const r = await env.run(['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        ...lease('2026-01-01T00:00:00.5Z'),
      }),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot parse ".5Z" as ".000000"`);
  });

  it("decodes an Event's Time as RFC 3339, a fraction taken", async () => {
    const event = (lastTimestamp: string) => ({
      metadata: { name: 'time' },
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
      lastTimestamp,
    });
    const EVENTS = '/api/v1/namespaces/default/events?dryRun=All';
    expect((await http.post(EVENTS, event('2026-01-01T00:00:00.5+01:00'))).status).toBe(201);
    failure(
      await http.post(EVENTS, event('2026-01-01T00:00:00Zjunk')),
      400,
      'BadRequest',
      'Event in version "v1" cannot be handled as a Event: parsing time "2026-01-01T00:00:00Zjunk": extra text: "junk"',
    );
  });
});
