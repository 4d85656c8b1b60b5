import {
  type ControllerDefinition,
  controller,
  finalize,
  isConditionTrue,
  setCondition,
  TerminalError,
  writeStatus,
} from 'kubeloop/runtime';
import { FooBarTask } from '../api/test/v1/foobartask.js';

import { type ExternalRegistry, RegistryError } from '../external.js';

/** The finalizer that keeps a FooBarTask until its registration is removed from the registry. */
export const REGISTRY_FINALIZER = 'test.example.com/registry-cleanup';

/** The registry key of a task: its namespace and name (those of its FooBar). */
export const registryKey = (task: FooBarTask): string =>
  `${task.metadata?.namespace ?? ''}/${task.metadata?.name ?? ''}`;

/**
 * Does each FooBarTask's work against the external registry, seed 000's lessons applied:
 *
 * - Only errors worth retrying are retried. The registry being unavailable is thrown as is: the
 *   workqueue retries it with backoff. The registry refusing the task (a type it does not
 *   serve) will be refused again however often it is asked: that is a `TerminalError`, not
 *   retried, reported by a Warning Event and the `Registered=False` condition. A new spec (a
 *   new generation) is tried again.
 * - A finalizer: the registration lives outside the cluster, where no owner reference reaches.
 *   The task keeps the finalizer until the registry has removed it; an outage during the
 *   removal is retried like any other, and the task (and so its FooBar) stays meanwhile.
 * - The status subresource: `observedGeneration` and conditions, written only when changed.
 */
export function fooBarTaskController(registry: ExternalRegistry): ControllerDefinition<FooBarTask> {
  return controller(FooBarTask).reconcile(async (task, { client, events, log }) => {
    const key = registryKey(task);
    const finalized = await finalize(client, task, REGISTRY_FINALIZER, async () => {
      await registry.unregister(key);
      log.info({ key }, 'unregistered');
      events.normal('Unregistered', `Removed ${key} from the registry`);
    });
    if (finalized === 'deleted') return;

    const generation = task.metadata?.generation;
    const conditions = task.status?.conditions;
    // This generation's outcome is known (registered, or refused for good): nothing to do.
    if (task.status?.observedGeneration === generation && conditions?.some((c) => c.type === 'Registered'))
      return;

    try {
      await registry.register(key, { target: task.spec.target, type: task.spec.type });
    } catch (err) {
      if (!(err instanceof RegistryError) || err.retryable) throw err;
      events.warning('Refused', err.message);
      await writeStatus(client, task, {
        observedGeneration: generation,
        conditions: setCondition(conditions, {
          type: 'Registered',
          status: 'False',
          reason: 'Refused',
          message: err.message,
          observedGeneration: generation,
        }),
      });
      throw new TerminalError(err.message, { cause: err });
    }
    if (!isConditionTrue(conditions, 'Registered')) events.normal('Registered', `Registered ${key}`);
    log.info({ key, target: task.spec.target, type: task.spec.type }, 'registered');
    await writeStatus(client, task, {
      observedGeneration: generation,
      conditions: setCondition(conditions, {
        type: 'Registered',
        status: 'True',
        reason: 'Registered',
        message: `${task.spec.target} (${task.spec.type})`,
        observedGeneration: generation,
      }),
    });
    return undefined;
  });
}
