/**
 * The workload controllers of kube-controller-manager that run pods of their own (DaemonSet,
 * StatefulSet, Job) as `kubeloop/runtime` controller definitions, with the core/v1 Event
 * recorders they report under their kube names and the runnable that closes them.
 */
import type { Client } from 'kubeloop/client';
import type { ControllerDefinition, Runnable } from 'kubeloop/runtime';
import { daemonSetController } from './daemonset.js';
import { ComponentRecorders } from './events.js';
import { ControllerRevision } from './history.js';
import { jobController } from './job.js';
import type { ControllerLog } from './log.js';
import { statefulSetController } from './statefulset.js';

/** What {@link workloadControllers} needs: where to log the events it could not record. */
export interface WorkloadControllersOptions {
  log?: ControllerLog;
}

/**
 * The DaemonSet, StatefulSet and Job controllers, and a runnable that asks the shared cache for
 * the ControllerRevisions they read and, when the manager stops (after its controllers), waits
 * for the Events being written.
 *
 * @example
 * ```ts
 * for (const c of workloadControllers(client, { log })) manager.add(c);
 * ```
 */
export function workloadControllers(
  client: Client,
  options: WorkloadControllersOptions = {},
): (ControllerDefinition<never> | Runnable)[] {
  const recorders = new ComponentRecorders(client, options.log);
  const definitions = [
    daemonSetController({ events: recorders.for('daemonset-controller') }),
    statefulSetController({ events: recorders.for('statefulset-controller') }),
    jobController({ events: recorders.for('job-controller') }),
  ] as unknown as ControllerDefinition<never>[];
  // The StatefulSet controller reads revisions without reconciling on their events: the cache
  // syncs them before the controllers start all the same.
  return [
    ...definitions,
    recorders.closer('workload-events', ({ cache }) => void cache.informer(ControllerRevision)),
  ];
}
