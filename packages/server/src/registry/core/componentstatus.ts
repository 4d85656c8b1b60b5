/**
 * core/v1 PersistentVolumes, ResourceQuotas, LimitRanges and ComponentStatuses: defaults,
 * validation and printers (`pkg/apis/core/v1/defaults.go`, `pkg/apis/core/validation`, printers.go).
 */
import { col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { dig, objs, str } from '../shared/util.js';
import type { ResourceType, VirtualResource } from '../types.js';

// ---------------------------------------------------------------------------------------------
// ComponentStatuses
const componentstatuses: KindBehaviour = {
  columns: [
    nameColumn(),
    col('Status', 'string', 'Status of the component conditions'),
    col('Message', 'string', 'Message of the component conditions'),
    col('Error', 'string', 'Error of the component conditions'),
  ],
  row(obj) {
    const healthy = objs(obj.conditions).find((c) => c.type === 'Healthy');
    const status =
      healthy?.status === 'True' ? 'Healthy' : healthy?.status === 'False' ? 'Unhealthy' : 'Unknown';
    return [str(dig(obj, 'metadata', 'name')), status, str(healthy?.message), str(healthy?.error)];
  },
};
/**
 * `componentstatuses`: the deprecated health view of the scheduler, the controller manager and
 * etcd. They all run inside this process, so they are as healthy as the server answering.
 */
const componentStatuses: VirtualResource = {
  list: () =>
    ['scheduler', 'controller-manager', 'etcd-0'].map((name) => ({
      kind: 'ComponentStatus',
      apiVersion: 'v1',
      metadata: { name, creationTimestamp: null },
      conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }],
    })),
};

/** `ComponentStatus` (core/v1 `componentstatuses`): how the registry serves, validates and prints it. */
export const componentStatusKind: ResourceType = coreKind({
  behaviour: componentstatuses,
  resource: 'componentstatuses',
  kind: 'ComponentStatus',
  namespaced: false,
  shortNames: ['cs'],
  verbs: ['get', 'list'],
  virtual: componentStatuses,
});
