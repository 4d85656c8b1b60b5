/** What the one-object syncs of the workload controllers share. */
import type { Client } from 'kubeloop/client';
import type { ReconcileContext } from 'kubeloop/runtime';
import type { ControllerEvents } from './events.js';

/**
 * One sync of one object (a DaemonSet, a StatefulSet, a Job), made per reconcile: the
 * reconcile's client (its writes tracked for read-your-writes) and cache, and the controller's
 * Event recorder.
 */
export abstract class ObjectSync {
  protected readonly client: Client;
  protected readonly cache: ReconcileContext['cache'];

  constructor(
    ctx: ReconcileContext,
    protected readonly events: ControllerEvents,
  ) {
    this.client = ctx.client;
    this.cache = ctx.cache;
  }
}
