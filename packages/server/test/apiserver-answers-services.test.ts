/**
 * Answers recorded from a real kube-apiserver (the anchor's 1.24, each checked against 1.32's
 * sources) for Services, TokenRequests, Nodes and CertificateSigningRequests, where the local
 * plane stored what kube refuses or answered in other words.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../src/index.js';
import { httpClient } from './http.js';
import { failure } from './status-check.js';

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
});
afterAll(() => cp?.stop());

const DRY = '?dryRun=All';
const SVC = '/api/v1/namespaces/default/services';
const service = (name: string, spec: object) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: { ports: [{ port: 80 }], ...spec },
});
/** `field: message` of each cause. */
const causes = (status: { details: { causes: { field: string; message: string }[] } }) =>
  status.details.causes.map((c) => `${c.field}: ${c.message}`);

describe('Services', () => {
  it('refuses external IPs that are not addresses or are special ones', async () => {
    const status = failure(
      await http.post(
        `${SVC}${DRY}`,
        service('ips', { externalIPs: ['not-an-ip', '127.0.0.1', '0.0.0.0', '8.8.8.8'] }),
      ),
      422,
      'Invalid',
    );
    expect(causes(status)).toEqual([
      'spec.externalIPs[0]: Invalid value: "not-an-ip": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      'spec.externalIPs[1]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
      'spec.externalIPs[2]: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)',
    ]);
  });

  it('refuses source ranges that are not CIDRs, and an affinity timeout out of range', async () => {
    failure(
      await http.post(
        `${SVC}${DRY}`,
        service('lb', { type: 'LoadBalancer', loadBalancerSourceRanges: ['1.2.3.4/40', '10.0.0.0/8'] }),
      ),
      422,
      'Invalid',
      'Service "lb" is invalid: spec.LoadBalancerSourceRanges: Invalid value: "[1.2.3.4/40 10.0.0.0/8]": must be a list of IP ranges. For example, 10.240.0.0/24,10.250.0.0/24 ',
    );
    failure(
      await http.post(`${SVC}${DRY}`, service('ci', { loadBalancerSourceRanges: ['10.0.0.0/8'] })),
      422,
      'Invalid',
      'Service "ci" is invalid: spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is \'LoadBalancer\'',
    );
    failure(
      await http.post(
        `${SVC}${DRY}`,
        service('aff', {
          sessionAffinity: 'ClientIP',
          sessionAffinityConfig: { clientIP: { timeoutSeconds: 0 } },
        }),
      ),
      422,
      'Invalid',
      'Service "aff" is invalid: spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400',
    );
  });

  it('takes an external traffic policy only on a service reachable from outside', async () => {
    failure(
      await http.post(`${SVC}${DRY}`, service('etp', { externalTrafficPolicy: 'Local' })),
      422,
      'Invalid',
      'Service "etp" is invalid: spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services',
    );
    const withIPs = await http.post(
      `${SVC}${DRY}`,
      service('etp', { externalTrafficPolicy: 'Local', externalIPs: ['8.8.8.8'] }),
    );
    expect(withIPs.status, withIPs.text).toBe(201);
    failure(
      await http.post(`${SVC}${DRY}`, service('fam', { ipFamilyPolicy: 'Sometimes' })),
      422,
      'Invalid',
      'Service "fam" is invalid: spec.ipFamilyPolicy: Unsupported value: "Sometimes": supported values: "PreferDualStack", "RequireDualStack", "SingleStack"',
    );
  });

  it('clears what a new type has no use for, and frees the cluster IP', async () => {
    const created = await http.post(SVC, service('to-external', { type: 'NodePort', selector: { a: 'b' } }));
    expect(created.status, created.text).toBe(201);
    const ip = created.json.spec.clusterIP as string;
    const patched = await http.patch(
      `${SVC}/to-external`,
      { spec: { type: 'ExternalName', externalName: 'db.example.com' } },
      'application/merge-patch+json',
    );
    expect(patched.status, patched.text).toBe(200);
    const spec = patched.json.spec;
    for (const gone of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy', 'externalTrafficPolicy'])
      expect(spec[gone], gone).toBeUndefined();
    expect(spec.ports[0].nodePort).toBeUndefined();
    // The address is free again.
    const reuse = await http.post(SVC, service('reuse', { clusterIP: ip }));
    expect(reuse.status, reuse.text).toBe(201);
    // A cluster IP the same request names is its own to keep: kube refuses it on ExternalName.
    const kept = await http.patch(
      `${SVC}/reuse`,
      {
        spec: {
          type: 'ExternalName',
          externalName: 'x.example.com',
          clusterIP: '10.96.0.250',
          clusterIPs: ['10.96.0.250'],
        },
      },
      'application/merge-patch+json',
    );
    expect(failure(kept, 422, 'Invalid').message).toContain(
      'spec.clusterIPs: Forbidden: may not be set for ExternalName services',
    );
  });
});

describe('TokenRequests', () => {
  const TR = '/api/v1/namespaces/default/serviceaccounts/default/token';

  it('decodes the body as a TokenRequest, as the scheme decodes it', async () => {
    const cases: [object, string][] = [
      [
        { apiVersion: 'v1', kind: 'ConfigMap' },
        'ConfigMap in version "v1" cannot be handled as a TokenRequest: converting (v1.ConfigMap) to (authentication.TokenRequest): unknown conversion',
      ],
      [
        { apiVersion: 'policy/v1', kind: 'Eviction' },
        'Eviction in version "v1" cannot be handled as a TokenRequest: converting (v1.Eviction) to (authentication.TokenRequest): unknown conversion',
      ],
      [
        { apiVersion: 'v1', kind: 'TokenRequest' },
        'TokenRequest in version "v1" cannot be handled as a TokenRequest: no kind "TokenRequest" is registered for version "v1" in scheme "pkg/runtime/scheme.go:100"',
      ],
    ];
    for (const [body, message] of cases) failure(await http.post(TR, body), 400, 'BadRequest', message);
  });

  it('words a duration past 2^32 seconds as an invalid value', async () => {
    const status = failure(
      await http.post(TR, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 2 ** 33 },
      }),
      422,
      'Invalid',
    );
    expect(status.details.causes[0].reason).toBe('FieldValueInvalid');
  });
});

describe('Nodes and CertificateSigningRequests', () => {
  const node = (spec: object) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' }, spec });

  it("validates a node's taints under metadata, unique by key and effect", async () => {
    const status = failure(
      await http.post(
        `/api/v1/nodes${DRY}`,
        node({
          taints: [
            { key: 'a', value: 'x y', effect: 'NoSchedule' },
            { key: 'b', effect: 'Sometimes' },
            { key: 'a', value: 'z', effect: 'NoSchedule' },
          ],
        }),
      ),
      422,
      'Invalid',
    );
    expect(causes(status)).toEqual([
      `metadata.taints[0].value: Invalid value: "x y": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
      'metadata.taints[1].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
      'metadata.taints[2]: Duplicate value: core.Taint{Key:"a", Value:"z", Effect:"NoSchedule", TimeAdded:<nil>}: taints must be unique by key and effect pair',
    ]);
  });

  it('keeps podCIDR as podCIDRs and refuses CIDRs kube refuses', async () => {
    const ok = await http.post(`/api/v1/nodes${DRY}`, node({ podCIDR: '10.0.0.0/24' }));
    expect(ok.json.spec.podCIDRs).toEqual(['10.0.0.0/24']);
    failure(
      await http.post(`/api/v1/nodes${DRY}`, node({ podCIDR: '10.0.0.0/99' })),
      422,
      'Invalid',
      'Node "n" is invalid: spec.podCIDRs[0]: Invalid value: []string{"10.0.0.0/99"}: must be valid CIDR',
    );
    failure(
      await http.post(`/api/v1/nodes${DRY}`, node({ podCIDRs: ['10.0.0.0/24', '10.1.0.0/24'] })),
      422,
      'Invalid',
      'Node "n" is invalid: spec.podCIDRs: Invalid value: []string{"10.0.0.0/24", "10.1.0.0/24"}: may specify no more than one CIDR for each IP family',
    );
  });

  it("words a CSR's missing request and signer as kube does", async () => {
    failure(
      await http.post(`/apis/certificates.k8s.io/v1/certificatesigningrequests${DRY}`, {
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name: 'c' },
        spec: { usages: ['client auth'] },
      }),
      422,
      'Invalid',
      'CertificateSigningRequest.certificates.k8s.io "c" is invalid: [spec.request: Invalid value: []byte(nil): PEM block type must be CERTIFICATE REQUEST, spec.signerName: Required value: signerName must be provided]',
    );
  });
});

describe('Pods', () => {
  const PODS = '/api/v1/namespaces/default/pods';

  beforeAll(async () => {
    const created = await http.post(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'answers' },
      spec: { containers: [{ name: 'c', image: 'nginx' }], schedulingGates: [{ name: 'example.com/wait' }] },
    });
    expect(created.status, created.text).toBe(201);
  });

  it('checks the IPs and the nominated node a status writer sends', async () => {
    const status = (s: object) =>
      http.patch(`${PODS}/answers/status${DRY}`, { status: s }, 'application/merge-patch+json');
    failure(
      await status({ podIP: 'x', podIPs: [{ ip: 'x' }] }),
      422,
      'Invalid',
      'Pod "answers" is invalid: status.podIPs[0]: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    );
    failure(
      await status({ podIPs: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }] }),
      422,
      'Invalid',
      'Pod "answers" is invalid: status.podIPs: Invalid value: []core.PodIP{core.PodIP{IP:"10.0.0.1"}, core.PodIP{IP:"10.0.0.2"}}: may specify no more than one IP for each IP family',
    );
    expect(failure(await status({ nominatedNodeName: 'N!' }), 422, 'Invalid').details.causes[0].field).toBe(
      'status.nominatedNodeName',
    );
    expect((await status({ podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }] })).status).toBe(200);
  });

  it('lets scheduling gates be removed, not added', async () => {
    const gates = (schedulingGates: object[]) =>
      http.patch(`${PODS}/answers${DRY}`, { spec: { schedulingGates } }, 'application/merge-patch+json');
    failure(
      await gates([{ name: 'example.com/wait' }, { name: 'example.com/more' }]),
      422,
      'Invalid',
      'Pod "answers" is invalid: spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate \'example.com/more\'',
    );
    expect((await gates([])).status).toBe(200);
  });

  it('answers a binding kube cannot validate with its plain 500, as BindingREST does', async () => {
    const bind = (target: object) =>
      http.post(`${PODS}/answers/binding${DRY}`, {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: 'answers' },
        target,
      });
    const empty = await bind({});
    expect([empty.status, empty.json.reason, empty.json.message]).toEqual([
      500,
      undefined,
      'target.name: Required value',
    ]);
    const both = await bind({ kind: 'Pod' });
    expect(both.json.message).toBe(
      '[target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>", target.name: Required value]',
    );
  });
});

describe('content negotiation', () => {
  const CM = '/api/v1/namespaces/default/configmaps';
  const get = (path: string, accept: string) => http.get(path, { headers: { Accept: accept } });
  const META = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
  const META_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

  beforeAll(async () => {
    await http.post(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'negotiated', labels: { n: 'y' } },
    });
  });

  it('refuses a metadata view of the other shape than the answer, naming its Go type', async () => {
    failure(
      await get(`${CM}?labelSelector=n%3Dy`, `${META}, application/json`),
      406,
      'NotAcceptable',
      'you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)',
    );
    failure(
      await get(`${CM}/negotiated`, META_LIST),
      406,
      'NotAcceptable',
      'you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)',
    );
    expect((await get(`${CM}/negotiated`, META)).json.kind).toBe('PartialObjectMetadata');
    expect((await get(`${CM}?labelSelector=n%3Dy`, META_LIST)).json.kind).toBe('PartialObjectMetadataList');
  });

  it("answers an Accept the routes do not produce with go-restful's 406", async () => {
    for (const accept of ['text/html', 'application/*'])
      failure(await get(`${CM}/negotiated`, accept), 406, 'NotAcceptable', '406: Not Acceptable');
    expect((await get(`${CM}/negotiated`, 'text/plain, application/json')).status).toBe(200);
  });

  it('serves Tables and metadata in YAML, keys sorted as the apiserver writes them', async () => {
    const r = await get(
      `${CM}?labelSelector=n%3Dy`,
      'application/yaml;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
    );
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/yaml');
    expect(r.text).toMatch(
      /^apiVersion: meta\.k8s\.io\/v1\nitems:\n- apiVersion: meta\.k8s\.io\/v1\n {2}kind: PartialObjectMetadata\n/,
    );
    const table = await get(`${CM}/negotiated`, 'application/yaml;as=Table;g=meta.k8s.io;v=v1');
    expect(table.text).toMatch(/^apiVersion: meta\.k8s\.io\/v1\ncolumnDefinitions:\n/);
  });
});

describe('deletes', () => {
  const CM = '/api/v1/namespaces/default/configmaps';
  const remove = (name: string, body: string, query = '') =>
    http.send('DELETE', `${CM}/${name}${query}`, {
      raw: body,
      headers: { 'Content-Type': 'application/json' },
    });

  beforeAll(async () => {
    for (const name of ['del-a', 'del-b'])
      await http.post(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
  });

  it('decodes a DeleteOptions body as the delete handler does: its failures are plain 500s', async () => {
    const cases: [string, string][] = [
      [
        '{bad',
        "couldn't get version/kind; json parse error: invalid character 'b' looking for beginning of object key string",
      ],
      [
        '{"kind":"ConfigMap","apiVersion":"v1"}',
        'no kind "ConfigMap" is registered for version "v1" in scheme "pkg/runtime/scheme.go:100"',
      ],
      [
        '{"gracePeriodSeconds":"soon"}',
        'json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64',
      ],
    ];
    for (const [body, message] of cases) {
      const r = await remove('del-a', body, '?dryRun=All');
      expect([r.status, r.json.reason, r.json.message]).toEqual([500, undefined, message]);
    }
    failure(
      await remove('del-a', '{"orphanDependents":true,"propagationPolicy":"Background"}', '?dryRun=All'),
      422,
      'Invalid',
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set',
    );
    expect((await http.get(`${CM}/del-a`)).status).toBe(200);
  });

  it("reads the query's options only without a body: a body's delete is not a dry run", async () => {
    const r = await remove('del-b', '{"kind":"DeleteOptions","apiVersion":"v1"}', '?dryRun=All');
    expect(r.status, r.text).toBe(200);
    expect((await http.get(`${CM}/del-b`)).status).toBe(404);
  });

  it('has no route to create in, or delete, a namespaced collection across all namespaces', async () => {
    failure(
      await http.send('DELETE', '/api/v1/configmaps?dryRun=All'),
      405,
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
    );
    failure(
      await http.post('/api/v1/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'x', namespace: 'default' },
      }),
      405,
      'MethodNotAllowed',
    );
  });
});

describe('endpoints', () => {
  const ES = `/apis/discovery.k8s.io/v1/namespaces/default/endpointslices${DRY}`;
  const slice = (o: object) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'e' },
    addressType: 'IPv4',
    endpoints: [],
    ...o,
  });

  it("checks an EndpointSlice's addresses by its type, its ports, names and protocols", async () => {
    const status = failure(
      await http.post(
        ES,
        slice({
          endpoints: [{ addresses: ['x', '169.254.1.1', 'fd00::1'], nodeName: 'N!', hostname: 'A_B' }],
          ports: [
            { name: 'a', port: 1 },
            { name: 'a', port: 2, protocol: 'ICMP' },
          ],
        }),
      ),
      422,
      'Invalid',
    );
    expect(causes(status)).toEqual([
      'endpoints[0].addresses[0]: Invalid value: "x": must be a valid IPv4 address',
      'endpoints[0].addresses[0]: Invalid value: "x": must be a valid IP address',
      'endpoints[0].addresses[1]: Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
      'endpoints[0].addresses[2]: Invalid value: "fd00::1": must be a valid IPv4 address',
      `endpoints[0].nodeName: Invalid value: "N!": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      `endpoints[0].hostname: Invalid value: "A_B": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      'ports[1].name: Duplicate value: "a"',
      'ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
    ]);
    // Up to 20,000 ports, whatever the field's description says; defaults as Go writes them.
    const many = await http.post(
      ES,
      slice({
        endpoints: [{ addresses: ['10.0.0.1'] }],
        ports: Array.from({ length: 101 }, (_, i) => ({ name: `p${i}`, port: 1000 + i })),
      }),
    );
    expect(many.status, many.text).toBe(201);
    expect(many.json.endpoints[0].conditions).toEqual({});
    expect(many.json.ports[0]).toEqual({ name: 'p0', port: 1000, protocol: 'TCP' });
  });

  it('refuses an Endpoints address that is special (loopback aside), reporting an unparsable one twice as kube does', async () => {
    const ep = (ip: string) => ({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'e' },
      subsets: [{ addresses: [{ ip }], ports: [{ port: 80 }] }],
    });
    failure(
      await http.post(`/api/v1/namespaces/default/endpoints${DRY}`, ep('0.0.0.0')),
      422,
      'Invalid',
      'Endpoints "e" is invalid: subsets[0].addresses[0].ip: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)',
    );
    // Loopback addresses are how the local plane's Services reach processes on this machine: the
    // one place it takes, on purpose, what a cluster refuses.
    expect((await http.post(`/api/v1/namespaces/default/endpoints${DRY}`, ep('127.0.0.1'))).status).toBe(201);
    const bad = failure(
      await http.post(`/api/v1/namespaces/default/endpoints${DRY}`, ep('x')),
      422,
      'Invalid',
    );
    expect(causes(bad)).toEqual([
      'subsets[0].addresses[0].ip: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      'subsets[0].addresses[0].ip: Invalid value: "x": must be a valid IP address',
    ]);
  });
});
