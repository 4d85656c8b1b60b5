/**
 * apiregistration.k8s.io/v1 APIServices: validation, printer, and the Local APIServices that
 * kube-apiserver's autoregister controller keeps, one per served group/version.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import { apiServiceStatusStrategy } from '../shared/status-strategy.js';
import {
  def,
  dig,
  ensureObj,
  goQuote,
  invalid,
  isDNS1035Label,
  isDNS1123Subdomain,
  isObj,
  isValidPathSegmentName,
  isValidPortNum,
  numOr,
  type Obj,
  objs,
  required,
  since,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';

const apiservices: KindBehaviour = {
  defaults(obj) {
    ensureObj(obj, 'status'); // Go always writes the status struct.
    const service = dig(obj, 'spec', 'service');
    if (isObj(service)) def(service, 'port', 443);
  },
  /** `ValidateAPIService`. */
  validate(obj) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out: StatusCause[] = [];
    const name = str(dig(obj, 'metadata', 'name'));
    const group = str(spec.group);
    const version = str(spec.version);
    // The core group's is `v1.`: the name is always version + "." + group.
    const expected = `${version}.${group}`;
    if (isValidPathSegmentName(name).length === 0 && name !== expected)
      out.push(
        invalid('metadata.name', name, `must be \`spec.version+"."+spec.group\`: ${goQuote(expected)}`),
      );
    if (!group && version !== 'v1')
      out.push(required('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
    for (const msg of group ? isDNS1123Subdomain(group) : []) out.push(invalid('spec.group', group, msg));
    for (const msg of isDNS1035Label(version)) out.push(invalid('spec.version', version, msg));
    const groupPriority = numOr(spec.groupPriorityMinimum) ?? 0;
    if (groupPriority <= 0 || groupPriority > 20000)
      out.push(invalid('spec.groupPriorityMinimum', groupPriority, 'must be positive and less than 20000'));
    const versionPriority = numOr(spec.versionPriority) ?? 0;
    if (versionPriority <= 0 || versionPriority > 1000)
      out.push(invalid('spec.versionPriority', versionPriority, 'must be positive and less than 1000'));
    const caBytes = Buffer.from(str(spec.caBundle), 'base64').length;
    if (!isObj(spec.service)) {
      if (caBytes > 0)
        out.push(invalid('spec.caBundle', `${caBytes} bytes`, 'local APIServices may not have a caBundle'));
      if (spec.insecureSkipTLSVerify === true)
        out.push(
          invalid('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'),
        );
      return out;
    }
    if (!str(spec.service.namespace)) out.push(required('spec.service.namespace'));
    if (!str(spec.service.name)) out.push(required('spec.service.name'));
    const port = numOr(spec.service.port) ?? 0;
    const portErrs = isValidPortNum(port);
    if (portErrs.length > 0)
      out.push(invalid('spec.service.port', port, `port is not valid: ${portErrs.join(', ')}`));
    if (spec.insecureSkipTLSVerify === true && caBytes > 0)
      out.push(invalid('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
    return out;
  },
  columns: [
    nameColumn(),
    col('Service', 'string', 'The reference to the service that hosts this API endpoint.'),
    col('Available', 'string', 'Whether this service is available.'),
    ageColumn(),
  ],
  row(obj, now) {
    const service = dig(obj, 'spec', 'service');
    const available = objs(dig(obj, 'status', 'conditions')).find((c) => c.type === 'Available');
    let status = 'Unknown';
    if (available)
      status = available.status === 'True' ? 'True' : `${str(available.status)} (${str(available.reason)})`;
    return [
      str(dig(obj, 'metadata', 'name')),
      isObj(service) ? `${str(service.namespace)}/${str(service.name)}` : 'Local',
      status,
      since(dig(obj, 'metadata', 'creationTimestamp'), now),
    ];
  },
};

/**
 * The priorities kube-apiserver gives its own groups (`apiVersionPriorities` of
 * pkg/controlplane/apiserver/aggregator.go): group priority minimum and version priority.
 */
const PRIORITIES: Record<string, [number, number]> = {
  '/v1': [18000, 1],
  'apps/v1': [17800, 15],
  'events.k8s.io/v1': [17750, 15],
  'authentication.k8s.io/v1': [17700, 15],
  'authorization.k8s.io/v1': [17600, 15],
  'autoscaling/v2': [17500, 30],
  'autoscaling/v1': [17500, 15],
  'batch/v1': [17400, 15],
  'certificates.k8s.io/v1': [17300, 15],
  'networking.k8s.io/v1': [17200, 15],
  'policy/v1': [17100, 15],
  'rbac.authorization.k8s.io/v1': [17000, 15],
  'storage.k8s.io/v1': [16800, 15],
  'apiextensions.k8s.io/v1': [16700, 15],
  'admissionregistration.k8s.io/v1': [16700, 15],
  'scheduling.k8s.io/v1': [16600, 15],
  'coordination.k8s.io/v1': [16500, 15],
  'node.k8s.io/v1': [16300, 15],
  'discovery.k8s.io/v1': [16200, 15],
  'flowcontrol.apiserver.k8s.io/v1': [16100, 21],
  'apiregistration.k8s.io/v1': [18000, 15],
};

/**
 * The Local APIService of a served group/version, as the autoregister controller makes it;
 * custom resource groups (`autoregister` syncs CRDs too) get priority 1000/100.
 */
export function localAPIService(group: string, version: string, now: string): Obj {
  const [groupPriorityMinimum, versionPriority] = PRIORITIES[`${group}/${version}`] ?? [1000, 100];
  return {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: {
      name: `${version}.${group}`,
      labels: { 'kube-aggregator.kubernetes.io/automanaged': 'onstart' },
    },
    spec: { ...(group && { group }), version, groupPriorityMinimum, versionPriority },
    status: {
      conditions: [
        {
          type: 'Available',
          status: 'True',
          lastTransitionTime: now,
          reason: 'Local',
          message: 'Local APIServices are always available',
        },
      ],
    },
  };
}

/** `APIService` (apiregistration.k8s.io/v1 `apiservices`): how the registry serves, validates and prints it. */
export const apiServiceKind: ResourceType = defineKind({
  statusStrategy: apiServiceStatusStrategy,
  behaviour: apiservices,
  group: 'apiregistration.k8s.io',
  version: 'v1',
  defPackage: 'io.k8s.kube-aggregator.pkg.apis.apiregistration.v1',
  resource: 'apiservices',
  // Its strategy refuses an update without a resourceVersion (AllowUnconditionalUpdate false).
  allowUnconditionalUpdate: false,
  kind: 'APIService',
  namespaced: false,
  // The core group's is `v1.`, which only a path segment allows.
  nameValidation: 'path-segment',
  categories: ['api-extensions'],
  subresources: { status: true },
});
