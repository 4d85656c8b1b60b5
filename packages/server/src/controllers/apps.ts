/**
 * The workload controllers of kube-controller-manager that keep pods and ReplicaSets (ReplicaSet,
 * ReplicationController, Deployment) as `kubeloop/runtime` controller definitions, with the
 * core/v1 Event recorders they report under their kube names and the runnable that closes them.
 */
import type { Client } from 'kubeloop/client';
import type { ControllerDefinition, Runnable } from 'kubeloop/runtime';
import { deploymentController } from './deployment.js';
import { ControllerEvents } from './events.js';
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
  const recorders: ControllerEvents[] = [];
  const events = (component: string) => {
    const e = new ControllerEvents(client, component, options.log);
    recorders.push(e);
    return e;
  };
  const definitions = [
    replicaSetController({ events: events(replicaSetEventComponent('ReplicaSet')) }),
    replicaSetController({
      kind: 'ReplicationController',
      events: events(replicaSetEventComponent('ReplicationController')),
    }),
    deploymentController({ events: events('deployment-controller') }),
  ] as unknown as ControllerDefinition<never>[];
  const closer: Runnable = {
    name: 'apps-events',
    needLeaderElection: false,
    async start({ signal }) {
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
      });
      await Promise.all(recorders.map((r) => r.close()));
    },
  };
  return [...definitions, closer];
}
