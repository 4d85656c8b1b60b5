/**
 * The operator's own workload: the manager Deployment (probes, metrics port, a restricted
 * security context, resource requests), its Namespace and its metrics Service — kubebuilder's
 * `config/manager` and `config/default/metrics_service.yaml`, for a Node.js manager.
 */
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { EnvVar, ResourceRequirements, Service } from 'kubernetes-types/core/v1.js';
import type { Manifest } from './rbac.js';

/** How the manager runs. Every field has a kubebuilder-like default. */
export interface ManagerOptions {
  /** Container image (default `controller:latest`, replaced by kustomize's `images`). */
  readonly image?: string;
  /** Arguments of the manager's entry point (default: leader election, probe and metrics addresses). */
  readonly args?: readonly string[];
  /** Extra environment variables. `POD_NAMESPACE` is always set from the downward API. */
  readonly env?: readonly EnvVar[];
  /** Replicas (default 1; more make sense with leader election). */
  readonly replicas?: number;
  /** Requests and limits (default requests 10m CPU / 128Mi, limits 500m / 512Mi). */
  readonly resources?: ResourceRequirements;
  /** Port of `/healthz` and `/readyz` (default 8081). */
  readonly healthProbePort?: number;
  /** Port of `/metrics` (default 8080). */
  readonly metricsPort?: number;
  /** Whether the manager is started with leader election (default true). */
  readonly leaderElection?: boolean;
}

/** Names and labels the manager objects share (before kustomize's prefix and namespace). */
export interface ManagerNames {
  /** Project name, for the `app.kubernetes.io/name` label. */
  readonly project: string;
  readonly deployment: string;
  readonly serviceAccount: string;
  readonly metricsService: string;
  /** Namespace of the objects; absent in kustomize bases (set by config/default). */
  readonly namespace?: string;
}

/** The labels selecting the manager's pods. */
export function managerSelector(project: string): Record<string, string> {
  return { 'control-plane': 'controller-manager', 'app.kubernetes.io/name': project };
}

/** Labels of every object of the project. */
export function projectLabels(project: string): Record<string, string> {
  return { 'app.kubernetes.io/name': project, 'app.kubernetes.io/managed-by': 'kubeloop' };
}

/** The manager's default arguments for its ports and leader election. */
export function defaultManagerArgs(o: ManagerOptions = {}): string[] {
  return [
    ...((o.leaderElection ?? true) ? ['--leader-elect'] : []),
    `--health-probe-bind-address=:${o.healthProbePort ?? 8081}`,
    `--metrics-bind-address=:${o.metricsPort ?? 8080}`,
  ];
}

/** The Namespace the manager runs in. */
export function managerNamespace(name: string, project: string): Manifest {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { ...projectLabels(project), 'control-plane': 'controller-manager' } },
  };
}

/**
 * The manager Deployment. Its pod runs as non-root with a read-only root filesystem (a writable
 * `/tmp` is mounted), no privilege escalation, every capability dropped and the runtime's
 * default seccomp profile — the Pod Security Standards' `restricted` level.
 */
export function managerDeployment(n: ManagerNames, o: ManagerOptions = {}): Manifest & Deployment {
  const health = o.healthProbePort ?? 8081;
  const metrics = o.metricsPort ?? 8080;
  const selector = managerSelector(n.project);
  const deployment: Deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: n.deployment,
      ...(n.namespace !== undefined && { namespace: n.namespace }),
      labels: { ...projectLabels(n.project), 'control-plane': 'controller-manager' },
    },
    spec: {
      replicas: o.replicas ?? 1,
      selector: { matchLabels: selector },
      template: {
        metadata: {
          annotations: { 'kubectl.kubernetes.io/default-container': 'manager' },
          labels: { ...selector },
        },
        spec: {
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'manager',
              image: o.image ?? 'controller:latest',
              args: [...(o.args ?? defaultManagerArgs(o))],
              env: [
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                ...(o.env ?? []).map((e) => ({ ...e })),
              ],
              ports: [
                { name: 'metrics', containerPort: metrics, protocol: 'TCP' },
                { name: 'health', containerPort: health, protocol: 'TCP' },
              ],
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ['ALL'] },
              },
              livenessProbe: {
                httpGet: { path: '/healthz', port: health },
                initialDelaySeconds: 15,
                periodSeconds: 20,
              },
              readinessProbe: {
                httpGet: { path: '/readyz', port: health },
                periodSeconds: 10,
              },
              // Ready as soon as the caches synced: the kubelet probes /readyz every second until it
              // first passes, then runs the readiness probe at once (a fixed initial delay would
              // wait for the next 10 s tick). Up to 2 minutes, controller-runtime's cache sync
              // timeout; past it the manager is restarted.
              startupProbe: {
                httpGet: { path: '/readyz', port: health },
                periodSeconds: 1,
                failureThreshold: 120,
              },
              resources: o.resources ?? {
                limits: { cpu: '500m', memory: '512Mi' },
                requests: { cpu: '10m', memory: '128Mi' },
              },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: {} }],
          serviceAccountName: n.serviceAccount,
          terminationGracePeriodSeconds: 10,
        },
      },
    },
  };
  return deployment as Manifest & Deployment;
}

/** The Service in front of the manager's metrics port (for a Prometheus ServiceMonitor). */
export function metricsService(n: ManagerNames, o: ManagerOptions = {}): Manifest & Service {
  const metrics = o.metricsPort ?? 8080;
  const service: Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: n.metricsService,
      ...(n.namespace !== undefined && { namespace: n.namespace }),
      labels: { ...projectLabels(n.project), 'control-plane': 'controller-manager' },
    },
    spec: {
      ports: [{ name: 'metrics', port: metrics, protocol: 'TCP', targetPort: metrics }],
      selector: managerSelector(n.project),
    },
  };
  return service as Manifest & Service;
}
