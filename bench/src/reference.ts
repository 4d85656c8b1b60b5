/**
 * Figures quoted in the issue for a real kube-apiserver 1.24 with etcd 3.4 on a 2-core machine of
 * the same kind, and the targets set for kubeloop. They are not measured here (a real
 * kube-apiserver cannot be installed on this machine); they are printed beside the measurements.
 */
export const REFERENCE = {
  label: 'kube-apiserver 1.24 + etcd 3.4 (quoted)',
  startToReadyMs: 5800,
  idleRssMb: 340,
  createsPerSecond: 790,
  /** Listing 10,000 small custom objects from the watch cache. */
  list10kSeconds: [0.36, 0.45] as const,
  /**
   * client-go's sample-controller (2 workers, no client rate limit) against kube-apiserver 1.24
   * with etcd, without kube-controller-manager: 1,000 Foos from 16 clients until every Foo has
   * its status and every Deployment exists.
   */
  reconcile1kFoosSeconds: 8.0,
} as const;

/** A target: the measured value must be `< value` or `>= value`. */
export interface Target {
  op: '<' | '>=';
  value: number;
}

export const TARGETS = {
  startToReadyMs: { op: '<', value: 500 },
  idleRssMb: { op: '<', value: 100 },
  createsPerSecondMemory: { op: '>=', value: 2000 },
  createsPerSecondDurable: { op: '>=', value: 1000 },
  list10kSeconds: { op: '<', value: 0.15 },
  reconcile1kFoosSeconds: { op: '<', value: 3 },
} as const satisfies Record<string, Target>;
