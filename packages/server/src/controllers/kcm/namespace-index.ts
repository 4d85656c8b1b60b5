/**
 * Which objects of a namespace select which labels: the controllers whose object selects pods
 * (PodDisruptionBudget) or counts a namespace (ResourceQuota) map a pod's event to their objects
 * with it. A map function runs synchronously, so it cannot list the cache: each reconcile
 * records its object's selector here, which comes first since an object is reconciled on creation.
 */
import { EVERYTHING, type LabelSelector, matchesLabels } from 'kubeloop/api';
import type { KubeObject } from 'kubeloop/client';
import type { ReconcileRequest } from 'kubeloop/runtime';

export class NamespaceIndex {
  private readonly byNamespace = new Map<string, Map<string, LabelSelector>>();

  /** Records the selector of `namespace/name` (everything: every object of the namespace). */
  set(namespace: string, name: string, selector: LabelSelector = EVERYTHING): void {
    const m = this.byNamespace.get(namespace) ?? new Map<string, LabelSelector>();
    this.byNamespace.set(namespace, m);
    m.set(name, selector);
  }

  forget(namespace: string, name: string): void {
    this.byNamespace.get(namespace)?.delete(name);
  }

  /** The objects of `obj`'s namespace whose selector matches its labels. */
  matching(obj: KubeObject): ReconcileRequest[] {
    const namespace = obj.metadata?.namespace ?? '';
    const out: ReconcileRequest[] = [];
    for (const [name, sel] of this.byNamespace.get(namespace) ?? [])
      if (matchesLabels(sel, obj.metadata?.labels)) out.push({ namespace, name });
    return out;
  }
}
