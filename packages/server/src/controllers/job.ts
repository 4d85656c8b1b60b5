/**
 * The Job controller of kube-controller-manager: runs a Job's pods to `completions` successes
 * with at most `parallelism` at a time, fails it past `backoffLimit` failures or its
 * `activeDeadlineSeconds`, and counts finished pods through the `batch.kubernetes.io/job-tracking`
 * finalizer and `status.uncountedTerminatedPods`, as Kubernetes does since 1.26.
 */
import { isConflict, isNotFound, Job, Pod } from 'kubeloop/client';
import {
  type ControllerDefinition,
  controller,
  controllerOf,
  defaultControllerRateLimiter,
  type ReconcileResult,
} from 'kubeloop/runtime';
import { controllerRefTo } from './claim.js';
import type { ControllerEvents } from './events.js';
import { ObjectSync } from './object-sync.js';
import { CONTROLLER_UID_FIELD, controllerUid } from './owned-pods.js';
import { podReady as ready, syncPods } from './pods.js';

/** The finalizer that keeps a Job's finished pods until the controller has counted them. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';

type Condition = NonNullable<NonNullable<Job['status']>['conditions']>[number];

const now = (): string => `${new Date().toISOString().slice(0, 19)}Z`;
const tracked = (p: Pod) => (p.metadata?.finalizers ?? []).includes(JOB_TRACKING_FINALIZER);
const terminal = (p: Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
/** `isPodFailed` with the default pod replacement policy (TerminatingOrFailed): a deleted pod counts as failed. */
const failed = (p: Pod) =>
  p.status?.phase === 'Failed' || (Boolean(p.metadata?.deletionTimestamp) && p.status?.phase !== 'Succeeded');
const activePod = (p: Pod) => !terminal(p) && !p.metadata?.deletionTimestamp;
const hasCondition = (job: Job, type: string) =>
  (job.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');

function condition(type: string, reason: string, message: string): Condition {
  const t = now();
  return { type, status: 'True', lastProbeTime: t, lastTransitionTime: t, reason, message };
}

/** Options of {@link jobController}. */
export interface JobControllerOptions {
  /** Records the core/v1 Events, as `job-controller`. */
  events: ControllerEvents;
}

/**
 * The Job controller (`job`): owns the pods it creates (a pod's change reconciles its Job); reads
 * a Job's pods by controller UID from the manager's one Pod cache; once a Job is gone, releases
 * the pods that still hold its tracking finalizer.
 *
 * @example
 * ```ts
 * manager.add(jobController({ events: new ControllerEvents(client, 'job-controller') }));
 * ```
 */
export function jobController(options: JobControllerOptions): ControllerDefinition<Job> {
  const quietly = async (run: () => Promise<ReconcileResult>): Promise<ReconcileResult> => {
    try {
      return await run();
    } catch (err) {
      // A conflict is a race the next try resolves: retried without a complaint in the log.
      if (isConflict(err)) return { requeue: true };
      throw err;
    }
  };
  return controller(Job)
    .named('job')
    .withOptions({
      maxConcurrentReconciles: 2,
      rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
    })
    .owns(Pod)
    .indexField(Pod, CONTROLLER_UID_FIELD, controllerUid)
    .onGone((req, ctx) => quietly(() => new JobSync(ctx, options.events).gone(req.namespace, req.name)))
    .reconcile((job, ctx) => quietly(() => new JobSync(ctx, options.events).sync(job)));
}

/** One sync of one Job, with the reconcile's client (writes tracked) and cache. */
class JobSync extends ObjectSync {
  /** A deleted Job's pods are no longer counted: release them. */
  async gone(namespace: string, name: string): Promise<undefined> {
    const orphans = (await this.cache.list(Pod, { namespace })).filter(
      (p) => tracked(p) && controllerOf(p)?.kind === 'Job' && controllerOf(p)?.name === name,
    );
    await this.removeFinalizers(orphans);
    return undefined;
  }

  private async removeFinalizers(pods: readonly Pod[]): Promise<void> {
    const results = await Promise.allSettled(
      pods.map((p) =>
        this.client.api(Pod, p.metadata?.namespace ?? '').patch(
          p.metadata?.name ?? '',
          {
            metadata: {
              uid: p.metadata?.uid,
              '$deleteFromPrimitiveList/finalizers': [JOB_TRACKING_FINALIZER],
            },
          },
          { type: 'strategic' },
        ),
      ),
    );
    const failure = results.find((r) => r.status === 'rejected' && !isNotFound(r.reason));
    if (failure) throw (failure as PromiseRejectedResult).reason;
  }

  /** One Job: counts finished pods, decides whether it is finished, creates or deletes pods, writes its status. */
  async sync(current: Job): Promise<ReconcileResult> {
    let job = current;
    const namespace = job.metadata?.namespace ?? '';
    const uid = job.metadata?.uid ?? '';
    const api = this.client.api(Job, namespace);
    const pods = await this.cache.list(Pod, {
      namespace,
      fieldSelector: { [CONTROLLER_UID_FIELD]: uid },
    });
    const status: NonNullable<Job['status']> = structuredClone(job.status ?? {});
    const conditions: Condition[] = status.conditions ?? [];
    const finished = hasCondition(job, 'Complete') || hasCondition(job, 'Failed');
    const jobDeleting = Boolean(job.metadata?.deletionTimestamp);

    if (finished || jobDeleting) {
      await this.removeFinalizers(pods.filter(tracked));
      return undefined;
    }

    const spec = job.spec;
    const completions = spec?.completions ?? undefined;
    const parallelism = spec?.parallelism ?? 1;
    const backoffLimit = spec?.backoffLimit ?? 6;
    const suspended = spec?.suspend === true;
    // A suspended Job has not started; resuming restarts its activeDeadlineSeconds clock.
    if (!suspended) status.startTime ??= now();

    // 1. Finished pods still holding the finalizer go to uncountedTerminatedPods first, so that a
    // crash between removing the finalizer and counting never loses or doubles them.
    const uncounted = {
      succeeded: [...(status.uncountedTerminatedPods?.succeeded ?? [])],
      failed: [...(status.uncountedTerminatedPods?.failed ?? [])],
    };
    const already = new Set([...uncounted.succeeded, ...uncounted.failed]);
    const newlyFinished = pods.filter((p) => tracked(p) && (p.status?.phase === 'Succeeded' || failed(p)));
    for (const p of newlyFinished) {
      const puid = p.metadata?.uid ?? '';
      if (already.has(puid)) continue;
      (p.status?.phase === 'Succeeded' ? uncounted.succeeded : uncounted.failed).push(puid);
    }

    const succeeded = (status.succeeded ?? 0) + uncounted.succeeded.length;
    const active = pods.filter(activePod);

    // 2. Is the Job finished? (1.32 adds an interim condition before the terminal one.)
    let target: { interim: Condition; final: Condition } | undefined;
    const existingTarget = conditions.find(
      (c) => (c.type === 'FailureTarget' || c.type === 'SuccessCriteriaMet') && c.status === 'True',
    );
    const deadline = spec?.activeDeadlineSeconds;
    const elapsedMs = status.startTime ? Date.now() - Date.parse(status.startTime) : 0;
    if (existingTarget) {
      const type = existingTarget.type === 'FailureTarget' ? 'Failed' : 'Complete';
      target = {
        interim: existingTarget,
        final: condition(type, existingTarget.reason ?? '', existingTarget.message ?? ''),
      };
    } else if ((status.failed ?? 0) + uncounted.failed.length > backoffLimit) {
      const c = condition(
        'FailureTarget',
        'BackoffLimitExceeded',
        'Job has reached the specified backoff limit',
      );
      target = { interim: c, final: condition('Failed', c.reason ?? '', c.message ?? '') };
    } else if (!suspended && deadline !== undefined && deadline !== null && elapsedMs >= deadline * 1000) {
      const c = condition(
        'FailureTarget',
        'DeadlineExceeded',
        'Job was active longer than specified deadline',
      );
      target = { interim: c, final: condition('Failed', c.reason ?? '', c.message ?? '') };
    } else if (
      completions !== undefined && completions !== null
        ? succeeded >= completions
        : succeeded > 0 && active.length === 0
    ) {
      const c = condition(
        'SuccessCriteriaMet',
        'CompletionsReached',
        'Reached expected number of succeeded pods',
      );
      target = { interim: c, final: condition('Complete', c.reason ?? '', c.message ?? '') };
    }
    if (target && !existingTarget) conditions.push(target.interim);
    // A failing Job counts every pod it has not yet counted and that did not succeed as failed.
    if (target?.final.type === 'Failed')
      for (const p of pods) {
        const puid = p.metadata?.uid ?? '';
        if (tracked(p) && p.status?.phase !== 'Succeeded' && !uncounted.failed.includes(puid))
          uncounted.failed.push(puid);
      }
    if (conditions.length > 0) status.conditions = conditions;

    const failedCount = (status.failed ?? 0) + uncounted.failed.length;
    const uncountedChanged =
      uncounted.succeeded.length !== (status.uncountedTerminatedPods?.succeeded ?? []).length ||
      uncounted.failed.length !== (status.uncountedTerminatedPods?.failed ?? []).length;
    if (uncountedChanged || (target && !existingTarget) || (status.startTime && !job.status?.startTime)) {
      status.uncountedTerminatedPods = uncounted;
      job = await api.updateStatus({ ...job, status });
    }

    // 3. Release the counted pods, then count them.
    const toRelease = pods.filter(
      (p) =>
        tracked(p) &&
        (uncounted.succeeded.includes(p.metadata?.uid ?? '') ||
          uncounted.failed.includes(p.metadata?.uid ?? '')),
    );
    await this.removeFinalizers(toRelease);
    status.succeeded = succeeded;
    status.failed = failedCount;
    status.uncountedTerminatedPods = {};

    // 4. Pods: none once finished, else up to the wanted number of active ones.
    let activeNow = active;
    let deleted = 0;
    if (target || suspended) {
      await syncPods(this.client, this.events, Job, job, [], active);
      deleted = active.length;
      activeNow = [];
    } else {
      const wanted =
        completions !== undefined && completions !== null
          ? Math.max(0, Math.min(parallelism, completions - succeeded))
          : succeeded > 0
            ? 0
            : parallelism;
      if (active.length < wanted) await this.createPods(job, wanted - active.length);
      else if (active.length > wanted) {
        const victims = [...active]
          .sort((a, b) => Number(ready(a)) - Number(ready(b)))
          .slice(0, active.length - wanted);
        await syncPods(this.client, this.events, Job, job, [], victims);
        activeNow = active.filter((p) => !victims.includes(p));
      }
    }
    // Looked at again when the deadline passes.
    const result: ReconcileResult =
      !target && !suspended && deadline !== undefined && deadline !== null
        ? { requeueAfter: Math.max(0, deadline * 1000 - elapsedMs) + 5 }
        : undefined;

    // Pods deleted just now are not terminating in the cache yet, but are until they are gone.
    const terminating = pods.filter((p) => p.metadata?.deletionTimestamp && !terminal(p)).length + deleted;
    status.active = activeNow.length;
    status.ready = activeNow.filter(ready).length;
    status.terminating = terminating;
    const wasSuspended = conditions.find((c) => c.type === 'Suspended');
    if (!target && suspended && wasSuspended?.status !== 'True') {
      this.events.event(Job, job, 'Normal', 'Suspended', 'Job suspended');
      status.conditions = [
        ...conditions.filter((c) => c.type !== 'Suspended'),
        condition('Suspended', 'JobSuspended', 'Job suspended'),
      ];
    } else if (!target && !suspended && wasSuspended?.status === 'True') {
      const resumed = { ...condition('Suspended', 'JobResumed', 'Job resumed'), status: 'False' };
      this.events.event(Job, job, 'Normal', 'Resumed', 'Job resumed');
      status.conditions = conditions.map((c) => (c.type === 'Suspended' ? resumed : c));
      status.startTime = resumed.lastTransitionTime;
    }
    if (target && terminating === 0 && activeNow.length === 0) {
      status.conditions = [...conditions, target.final];
      if (target.final.type === 'Complete') {
        status.completionTime = target.final.lastTransitionTime;
        this.events.event(Job, job, 'Normal', 'Completed', 'Job completed');
      } else this.events.event(Job, job, 'Warning', target.final.reason ?? '', target.final.message ?? '');
    }
    if (status.active === 0) delete status.active;
    if (status.failed === 0) delete status.failed;
    if (status.succeeded === 0) delete status.succeeded;
    if (JSON.stringify(status) === JSON.stringify(job.status)) return result;
    try {
      await api.updateStatus({ ...job, status });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return result;
  }

  private async createPods(job: Job, n: number): Promise<void> {
    const template = job.spec?.template ?? {};
    const name = job.metadata?.name ?? '';
    const pod: Pod = {
      metadata: {
        generateName: `${name}-`,
        ...(template.metadata?.labels && { labels: template.metadata.labels }),
        ...(template.metadata?.annotations && { annotations: template.metadata.annotations }),
        finalizers: [JOB_TRACKING_FINALIZER],
        ownerReferences: [controllerRefTo(job, 'Job', 'batch/v1')],
      },
      spec: template.spec ?? { containers: [] },
    };
    await syncPods(
      this.client,
      this.events,
      Job,
      job,
      Array.from({ length: n }, () => pod),
    );
  }
}
