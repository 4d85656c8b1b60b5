/**
 * The registry entry of `NetworkPolicy` (networking.k8s.io/v1 `networkpolicies`): its resource type and
 * defaults, validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { cidrContains, parseCidrSloppy } from '../../util/cidr.js';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { networkingKind } from '../shared/define.js';
import {
  dig,
  ensureObj,
  formatLabelSelector,
  GoValue,
  invalid,
  isObj,
  isValidPortName,
  isValidPortNum,
  notSupported,
  numOr,
  type Obj,
  objs,
  required,
  str,
  strs,
  validateLabelSelector,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { ageOf, NET, nameOf } from './shared.js';

// ---------------------------------------------------------------------------------------------
// NetworkPolicies
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const POLICY_TYPES = ['Ingress', 'Egress'];
/** `SetDefaults_NetworkPolicy` and `SetDefaults_NetworkPolicyPort`. */
function defaultNetworkPolicy(obj: Obj): void {
  const spec = ensureObj(obj, 'spec');
  ensureObj(spec, 'podSelector');
  for (const dir of ['ingress', 'egress'])
    for (const rule of objs(spec[dir]))
      for (const port of objs(rule.ports)) if (!str(port.protocol)) port.protocol = 'TCP';
  if (strs(spec.policyTypes).length === 0) {
    spec.policyTypes = objs(spec.egress).length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}
const INVALID_CIDR = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

/** `ValidateIPBlock`: a CIDR, and exceptions that are CIDRs strictly inside it. */
function validateIPBlock(block: Obj, path: string): StatusCause[] {
  const cidr = str(block.cidr);
  if (!cidr) return [required(`${path}.cidr`)];
  const net = parseCidrSloppy(cidr);
  if (!net) return [invalid(`${path}.cidr`, cidr, INVALID_CIDR)];
  const out: StatusCause[] = [];
  strs(block.except).forEach((e, i) => {
    const ep = `${path}.except[${i}]`;
    const except = parseCidrSloppy(e);
    if (!except) out.push(invalid(ep, e, INVALID_CIDR));
    else if (!cidrContains(net, except) || net.bits >= except.bits)
      out.push(invalid(ep, e, 'must be a strict subset of `cidr`'));
  });
  return out;
}

function validateNetworkPolicy(obj: Obj): StatusCause[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const out = validateLabelSelector(spec.podSelector ?? {}, 'spec.podSelector');
  for (const [dir, peers] of [
    ['ingress', 'from'],
    ['egress', 'to'],
  ] as const) {
    objs(spec[dir]).forEach((rule, i) => {
      objs(rule.ports).forEach((port, j) => {
        const path = `spec.${dir}[${i}].ports[${j}]`;
        const protocol = str(port.protocol);
        if (protocol && !PROTOCOLS.includes(protocol))
          out.push(notSupported(`${path}.protocol`, protocol, PROTOCOLS));
        const p = port.port;
        if (typeof p === 'number')
          for (const msg of isValidPortNum(p)) out.push(invalid(`${path}.port`, p, msg));
        else if (typeof p === 'string')
          for (const msg of isValidPortName(p)) out.push(invalid(`${path}.port`, p, msg));
        const end = numOr(port.endPort);
        if (end !== undefined) {
          if (p === undefined || p === null)
            out.push(required(`${path}.port`, 'must specify when endPort is specified'));
          else if (typeof p === 'string')
            out.push({
              reason: 'FieldValueForbidden',
              field: `${path}.endPort`,
              message: 'Forbidden: may not be specified when `port` is non-numeric',
            });
          else if (typeof p === 'number' && end < p)
            out.push(invalid(`${path}.endPort`, end, 'must be greater than or equal to `port`'));
        }
      });
      objs(rule[peers]).forEach((peer, j) => {
        const path = `spec.${dir}[${i}].${peers}[${j}]`;
        const set = ['podSelector', 'namespaceSelector', 'ipBlock'].filter((k) => isObj(peer[k]));
        if (set.length === 0) out.push(required(path, 'must specify a peer'));
        if (isObj(peer.ipBlock) && set.length > 1)
          out.push({
            reason: 'FieldValueForbidden',
            field: path,
            message: 'Forbidden: may not specify both ipBlock and another peer',
          });
        if (isObj(peer.ipBlock)) out.push(...validateIPBlock(peer.ipBlock, `${path}.ipBlock`));
      });
    });
  }
  const types = strs(spec.policyTypes);
  if (types.length > 2) {
    out.push(
      invalid(
        'spec.policyTypes',
        new GoValue(`[]networking.PolicyType{${types.map((t) => JSON.stringify(t)).join(', ')}}`),
        'may not specify more than two policyTypes',
      ),
    );
    return out;
  }
  types.forEach((t, i) => {
    if (!POLICY_TYPES.includes(t)) out.push(notSupported(`spec.policyTypes[${i}]`, t, POLICY_TYPES));
  });
  return out;
}
const networkpolicies: KindBehaviour = {
  defaults: defaultNetworkPolicy,
  validate: validateNetworkPolicy,
  columns: [
    nameColumn(),
    col('Pod-Selector', 'string', fieldDoc(`${NET}.NetworkPolicySpec`, 'podSelector')),
    ageColumn(),
  ],
  row: (obj, now) => [
    nameOf(obj),
    formatLabelSelector(dig(obj, 'spec', 'podSelector') ?? {}),
    ageOf(obj, now),
  ],
};

/** `NetworkPolicy` (networking.k8s.io/v1 `networkpolicies`): how the registry serves, validates and prints it. */
export const networkPolicyKind: ResourceType = networkingKind({
  behaviour: networkpolicies,
  resource: 'networkpolicies',
  kind: 'NetworkPolicy',
  shortNames: ['netpol'],
  generation: true,
});
