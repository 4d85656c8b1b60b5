import { ApiError } from 'kubeloop/api';
import type { ResourceType } from '../registry/types.js';
import { objectKey, type Store } from '../storage/store.js';
import type { Obj } from '../util/object.js';
import { admissionForbidden } from './forbidden.js';

/** Namespaces that exist from the start and cannot be deleted. */
export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;
const UNDELETABLE = new Set(['default', 'kube-system', 'kube-public']);

/**
 * The NamespaceLifecycle admission plugin: nothing is created in a namespace that does not
 * exist or is terminating, and the system namespaces cannot be deleted.
 */
export function namespaceLifecycle(store: Store) {
  return (op: 'CREATE' | 'UPDATE' | 'DELETE', t: ResourceType, obj: Obj): void => {
    const m = (obj.metadata ?? {}) as Obj;
    if (t.group === '' && t.resource === 'namespaces') {
      if (op === 'DELETE' && UNDELETABLE.has(String(m.name))) {
        throw ApiError.forbidden(
          { group: '', resource: 'namespaces' },
          String(m.name),
          'this namespace may not be deleted',
        );
      }
      return;
    }
    if (op !== 'CREATE' || !t.namespaced) return;
    const ns = String(m.namespace ?? '');
    const found = store.get(objectKey('', 'namespaces', undefined, ns));
    if (!found) throw ApiError.notFound({ group: '', resource: 'namespaces' }, ns);
    if ((found.object.metadata as Obj).deletionTimestamp) {
      const err = admissionForbidden(
        t,
        obj,
        `unable to create new content in namespace ${ns} because it is being terminated`,
      );
      // The plugin adds this cause so that clients (the namespace controller, kubectl) can tell a
      // terminating namespace from an RBAC refusal without reading the message.
      err.status.details = {
        ...err.status.details,
        causes: [
          {
            reason: 'NamespaceTerminating',
            message: `namespace ${ns} is being terminated`,
            field: 'metadata.namespace',
          },
        ],
      };
      throw err;
    }
  };
}
