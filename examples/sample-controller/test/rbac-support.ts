/**
 * What the RBAC tests of the sample operator share: its generated RBAC (what
 * `kubectl apply -k config/default` installs), the operator run as a given identity with its log
 * lines kept, and a recorder of the requests that identity makes, as the server authorizes them.
 */
import { eventually, type TestEnv } from '@kubeloop/server/testing';
import { Client, CustomResourceDefinition, type KubeObject } from 'kubeloop/client';
import { installManifests, type Manifest, type PolicyRule } from 'kubeloop/manifests';
import type { Manager } from 'kubeloop/runtime';
import { pino } from 'pino';
import { Foo } from '../src/api/foo.js';
import { createManager } from '../src/operator.js';

/** The lease the deployed manager elects its leader with (`--leader-elect`, as its Deployment runs it). */
export const LEASE = 'sample-controller.samplecontroller.k8s.io';

/** The manager's ServiceAccount, as config/default names and places it. */
export const OPERATOR_SA = {
  namespace: 'sample-controller-system',
  name: 'sample-controller-controller-manager',
};
export const OPERATOR_USER = `system:serviceaccount:${OPERATOR_SA.namespace}:${OPERATOR_SA.name}`;

/**
 * The RBAC objects the operator is deployed with: generated from the manager's declarations as
 * src/manifests.ts does, with config/default's prefix and namespace — its Namespace, the ServiceAccount, the
 * manager's ClusterRole and binding, leader election's Role and binding. (The Foo editor and
 * viewer roles are for people, bound to nobody.)
 */
export function generatedRbac(): Manifest[] {
  const objects = installManifests({
    name: 'sample-controller',
    resources: [Foo],
    ...createManager({ leaderElection: { id: LEASE } }).permissions,
  });
  return objects.filter(
    (o) =>
      ['Namespace', 'ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'].includes(
        o.kind,
      ) && !/-(editor|viewer)-role$/.test(o.metadata.name),
  );
}

/** The rules of the generated roles, each with the role that holds it. */
export function generatedRules(): { role: string; rule: PolicyRule }[] {
  return generatedRbac().flatMap((o) =>
    o.kind === 'Role' || o.kind === 'ClusterRole'
      ? ((o.rules as PolicyRule[] | undefined) ?? []).map((rule) => ({
          role: `${o.kind}/${o.metadata.name}`,
          rule,
        }))
      : [],
  );
}

/** Applies objects as the admin (server-side apply). */
export async function applyAsAdmin(env: TestEnv, objects: readonly Manifest[]): Promise<void> {
  const admin = new Client(env.clientConfig);
  try {
    for (const o of objects) await admin.apply(o as KubeObject, { fieldManager: 'rbac-test', force: true });
  } finally {
    await admin.close();
  }
}

/** Installs the Foo CRD and waits until it is established. */
export async function installFooCrd(env: TestEnv): Promise<void> {
  const admin = new Client(env.clientConfig);
  try {
    await admin.apply(
      {
        ...Foo.crd(),
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
      } as CustomResourceDefinition,
      { fieldManager: 'rbac-test', force: true },
    );
    await eventually(async () => {
      const crd = await admin.get(CustomResourceDefinition, 'foos.samplecontroller.k8s.io');
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    });
  } finally {
    await admin.close();
  }
}

/** A log line of the operator, parsed. */
export interface LogLine {
  level: number;
  msg: string;
  hint?: string;
  verb?: string;
  group?: string;
  resource?: string;
  err?: { message?: string };
}

/** The sample operator, run as `identity` with leader election as deployed; its log lines are kept. */
export interface RunningOperator {
  manager: Manager;
  client: Client;
  lines: LogLine[];
  /** Settles when the manager has stopped (never rejects). */
  done: Promise<void>;
  stop(): Promise<void>;
}

/** Starts the sample operator as `identity` (not waiting for its caches). */
export async function startOperatorAs(
  env: TestEnv,
  identity: Parameters<TestEnv['clientConfigFor']>[0],
): Promise<RunningOperator> {
  const client = new Client(await env.clientConfigFor(identity), { retry: { baseDelayMs: 1 } });
  const lines: LogLine[] = [];
  const manager = createManager({
    client,
    logger: pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s) as LogLine) }),
    healthProbeAddress: '127.0.0.1:0',
    metricsAddress: '127.0.0.1:0',
    handleSignals: false,
    gracefulShutdownTimeoutMs: 5_000,
    leaderElection: { id: LEASE, leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 200 },
  });
  const done = manager.start().catch(() => undefined);
  return {
    manager,
    client,
    lines,
    done,
    async stop() {
      await manager.stop();
      await done;
      await client.close();
    },
  };
}

/** A request in RBAC's terms: `verb group resource[/subresource]`. */
export interface RecordedRequest {
  verb: string;
  group: string;
  resource: string;
}

/** Records the resource requests `username` makes, as the server's audit stage sees them. */
export function recordRequests(
  env: TestEnv,
  username: string,
): { requests: RecordedRequest[]; stop(): void } {
  const requests: RecordedRequest[] = [];
  const stop = env.audit.subscribe(({ user, info }) => {
    if (user.username !== username || !info.isResourceRequest) return;
    requests.push({
      verb: info.verb,
      group: info.group,
      resource: info.subresource ? `${info.resource}/${info.subresource}` : info.resource,
    });
  });
  return { requests, stop };
}

/** The manager's `/metrics` text. */
export async function metricsOf(manager: Manager): Promise<string> {
  const res = await fetch(`${manager.metricsUrl}/metrics`);
  return res.text();
}

/** The HTTP status of the manager's `/readyz`. */
export async function readyzOf(manager: Manager): Promise<number> {
  return (await fetch(`${manager.healthUrl}/readyz`)).status;
}

/** Every sample of a metric: its labels (as written) and value. */
export function samples(text: string, name: string): { labels: string; value: number }[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`))
    .map((l) => ({
      labels: l.slice(name.length, l.lastIndexOf(' ')),
      value: Number(l.slice(l.lastIndexOf(' ') + 1)),
    }));
}
