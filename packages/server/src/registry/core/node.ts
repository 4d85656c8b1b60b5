/**
 * The registry entry of `Node` (core/v1 `nodes`): its resource type and
 * defaults, validation, printer columns, field selectors, storage hooks.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { docs } from '../shared/descriptions.js';
import { specStatusStrategy } from '../shared/status-strategy.js';
import {
  dig,
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
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { age, nameOf } from './shared.js';

// ---------------------------------------------------------------------------------------------
// Nodes
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
function nodeAddress(obj: Obj, type: string): string {
  return str(objs(dig(obj, 'status', 'addresses')).find((a) => a.type === type)?.address) || '<none>';
}
const nodes: KindBehaviour = {
  defaults(obj) {
    const status = objAt(obj, 'status');
    if (status && isObj(status.capacity) && status.allocatable === undefined)
      status.allocatable = { ...status.capacity };
  },
  validate(obj) {
    const out: StatusCause[] = [];
    objs(dig(obj, 'spec', 'taints')).forEach((t, i) => {
      const tp = `spec.taints[${i}]`;
      for (const m of isQualifiedName(str(t.key))) out.push(invalid(`${tp}.key`, str(t.key), m));
      const effect = str(t.effect);
      if (!effect) out.push(required(`${tp}.effect`));
      else if (!TAINT_EFFECTS.includes(effect)) out.push(notSupported(`${tp}.effect`, effect, TAINT_EFFECTS));
    });
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
