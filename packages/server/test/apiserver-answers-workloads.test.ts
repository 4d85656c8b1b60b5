/**
 * More answers recorded from a real kube-apiserver (the anchor's 1.24, each checked unchanged in
 * 1.32's sources) where the local plane answered otherwise: workload templates, autoscalers,
 * docker config Secrets, where webhooks may be called (admission and CRD conversion), CEL rules
 * cut short, network policies and ingresses, host paths, quotas, namespaces' finalizers,
 * events.k8s.io Events, and patches that are not objects or change the object's kind.
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
const template = (spec: object = {}) => ({
  metadata: { labels: { app: 'x' } },
  spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
});

describe('workloads', () => {
  it('forbids activeDeadlineSeconds in a Deployment or ReplicaSet template', async () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { selector: { matchLabels: { app: 'x' } }, template: template({ activeDeadlineSeconds: 5 }) },
    };
    const status = failure(
      await http.post(`/apis/apps/v1/namespaces/default/deployments${DRY}`, deployment),
      422,
      'Invalid',
      'Deployment.apps "d" is invalid: spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported',
    );
    expect(status.details.causes).toEqual([
      {
        reason: 'FieldValueForbidden',
        message: 'Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported',
        field: 'spec.template.spec.activeDeadlineSeconds',
      },
    ]);
    failure(
      await http.post(`/apis/apps/v1/namespaces/default/replicasets${DRY}`, {
        ...deployment,
        kind: 'ReplicaSet',
      }),
      422,
      'Invalid',
      'ReplicaSet.apps "d" is invalid: spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported',
    );
  });

  it('refuses an autoscaler that may scale to zero on a metric that cannot wake it', async () => {
    const hpa = (spec: object) => ({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' },
        maxReplicas: 5,
        ...spec,
      },
    });
    const path = `/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers${DRY}`;
    // No metrics: the default is CPU utilization, a Resource metric.
    const status = failure(
      await http.post(path, hpa({ minReplicas: 0 })),
      422,
      'Invalid',
      'HorizontalPodAutoscaler.autoscaling "h" is invalid: [spec.minReplicas: Invalid value: 0: must be greater than or equal to 1, spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas]',
    );
    expect(status.details.causes.map((c: { field: string }) => c.field)).toEqual([
      'spec.minReplicas',
      'spec.metrics',
    ]);
    // With an External metric only the feature gate (off) refuses it.
    const external = {
      type: 'External',
      external: { metric: { name: 'queue' }, target: { type: 'Value', value: '10' } },
    };
    failure(
      await http.post(path, hpa({ minReplicas: 0, metrics: [external] })),
      422,
      'Invalid',
      'HorizontalPodAutoscaler.autoscaling "h" is invalid: spec.minReplicas: Invalid value: 0: must be greater than or equal to 1',
    );
    failure(
      await http.post(`/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers${DRY}`, {
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'h' },
        spec: { scaleTargetRef: { kind: 'Deployment', name: 'd' }, minReplicas: 0, maxReplicas: 5 },
      }),
      422,
      'Invalid',
      'HorizontalPodAutoscaler.autoscaling "h" is invalid: [spec.minReplicas: Invalid value: 0: must be greater than or equal to 1, spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas]',
    );
    // A v1 object is validated converted: its CPU target is metrics[0].
    failure(
      await http.post(`/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers${DRY}`, {
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'h' },
        spec: {
          scaleTargetRef: { kind: 'Deployment', name: 'd' },
          minReplicas: 0,
          maxReplicas: 5,
          targetCPUUtilizationPercentage: 0,
        },
      }),
      422,
      'Invalid',
      'HorizontalPodAutoscaler.autoscaling "h" is invalid: [spec.minReplicas: Invalid value: 0: must be greater than or equal to 1, spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0, spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas]',
    );
  });
  it("checks that each metric's target says what it aims at, and its described object", async () => {
    const metrics = [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization' } } },
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 5, averageValue: '1' } },
      },
      {
        type: 'ContainerResource',
        containerResource: { name: 'cpu', container: 'c', target: { type: 'Utilization' } },
      },
      { type: 'Pods', pods: { metric: { name: 'm' }, target: { type: 'Value', value: '1' } } },
      { type: 'Object', object: { metric: { name: 'm' }, describedObject: {}, target: { type: 'Value' } } },
      {
        type: 'Object',
        object: {
          metric: { name: 'm' },
          describedObject: { kind: '..', name: 'a/b' },
          target: { type: 'Value', value: '1' },
        },
      },
      { type: 'External', external: { metric: { name: 'm' }, target: { type: 'Value' } } },
      {
        type: 'External',
        external: { metric: { name: 'm' }, target: { type: 'Value', value: '1', averageValue: '2' } },
      },
    ];
    const status = failure(
      await http.post(`/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers${DRY}`, {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'h' },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' },
          maxReplicas: 3,
          metrics,
        },
      }),
      422,
      'Invalid',
    );
    // As the anchor's 1.24 words them (ContainerResource is GA and on in 1.32, off in 1.24).
    expect(
      status.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`),
    ).toEqual([
      'spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization',
      'spec.metrics[1].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization',
      'spec.metrics[2].containerResource.target.averageUtilization: Required value: must set either a target raw value or a target utilization',
      'spec.metrics[3].pods.target.averageValue: Required value: must specify a positive target averageValue',
      'spec.metrics[4].object.describedObject.kind: Required value',
      'spec.metrics[4].object.describedObject.name: Required value',
      'spec.metrics[4].object.target.averageValue: Required value: must set either a target value or averageValue',
      'spec.metrics[5].object.describedObject.kind: Invalid value: "..": may not be \'..\'',
      'spec.metrics[5].object.describedObject.name: Invalid value: "a/b": may not contain \'/\'',
      'spec.metrics[6].external.target.averageValue: Required value: must set either a target value for metric or a per-pod target',
      'spec.metrics[7].external.target.value: Forbidden: may not set both a target value for metric and a per-pod target',
    ]);
  });
});

describe('docker config Secrets', () => {
  const secret = (type: string, key: string, text: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's' },
    type,
    data: { [key]: Buffer.from(text).toString('base64') },
  });
  const path = `/api/v1/namespaces/default/secrets${DRY}`;

  it("reports content that is not a JSON object in Go's words", async () => {
    const cases: [string, string, string, string][] = [
      [
        'kubernetes.io/dockercfg',
        '.dockercfg',
        'notjson',
        "invalid character 'o' in literal null (expecting 'u')",
      ],
      [
        'kubernetes.io/dockerconfigjson',
        '.dockerconfigjson',
        '{bad',
        "invalid character 'b' looking for beginning of object key string",
      ],
      [
        'kubernetes.io/dockercfg',
        '.dockercfg',
        '[1]',
        'json: cannot unmarshal array into Go value of type map[string]interface {}',
      ],
      ['kubernetes.io/dockercfg', '.dockercfg', '', 'unexpected end of JSON input'],
    ];
    for (const [type, key, text, words] of cases)
      failure(
        await http.post(path, secret(type, key, text)),
        422,
        'Invalid',
        `Secret "s" is invalid: data[${key}]: Invalid value: "<secret contents redacted>": ${words}`,
      );
  });

  it('takes null as an empty map, as json.Unmarshal does', async () => {
    const r = await http.post(path, secret('kubernetes.io/dockercfg', '.dockercfg', 'null'));
    expect(r.status, r.text).toBe(201);
  });
});

describe('where a webhook may be called', () => {
  const FORM = '; desired format: https://host[/path]';
  const configuration = (clientConfig: object) => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'm' },
    webhooks: [{ name: 'a.b.c', clientConfig, sideEffects: 'None', admissionReviewVersions: ['v1'] }],
  });
  const MWC = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations${DRY}`;
  const crd = (clientConfig: object) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.answers.io' },
    spec: {
      group: 'answers.io',
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig } },
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
      ],
    },
  });
  const CRD = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions${DRY}`;

  it('checks a URL as ValidateWebhookURL does, for admission and conversion alike', async () => {
    const url = 'webhooks[0].clientConfig.url';
    failure(
      await http.post(MWC, configuration({ url: 'https://' })),
      422,
      'Invalid',
      `MutatingWebhookConfiguration.admissionregistration.k8s.io "m" is invalid: ${url}: Invalid value: "": host must be provided${FORM}`,
    );
    failure(
      await http.post(MWC, configuration({ url: 'foo/bar' })),
      422,
      'Invalid',
      `MutatingWebhookConfiguration.admissionregistration.k8s.io "m" is invalid: [${url}: Invalid value: "": 'https' is the only allowed URL scheme${FORM}, ${url}: Invalid value: "": host must be provided${FORM}]`,
    );
    const conv = 'spec.conversion.webhookClientConfig.url';
    failure(
      await http.post(CRD, crd({ url: 'http://x/convert' })),
      422,
      'Invalid',
      `CustomResourceDefinition.apiextensions.k8s.io "widgets.answers.io" is invalid: ${conv}: Invalid value: "http": 'https' is the only allowed URL scheme${FORM}`,
    );
    failure(
      await http.post(CRD, crd({ url: 'https://u@h/x?q' })),
      422,
      'Invalid',
      `CustomResourceDefinition.apiextensions.k8s.io "widgets.answers.io" is invalid: [${conv}: Invalid value: "u": user information is not permitted in the URL, ${conv}: Invalid value: "q": query parameters are not permitted in the URL]`,
    );
  });

  it("reports a Service's missing namespace as its name and back, as kube's swapped call does", async () => {
    failure(
      await http.post(MWC, configuration({ service: { name: 's' } })),
      422,
      'Invalid',
      'MutatingWebhookConfiguration.admissionregistration.k8s.io "m" is invalid: webhooks[0].clientConfig.service.name: Required value: service name is required',
    );
    failure(
      await http.post(CRD, crd({ service: { namespace: 'n' } })),
      422,
      'Invalid',
      'CustomResourceDefinition.apiextensions.k8s.io "widgets.answers.io" is invalid: spec.conversion.webhookClientConfig.service.namespace: Required value: service namespace is required',
    );
  });

  it('refuses wildcards in rules beside what they already cover', async () => {
    const rules = (resources: string[], operations = ['CREATE']) =>
      configuration({ url: 'https://h/x' }).webhooks.map((w) => ({
        ...w,
        rules: [{ operations, apiGroups: [''], apiVersions: ['v1'], resources }],
      }));
    const post = (resources: string[], operations?: string[]) =>
      http.post(MWC, { ...configuration({}), webhooks: rules(resources, operations) });
    const path = 'webhooks[0].rules[0]';
    failure(
      await post(['*/*', 'pods']),
      422,
      'Invalid',
      `MutatingWebhookConfiguration.admissionregistration.k8s.io "m" is invalid: ${path}.resources: Invalid value: []string{"*/*", "pods"}: if '*/*' is present, must not specify other resources`,
    );
    failure(
      await post(['pods/*', 'pods/status']),
      422,
      'Invalid',
      `MutatingWebhookConfiguration.admissionregistration.k8s.io "m" is invalid: ${path}.resources[1]: Invalid value: "pods/status": if 'pods/*' is present, must not specify pods/status`,
    );
    failure(
      await post(['pods'], ['*', 'CREATE']),
      422,
      'Invalid',
      `MutatingWebhookConfiguration.admissionregistration.k8s.io "m" is invalid: ${path}.operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE"}: if '*' is present, must not specify other operations`,
    );
    // The last plain resource decides, as in kube: a wildcard after it is taken.
    expect((await post(['pods', '*'])).status).toBe(201);
  });

  it("checks a Service's path segment by segment, as ValidateWebhookService does", async () => {
    const svc = 'webhooks[0].clientConfig.service.path';
    failure(
      await http.post(MWC, configuration({ service: { name: 's', namespace: 'n', path: '/a//b' } })),
      422,
      'Invalid',
      `MutatingWebhookConfiguration.admissionregistration.k8s.io "m" is invalid: ${svc}: Invalid value: "/a//b": segment[1] may not be empty`,
    );
    const conv = 'spec.conversion.webhookClientConfig.service.path';
    const status = failure(
      await http.post(CRD, crd({ service: { name: 's', namespace: 'n', path: '/A//b' } })),
      422,
      'Invalid',
    );
    expect(
      status.details.causes.map((c: { field: string; message: string }) => [c.field, c.message]),
    ).toEqual([
      [
        conv,
        `Invalid value: "/A//b": segment[0]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      ],
      [conv, 'Invalid value: "/A//b": segment[1] may not be empty'],
    ]);
  });
});

describe('CEL rules', () => {
  it('names the end of input <EOF> and what may follow an operator', async () => {
    const status = failure(
      await http.post(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions${DRY}`, {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'rules.answers.io' },
        spec: {
          group: 'answers.io',
          scope: 'Namespaced',
          names: { plural: 'rules', kind: 'Rule' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  'x-kubernetes-validations': [{ rule: 'self.a ==' }],
                  properties: { a: { type: 'string' } },
                },
              },
            },
          ],
        },
      }),
      422,
      'Invalid',
    );
    expect(status.message).toContain(
      "compilation failed: ERROR: <input>:1:10: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | self.a ==\n | .........^",
    );
  });
});

describe('networking', () => {
  const NP = `/apis/networking.k8s.io/v1/namespaces/default/networkpolicies${DRY}`;
  const policy = (spec: object) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'n' },
    spec: { podSelector: {}, ...spec },
  });

  it('refuses an ipBlock that is not a CIDR, and exceptions outside it', async () => {
    const from = 'spec.ingress[0].from[0].ipBlock';
    failure(
      await http.post(NP, policy({ ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/33' } }] }] })),
      422,
      'Invalid',
      `NetworkPolicy.networking.k8s.io "n" is invalid: ${from}.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`,
    );
    const except = ['10.1.0.0/24', '10.0.0.0/8', 'bad', '10.0.1.0/24', '010.0.2.0/24'];
    const status = failure(
      await http.post(NP, policy({ ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/16', except } }] }] })),
      422,
      'Invalid',
    );
    expect(
      status.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`),
    ).toEqual([
      `${from}.except[0]: Invalid value: "10.1.0.0/24": must be a strict subset of \`cidr\``,
      `${from}.except[1]: Invalid value: "10.0.0.0/8": must be a strict subset of \`cidr\``,
      `${from}.except[2]: Invalid value: "bad": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`,
    ]);
    const v6 = await http.post(
      NP,
      policy({ egress: [{ to: [{ ipBlock: { cidr: '2001:db8::/64', except: ['2001:db8::/80'] } }] }] }),
    );
    expect(v6.status, v6.text).toBe(201);
  });

  it("names the policy type refused by its index, in kube's order of the supported ones", async () => {
    failure(
      await http.post(NP, policy({ policyTypes: ['Ingress', 'Sideways'] })),
      422,
      'Invalid',
      'NetworkPolicy.networking.k8s.io "n" is invalid: spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"',
    );
  });

  it('checks a host with a * as a wildcard DNS subdomain', async () => {
    const wildcard =
      "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    const status = failure(
      await http.post(`/apis/networking.k8s.io/v1/namespaces/default/ingresses${DRY}`, {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'i' },
        spec: {
          rules: [{ host: '*.*.a.com' }, { host: '*.b.com' }],
          tls: [{ hosts: ['*.a.com', 'a*.com'] }],
          defaultBackend: { service: { name: 's', port: { number: 80 } } },
        },
      }),
      422,
      'Invalid',
    );
    expect(
      status.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`),
    ).toEqual([
      `spec.rules[0].host: Invalid value: "*.*.a.com": ${wildcard}`,
      `spec.tls[0].hosts[1]: Invalid value: "a*.com": ${wildcard}`,
    ]);
  });
});

describe('storage, quota, namespaces and events', () => {
  it("keeps a PersistentVolume's source as it was created", async () => {
    const pv = await http.post('/api/v1/persistentvolumes', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv-source' },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/x' } },
    });
    expect(pv.status, pv.text).toBe(201);
    const changed = await http.patch(
      `/api/v1/persistentvolumes/pv-source${DRY}`,
      { spec: { hostPath: { path: '/y' } } },
      'application/merge-patch+json',
    );
    expect(failure(changed, 422, 'Invalid').message).toMatch(
      /^PersistentVolume "pv-source" is invalid: spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n/,
    );
    const grown = await http.patch(
      `/api/v1/persistentvolumes/pv-source${DRY}`,
      { spec: { capacity: { storage: '3Gi' } } },
      'application/merge-patch+json',
    );
    expect(grown.status, grown.text).toBe(200);
  });

  it("refuses a host path that steps up with '..', or of an unknown type", async () => {
    failure(
      await http.post(`/api/v1/persistentvolumes${DRY}`, {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'pv' },
        spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: 'x/../y' } },
      }),
      422,
      'Invalid',
      `PersistentVolume "pv" is invalid: spec.hostPath.path: Invalid value: "x/../y": must not contain '..'`,
    );
    failure(
      await http.post(`/api/v1/namespaces/default/pods${DRY}`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: {
          containers: [{ name: 'c', image: 'x' }],
          volumes: [{ name: 'v', hostPath: { path: '/a/b..c', type: 'Bogus' } }],
        },
      }),
      422,
      'Invalid',
      'Pod "p" is invalid: spec.volumes[0].hostPath.type: Unsupported value: "Bogus": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"',
    );
  });

  it("checks a quota's resource names as resource names first, then as quota resources", async () => {
    const quota = (hard: object) => ({
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'q' },
      spec: { hard },
    });
    const path = `/api/v1/namespaces/default/resourcequotas${DRY}`;
    failure(
      await http.post(path, quota({ bogus: '1' })),
      422,
      'Invalid',
      'ResourceQuota "q" is invalid: [spec.hard[bogus]: Invalid value: "bogus": must be a standard resource type or fully qualified, spec.hard[bogus]: Invalid value: "bogus": must be a standard resource for quota]',
    );
    const status = failure(await http.post(path, quota({ 'bad name!': '1' })), 422, 'Invalid');
    expect(
      status.details.causes.map((c: { message: string }) => c.message.replace(/:.*?: /, ': ')),
    ).toHaveLength(2);
    expect(status.details.causes[1].message).toBe(
      'Invalid value: "bad name!": must be a standard resource for quota',
    );
  });

  it("names a namespace's finalizers as the list, and each entry only through /finalize", async () => {
    const created = failure(
      await http.post(`/api/v1/namespaces${DRY}`, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'nsf' },
        spec: { finalizers: ['example.com/ok', 'bad/finalizer/x'] },
      }),
      422,
      'Invalid',
    );
    expect(created.details.causes.map((c: { field: string }) => c.field)).toEqual(['spec.finalizers']);
    const status = failure(
      await http.put(`/api/v1/namespaces/default/finalize${DRY}`, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'default' },
        spec: { finalizers: ['kubernetes', 'bad one'] },
      }),
      422,
      'Invalid',
    );
    expect(status.details.causes.map((c: { field: string }) => c.field)).toEqual([
      'spec.finalizers[1]',
      'spec.finalizers[1]',
    ]);
  });

  it('takes any path-segment name for a core/v1 Event, and a DNS subdomain through events.k8s.io', async () => {
    const core = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name },
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
      reason: 'R',
      message: 'm',
      type: 'Normal',
    });
    const created = await http.post(`/api/v1/namespaces/default/events${DRY}`, core('Pod P.17a Started'));
    expect(created.status, created.text).toBe(201);
    failure(
      await http.post(`/api/v1/namespaces/default/events${DRY}`, core('a/b')),
      422,
      'Invalid',
      `Event "a/b" is invalid: metadata.name: Invalid value: "a/b": may not contain '/'`,
    );
    const v1 = await http.post(`/apis/events.k8s.io/v1/namespaces/default/events${DRY}`, {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'E 41' },
      eventTime: '2026-01-01T00:00:00.000000Z',
      regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
      reason: 'R',
      action: 'A',
      type: 'Normal',
      reportingController: 'a/b',
      reportingInstance: 'i',
    });
    expect(failure(v1, 422, 'Invalid').details.causes[0].field).toBe('metadata.name');
  });

  it('words an invalid events.k8s.io Event as the core Event it is stored as', async () => {
    failure(
      await http.post(`/apis/events.k8s.io/v1/namespaces/default/events${DRY}`, {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: 'e' },
        regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
        reason: 'R',
        action: 'A',
        type: 'Normal',
        reportingController: 'a/b',
        reportingInstance: 'i',
      }),
      422,
      'Invalid',
      'Event "e" is invalid: eventTime: Required value',
    );
  });
});

describe('patches', () => {
  const CM = '/api/v1/namespaces/default/configmaps';
  const JSONP = 'application/json-patch+json';
  const MERGE = 'application/merge-patch+json';
  const SMP = 'application/strategic-merge-patch+json';
  const send = (body: string, type: string, query = '') =>
    http.send('PATCH', `${CM}/patched${DRY}${query}`, { raw: body, headers: { 'Content-Type': type } });

  beforeAll(async () => {
    await http.post(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'patched' } });
  });

  it('refuses a patch that is not a list or a map as the patch handler decodes it', async () => {
    const cases: [string, string, string][] = [
      [
        JSONP,
        '{}',
        'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp',
      ],
      [
        JSONP,
        '"s"',
        'error decoding patch: json: cannot unmarshal string into Go value of type []handlers.jsonPatchOp',
      ],
      [
        MERGE,
        '5',
        'error decoding patch: json: cannot unmarshal number into Go value of type map[string]interface {}',
      ],
      [MERGE, 'null', 'Invalid JSON Patch'],
      [SMP, '[]', 'json: cannot unmarshal array into Go value of type map[string]interface {}'],
      [SMP, 'true', 'json: cannot unmarshal bool into Go value of type map[string]interface {}'],
    ];
    for (const [type, body, message] of cases) failure(await send(body, type), 400, 'BadRequest', message);
    failure(
      await send('{}', JSONP, '&fieldValidation=Ignore'),
      400,
      'BadRequest',
      'json: cannot unmarshal object into Go value of type jsonpatch.Patch',
    );
    // A null JSON or strategic merge patch changes nothing.
    for (const type of [JSONP, SMP]) expect((await send('null', type)).status).toBe(200);
  });

  it("decodes a JSON or merge patch's result by its own apiVersion and kind", async () => {
    const invalid = (reason: string) =>
      expect.stringMatching(
        new RegExp(`^ "" is invalid: patch: Invalid value: "\\{.*\\}": ${reason.replace(/[.()]/g, '\\$&')}$`),
      );
    const secret = failure(await send('{"kind":"Secret"}', MERGE), 422, 'Invalid');
    expect(secret.message).toEqual(invalid('converting (v1.Secret) to (core.ConfigMap): unknown conversion'));
    expect(secret.details.causes.map((c: { field: string }) => c.field)).toEqual(['patch']);
    const pod = failure(
      await send('[{"op":"replace","path":"/apiVersion","value":"apps/v1"}]', JSONP),
      422,
      'Invalid',
    );
    expect(pod.message).toEqual(
      invalid(
        'no kind "ConfigMap" is registered for version "apps/v1" in scheme "pkg/runtime/scheme.go:100"',
      ),
    );
    // A strategic merge patch, and a kind removed, leave the kind as it is.
    expect((await send('{"kind":"Secret"}', SMP)).status).toBe(200);
    expect((await send('{"kind":null}', MERGE)).status).toBe(200);
  });
});

describe('metadata', () => {
  const CM = '/api/v1/namespaces/default/configmaps';

  it('refuses an update that adds a deletion timestamp or grace period', async () => {
    await http.post(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'meta-immutable' } });
    const patch = (metadata: object) =>
      http.patch(`${CM}/meta-immutable${DRY}`, { metadata }, 'application/merge-patch+json');
    failure(
      await patch({ deletionTimestamp: '2030-01-01T00:00:00Z' }),
      422,
      'Invalid',
      'ConfigMap "meta-immutable" is invalid: metadata.deletionTimestamp: Invalid value: 2030-01-01 00:00:00 +0000 UTC: field is immutable',
    );
    failure(
      await patch({ deletionGracePeriodSeconds: 5 }),
      422,
      'Invalid',
      'ConfigMap "meta-immutable" is invalid: metadata.deletionGracePeriodSeconds: Invalid value: 5: field is immutable',
    );
  });

  it('keeps a deletion timestamp an update leaves out, so finalizers can still be removed', async () => {
    await http.post(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'meta-finalized', finalizers: ['example.com/hold'] },
    });
    await http.delete(`${CM}/meta-finalized`);
    const held = await http.get(`${CM}/meta-finalized`);
    const { deletionTimestamp } = held.json.metadata;
    expect(deletionTimestamp).toBeTruthy();
    // A client's copy without the timestamp: it is kept, not refused.
    const labelled = await http.put(`${CM}/meta-finalized`, {
      ...held.json,
      metadata: { ...held.json.metadata, deletionTimestamp: undefined, labels: { a: 'b' } },
    });
    expect(labelled.status, labelled.text).toBe(200);
    expect(labelled.json.metadata.deletionTimestamp).toBe(deletionTimestamp);
    const released = await http.patch(
      `${CM}/meta-finalized`,
      { metadata: { finalizers: null } },
      'application/merge-patch+json',
    );
    expect(released.status, released.text).toBe(200);
    expect((await http.get(`${CM}/meta-finalized`)).status).toBe(404);
  });

  it('writes managed fields as structured-merge-diff does: "." before the children', async () => {
    const created = await http.post(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'meta-fields', labels: { x: 'y' } },
      data: { a: 'b' },
    });
    expect(JSON.stringify(created.json.metadata.managedFields[0].fieldsV1)).toBe(
      '{"f:data":{".":{},"f:a":{}},"f:metadata":{"f:labels":{".":{},"f:x":{}}}}',
    );
  });

  it('checks a generateName of a lone dash as it is', async () => {
    const status = failure(
      await http.post(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: '-' } }),
      422,
      'Invalid',
    );
    expect(status.details.causes.map((c: { field: string }) => c.field)).toEqual([
      'metadata.generateName',
      'metadata.name',
    ]);
  });
});
