/**
 * The workload controllers of kube-controller-manager that keep pods and ReplicaSets (ReplicaSet,
 * ReplicationController, Deployment) as `kubeloop/runtime` controller definitions, with the
 * core/v1 Event recorders they report under their kube names and the runnable that closes them.
 */
import type { Client } from 'kubeloop/client';
import type { ControllerDefinition, Runnable } from 'kubeloop/runtime';
import { deploymentController } from './deployment.js';
import { ComponentRecorders } from './events.js';
import type { ControllerLog } from './log.js';
import { replicaSetController, replicaSetEventComponent } from './replicaset.js';

/** What {@link appsControllers} needs: where to log the events it could not record. */
export interface AppsControllersOptions {
  log?: ControllerLog;
}

/**
 * The ReplicaSet, ReplicationController and Deployment controllers, and a runnable that, when
 * the manager stops (after its controllers), waits for the Events being written.
 *
 * @example
 * ```ts
 * for (const c of appsControllers(client, { log })) manager.add(c);
 * ```
 */
export function appsControllers(
  client: Client,
  options: AppsControllersOptions = {},
): (ControllerDefinition<never> | Runnable)[] {
  const recorders = new ComponentRecorders(client, options.log);
  const definitions = [
    replicaSetController({ events: recorders.for(replicaSetEventComponent('ReplicaSet')) }),
    replicaSetController({
      kind: 'ReplicationController',
      events: recorders.for(replicaSetEventComponent('ReplicationController')),
    }),
    deploymentController({ events: recorders.for('deployment-controller') }),
  ] as unknown as ControllerDefinition<never>[];
  return [...definitions, recorders.closer('apps-events')];
}
