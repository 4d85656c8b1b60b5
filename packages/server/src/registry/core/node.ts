/**
 * The registry entry of `Node` (core/v1 `nodes`): its resource type and
 * defaults, validation, printer columns, field selectors, storage hooks.
 */
import type { StatusCause } from 'kubeloop/api';
import { goQuote, isValidLabelValue } from 'kubeloop/api';
import { parseCidrSloppy } from '../../util/cidr.js';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { docs } from '../shared/descriptions.js';
import { specStatusStrategy } from '../shared/status-strategy.js';
import {
  def,
  dig,
  duplicate,
  ensureObj,
  forbidden,
  GoValue,
  goStrings,
  invalid,
  isObj,
  isQualifiedName,
  notSupported,
  type Obj,
  objAt,
  objs,
  required,
  str,
  strMap,
  strs,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { validateQuantityValue } from './resourcequota.js';
import { age, nameOf } from './shared.js';

// ---------------------------------------------------------------------------------------------
// Nodes
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
function nodeAddress(obj: Obj, type: string): string {
  return str(objs(dig(obj, 'status', 'addresses')).find((a) => a.type === type)?.address) || '<none>';
}
/** `validateNodeTaints`: label keys and values, a known effect, unique by key and effect. */
function validateNodeTaints(taints: Obj[]): StatusCause[] {
  const out: StatusCause[] = [];
  const seen = new Set<string>();
  taints.forEach((t, i) => {
    const tp = `metadata.taints[${i}]`;
    const key = str(t.key);
    for (const m of isQualifiedName(key)) out.push(invalid(`${tp}.key`, key, m));
    const value = str(t.value);
    const valueErrs = isValidLabelValue(value);
    if (valueErrs.length > 0) out.push(invalid(`${tp}.value`, value, valueErrs.join(';')));
    const effect = str(t.effect);
    if (!effect) out.push(required(`${tp}.effect`));
    else if (!TAINT_EFFECTS.includes(effect)) out.push(notSupported(`${tp}.effect`, effect, TAINT_EFFECTS));
    const id = JSON.stringify([effect, key]);
    if (seen.has(id)) {
      const taint = `core.Taint{Key:${goQuote(key)}, Value:${goQuote(value)}, Effect:${goQuote(effect)}, TimeAdded:<nil>}`;
      out.push({
        reason: 'FieldValueDuplicate',
        field: tp,
        message: `Duplicate value: ${taint}: taints must be unique by key and effect pair`,
      });
      return;
    }
    seen.add(id);
  });
  return out;
}

const CIDR_CHANGE = 'node updates may not change podCIDR except from "" to valid';

/** `ValidateNodeUpdate`'s own rules: a set provider ID or pod CIDRs stay, status addresses are unique. */
function validateNodeUpdate(obj: Obj, old: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  const oldProvider = str(dig(old, 'spec', 'providerID'));
  if (oldProvider && oldProvider !== str(dig(obj, 'spec', 'providerID')))
    out.push(forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
  const oldCidrs = strs(dig(old, 'spec', 'podCIDRs'));
  const cidrs = strs(dig(obj, 'spec', 'podCIDRs'));
  if (oldCidrs.length > 0) {
    if (oldCidrs.length !== cidrs.length) out.push(forbidden('spec.podCIDRs', CIDR_CHANGE));
    else
      for (const [i, c] of oldCidrs.entries())
        if (c !== cidrs[i]) out.push(forbidden('spec.podCIDRs', CIDR_CHANGE));
  }
  const seen = new Set<string>();
  objs(dig(obj, 'status', 'addresses')).forEach((a, i) => {
    const [type, address] = [str(a.type), str(a.address)];
    const key = `${type}\u0000${address}`;
    if (seen.has(key))
      out.push(
        duplicate(
          `status.addresses[${i}]`,
          new GoValue(`core.NodeAddress{Type:${goQuote(type)}, Address:${goQuote(address)}}`),
        ),
      );
    seen.add(key);
  });
  return out;
}

const NODE_INFO_FIELDS = [
  'machineID',
  'systemUUID',
  'bootID',
  'kernelVersion',
  'osImage',
  'containerRuntimeVersion',
  'kubeletVersion',
  'kubeProxyVersion',
  'operatingSystem',
  'architecture',
];

const nodes: KindBehaviour = {
  defaults(obj) {
    // Go always writes the status's structs: the kubelet endpoint's port and the system info.
    const endpoint = ensureObj(ensureObj(ensureObj(obj, 'status'), 'daemonEndpoints'), 'kubeletEndpoint');
    def(endpoint, 'Port', 0);
    const info = ensureObj(ensureObj(obj, 'status'), 'nodeInfo');
    for (const f of NODE_INFO_FIELDS) def(info, f, '');
    const status = objAt(obj, 'status');
    if (status && isObj(status.capacity) && status.allocatable === undefined)
      status.allocatable = { ...status.capacity };
    // The v1 → internal conversion: podCIDRs from the single podCIDR a client may set alone.
    const spec = objAt(obj, 'spec');
    if (spec && str(spec.podCIDR) && strs(spec.podCIDRs).length === 0) spec.podCIDRs = [str(spec.podCIDR)];
  },
  validate(obj, old) {
    // ValidateNode names the taints under metadata, as kube does.
    const out = validateNodeTaints(objs(dig(obj, 'spec', 'taints')));
    const cidrs = strs(dig(obj, 'spec', 'podCIDRs'));
    const shown = () => new GoValue(goStrings(cidrs));
    cidrs.forEach((c, i) => {
      if (!parseCidrSloppy(c)) out.push(invalid(`spec.podCIDRs[${i}]`, shown(), 'must be valid CIDR'));
    });
    if (cidrs.length > 1) {
      const families = cidrs.map((c) => parseCidrSloppy(c)?.v6);
      const dualStack =
        cidrs.length === 2 &&
        families[0] !== undefined &&
        families[1] !== undefined &&
        families[0] !== families[1];
      if (!dualStack)
        out.push(invalid('spec.podCIDRs', shown(), 'may specify no more than one CIDR for each IP family'));
      cidrs.forEach((c, i) => {
        if (cidrs.indexOf(c) < i) out.push(duplicate(`spec.podCIDRs[${i}]`, c));
      });
    }
    if (old) out.push(...validateNodeUpdate(obj, old));
    for (const list of ['capacity', 'allocatable']) {
      const values = dig(obj, 'status', list);
      if (!isObj(values)) continue;
      for (const [k, v] of Object.entries(values))
        out.push(...validateQuantityValue(k, v, `status.${list}.${k}`));
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('Status', 'string', 'The status of the node'),
    col('Roles', 'string', 'The roles of the node'),
    ageColumn(),
    col('Version', 'string', docs.nodeSystemInfo.kubeletVersion),
    col('Internal-IP', 'string', docs.nodeStatus.addresses, 1),
    col('External-IP', 'string', docs.nodeStatus.addresses, 1),
    col('OS-Image', 'string', docs.nodeSystemInfo.osImage, 1),
    col('Kernel-Version', 'string', docs.nodeSystemInfo.kernelVersion, 1),
    col('Container-Runtime', 'string', docs.nodeSystemInfo.containerRuntimeVersion, 1),
  ],
  row(obj, now) {
    const ready = objs(dig(obj, 'status', 'conditions')).filter((c) => c.type === 'Ready');
    const status: string[] = [];
    const cond = ready[ready.length - 1];
    if (cond) status.push(cond.status === 'True' ? 'Ready' : 'NotReady');
    else status.push('Unknown');
    if (dig(obj, 'spec', 'unschedulable') === true) status.push('SchedulingDisabled');
    const roles = new Set<string>();
    for (const [k, v] of Object.entries(strMap(dig(obj, 'metadata', 'labels')))) {
      if (k.startsWith('node-role.kubernetes.io/')) {
        const role = k.slice('node-role.kubernetes.io/'.length);
        if (role) roles.add(role);
      } else if (k === 'kubernetes.io/role' && v) roles.add(v);
    }
    const info = objAt(dig(obj, 'status'), 'nodeInfo') ?? {};
    return [
      nameOf(obj),
      status.join(','),
      roles.size > 0 ? [...roles].sort().join(',') : '<none>',
      age(obj, now),
      str(info.kubeletVersion),
      nodeAddress(obj, 'InternalIP'),
      nodeAddress(obj, 'ExternalIP'),
      str(info.osImage) || '<unknown>',
      str(info.kernelVersion) || '<unknown>',
      str(info.containerRuntimeVersion) || '<unknown>',
    ];
  },
  fieldSelectors: { 'spec.unschedulable': (o) => String(dig(o, 'spec', 'unschedulable') === true) },
  fieldSelectorMetadata: ['metadata.name'],
  // A node registers with its status, which create keeps (the node strategy's PrepareForCreate).
  storage: { statusOnCreate() {} },
};

/** `Node` (core/v1 `nodes`): how the registry serves, validates and prints it. */
export const nodeKind: ResourceType = coreKind({
  statusStrategy: specStatusStrategy,
  behaviour: nodes,
  resource: 'nodes',
  kind: 'Node',
  namespaced: false,
  shortNames: ['no'],
  subresources: { status: true },
});
