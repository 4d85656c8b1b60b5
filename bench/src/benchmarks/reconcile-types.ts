export const STATUS_DEFINITION =
  'a Foo has its status when a watch event shows it with status.availableReplicas set to an integer (0 counts: ' +
  'without kube-controller-manager no pod ever becomes available)';

/** Options of one measured run. */
export interface ReconcileOptions {
  /** The repository root (holds `packages/cli/dist/bin.js` and the built example). */
  root: string;
  foos: number;
  /** Concurrent clients creating the Foos. */
  clients: number;
  /** Workers of the operator (`--max-concurrent-reconciles`). */
  workers: number;
  /** `spec.replicas` of every Foo (1–10, the Foo's schema). */
  replicas: number;
  /** The control plane's built-in controllers (garbage collector, Deployment, ReplicaSet, scheduler, kubelet). */
  controllers: boolean;
  /** Simulated nodes when the controllers run (110 pods each). */
  nodes: number;
  /** V8 CPU profiles of the server and the operator go into this directory. */
  cpuProfDir?: string;
  /** Names the profiles of this run (`server-<label>.cpuprofile`, `operator-<label>.cpuprofile`). */
  label?: string;
  /** With the controllers on, also wait until every Foo reports all its replicas available (default true). */
  waitAvailable?: boolean;
  /** Keeps the run's directory (kubeconfig, `operator.log`) instead of removing it. */
  keep?: boolean;
  /** Gives up after this long (default 120 s). */
  timeoutMs?: number;
  log?: (s: string) => void;
}

/** One burst of Foos: what the bench saw and what the operator did. Times are from the first create request on. */
export interface Burst {
  /** Until every Foo has its status and every Deployment exists: the headline. */
  convergedMs: number;
  /** Until the last create was answered. */
  createsMs: number;
  /** Until the last Foo got its status. */
  statusMs: number;
  /** Until the last Deployment appeared. */
  deploymentsMs: number;
  /** Until every Foo reports `availableReplicas == replicas` (built-in controllers on only; NaN if not reached). */
  availableMs?: number;
  /** Reconciles the operator finished by convergence (its `controller_runtime_reconcile_total`). */
  reconciles: number;
  reconcileErrors: number;
  reconcilesPerSecond: number;
  /** Per Foo: from its create response to the first watch event showing its status. */
  latency: { p50Ms: number; p99Ms: number; maxMs: number };
  operator: {
    /** RSS right after convergence. */
    rssMb: number;
    peakRssMb: number;
    /** CPU time over the burst. */
    cpuMs: number;
    /** Requests it sent by convergence, by method (its `rest_client_requests_total`). */
    requests: Record<string, number>;
    /** Most sockets it held open at once (sampled every 50 ms): its connections to the server. */
    peakSockets: number;
  };
  server: { rssMb: number; cpuMs: number };
  /** CPU time of this bench process (the clients and the watches) over the burst. */
  benchCpuMs: number;
  /** Percentage of the machine's CPU used by other processes during the burst. */
  otherCpuPercent: number;
}

/**
 * What one run measured: the first burst on fresh processes (`cold`: V8 still compiling the hot
 * paths of the server and the operator), then a second one into another namespace (`warm`: the
 * steady state of a long-running operator, the convention of the other benchmarks).
 */
export interface ReconcileRun {
  controllers: boolean;
  foos: number;
  clients: number;
  workers: number;
  replicas: number;
  /** From spawn to leading (caches synced, Lease acquired). */
  operatorReadyMs: number;
  /** Operator RSS once leading, before any Foo. */
  operatorIdleRssMb: number;
  cold: Burst;
  warm: Burst;
}
