import {
  addFinalizer,
  type ConditionInput,
  controller,
  controllerOf,
  findCondition,
  generationChanged,
  hasFinalizer,
  isBeingDeleted,
  or,
  type Predicate,
  removeFinalizer,
  setCondition,
  setControllerReference,
  writeStatus,
} from 'kubeloop/runtime';
import { FooBarTask } from '../api/test/v1/foobartask.js';
import { FooBar } from '../api/test/v2/foobar.js';

/** The finalizer that keeps a FooBar until its task has cleaned up the registry. */
export const TASK_FINALIZER = 'test.example.com/task-cleanup';

/**
 * Updates whose finalizers changed: a `kubectl replace` (or an edit) that drops the finalizer
 * must bring the controller back to put it again, or the FooBar's deletion would no longer
 * wait for the registry's cleanup.
 */
const finalizersChanged: Predicate<FooBar> = {
  update: (old, now) => JSON.stringify(old.metadata?.finalizers) !== JSON.stringify(now.metadata?.finalizers),
};

/** The type a FooBar without one asks for. */
export const DEFAULT_TYPE = 'http';

/** The FooBarTask a FooBar wants: its wish, in the internal shape, controlled by the FooBar. */
export function taskFor(fooBar: FooBar): FooBarTask {
  return setControllerReference(fooBar, {
    apiVersion: 'test.example.com/v1',
    kind: 'FooBarTask',
    metadata: { name: fooBar.metadata?.name ?? '', namespace: fooBar.metadata?.namespace ?? 'default' },
    spec: { target: fooBar.spec.target.name, type: fooBar.spec.target.type ?? DEFAULT_TYPE },
  });
}

/** What the FooBar's `Ready` condition says, from its task's `Registered`. */
function readiness(task: FooBarTask): Omit<ConditionInput, 'type'> {
  const registered = findCondition(task.status?.conditions, 'Registered');
  if (!registered || task.status?.observedGeneration !== task.metadata?.generation)
    return {
      status: 'False',
      reason: 'Registering',
      message: `FooBarTask ${task.metadata?.name} is at work`,
    };
  return {
    status: registered.status as ConditionInput['status'],
    reason: registered.reason,
    message: registered.message,
  };
}

/**
 * The user-facing controller of seed 000's "internal CR" pattern: it keeps one FooBarTask per
 * FooBar in line with the FooBar's spec (v2, the stored version; v1 objects reach it converted)
 * and reports the task's outcome in the FooBar's status. The registry itself is the task
 * controller's business.
 *
 * - No update loop (seed 000's 3.4): the FooBar's own events pass only when its generation
 *   changed (a spec change or the start of its deletion) or its finalizers did. Its status
 *   writes — this controller's and anyone's — cause no reconcile; the task's changes reach it
 *   through `owns`.
 * - Its finalizer: deleting a FooBar deletes its task and waits until the task is gone (the
 *   task's finalizer removes the registration), so a FooBar disappears only once the registry
 *   no longer holds it.
 */
export const fooBarController = controller(FooBar)
  .withPredicates(or(generationChanged(), finalizersChanged))
  .owns(FooBarTask)
  .reconcile(async (fooBar, { client, cache, events, log }) => {
    log.debug('reconciling');
    const name = fooBar.metadata?.name ?? '';
    const namespace = fooBar.metadata?.namespace ?? 'default';
    let task = await cache.get(FooBarTask, name, namespace);

    if (isBeingDeleted(fooBar)) {
      if (!hasFinalizer(fooBar, TASK_FINALIZER)) return;
      if (task && controllerOf(task)?.uid === fooBar.metadata?.uid) {
        // The task's deletion (an event of an owned object) brings this FooBar back.
        if (!isBeingDeleted(task)) {
          await client.delete(task);
          events.normal('Deleting', `Deleting FooBarTask ${name}: the registry is cleaned up first`);
        }
        return;
      }
      await removeFinalizer(client, fooBar, TASK_FINALIZER);
      return;
    }

    fooBar = await addFinalizer(client, fooBar, TASK_FINALIZER);
    const wanted = taskFor(fooBar);
    if (!task) {
      task = await client.create(wanted);
      events.normal('Created', `Created FooBarTask ${name}`);
    } else if (controllerOf(task)?.uid !== fooBar.metadata?.uid) {
      const message = `FooBarTask "${name}" already exists and is not managed by this FooBar`;
      events.warning('ErrResourceExists', message);
      // Nothing of ours changes when the stranger goes away: look again later.
      return { requeueAfter: 30_000 };
    } else if (task.spec.target !== wanted.spec.target || task.spec.type !== wanted.spec.type) {
      task = await client.update({ ...task, spec: wanted.spec });
      events.normal('Updated', `Updated FooBarTask ${name}: ${wanted.spec.target} (${wanted.spec.type})`);
    }

    const generation = fooBar.metadata?.generation;
    const ready = readiness(task);
    const before = findCondition(fooBar.status?.conditions, 'Ready');
    if (ready.reason === 'Refused' && before?.reason !== 'Refused')
      events.warning('Refused', ready.message ?? '');
    const { changed } = await writeStatus(client, fooBar, {
      observedGeneration: generation,
      task: name,
      conditions: setCondition(fooBar.status?.conditions, {
        type: 'Ready',
        ...ready,
        observedGeneration: generation,
      }),
    });
    if (changed) log.info({ ready: ready.status, reason: ready.reason }, 'updated status');
    return undefined;
  });
