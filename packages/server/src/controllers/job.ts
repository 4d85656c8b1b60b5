/**
 * The Job controller of kube-controller-manager: runs a Job's pods to `completions` successes
 * with at most `parallelism` at a time, fails it past `backoffLimit` failures or its
 * `activeDeadlineSeconds`, and counts finished pods through the `batch.kubernetes.io/job-tracking`
 * finalizer and `status.uncountedTerminatedPods`, as Kubernetes does since 1.26.
 */
import { setMaxListeners } from 'node:events';
import type { Client } from 'kubeloop/client';
import { isNotFound, Job, Pod } from 'kubeloop/client';
import {
  controllerOf,
  defaultControllerRateLimiter,
  Informer,
  objectKey,
  splitKey,
  WorkQueue,
} from 'kubeloop/runtime';
import { controllerRefTo } from './claim.js';
import { ControllerEvents } from './events.js';
import type { ControllerLog } from './log.js';
import { PodControl, podReady as ready } from './pods.js';
import { runWorker } from './worker.js';

/** The finalizer that keeps a Job's finished pods until the controller has counted them. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
const CONTROLLER_INDEX = 'controller-uid';

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

/** The Job controller: informers on Jobs and pods, a queue of Jobs. */
export class JobController {
  private readonly jobs: Informer<Job>;
  private readonly pods: Informer<Pod>;
  private readonly queue = new WorkQueue<string>({
    name: 'job',
    rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
  });
  private readonly abort = new AbortController();
  private readonly control: PodControl;
  private workers: Promise<void>[] = [];
  private readonly log: ControllerLog;
  private readonly events: ControllerEvents;

  constructor(
    private readonly client: Client,
    options: { log?: ControllerLog } = {},
  ) {
    this.log = options.log ?? (() => undefined);
    this.events = new ControllerEvents(client, 'job-controller', this.log);
    this.control = new PodControl(client, this.events, Job);
    setMaxListeners(0, this.abort.signal);
    this.jobs = new Informer(client.api(Job, ''), {});
    this.pods = new Informer(client.api(Pod, ''), {
      indexers: { [CONTROLLER_INDEX]: (p) => controllerOf(p)?.uid },
    });
    this.jobs.addEventHandler({
      onAdd: (j) => this.queue.add(objectKey(j)),
      onUpdate: (_o, j) => this.queue.add(objectKey(j)),
      onDelete: (j) => {
        this.control.expectations.forget(j.metadata?.uid ?? '');
        // Its pods may still hold the tracking finalizer.
        this.queue.add(objectKey(j));
      },
    });
    const expectations = this.control.expectations;
    this.pods.addEventHandler({
      onAdd: (p) => {
        expectations.observeAdd(p);
        this.enqueueOwner(p);
      },
      onUpdate: (_o, p) => {
        expectations.observeUpdate(p);
        this.enqueueOwner(p);
      },
      onDelete: (p) => {
        expectations.observeDelete(p);
        this.enqueueOwner(p);
      },
    });
  }

  start(): void {
    this.jobs.start(this.abort.signal);
    this.pods.start(this.abort.signal);
    for (let i = 0; i < 2; i++) this.workers.push(this.work());
  }

  /** Resolves once the controller's caches hold their first lists (the test environment waits for it). */
  async waitForSync(): Promise<void> {
    await Promise.all([this.jobs.waitForSync(), this.pods.waitForSync()]);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    const closing = this.events.close();
    await this.queue.shutdown();
    await Promise.all(this.workers);
    await Promise.all([this.jobs.stop(), this.pods.stop(), closing]);
  }

  private enqueueOwner(p: Pod): void {
    const ref = controllerOf(p);
    if (ref?.kind === 'Job' && ref.apiVersion.startsWith('batch/'))
      this.queue.add(`${p.metadata?.namespace ?? ''}/${ref.name}`);
  }

  private work(): Promise<void> {
    return runWorker(this.queue, this.abort.signal, (k) => this.reconcile(k), {
      log: this.log,
      message: 'job sync failed; retrying',
    });
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
  async reconcile(key: string): Promise<void> {
    if (!this.jobs.hasSynced || !this.pods.hasSynced)
      await Promise.all([this.jobs.waitForSync(), this.pods.waitForSync()]);
    const { namespace = '', name } = splitKey(key);
    let job = this.jobs.store.get(name, namespace);
    if (!job) {
      // A deleted Job's pods are no longer counted: release them.
      const orphans = this.pods.store
        .list()
        .filter(
          (p) =>
            p.metadata?.namespace === namespace &&
            tracked(p) &&
            controllerOf(p)?.kind === 'Job' &&
            controllerOf(p)?.name === name,
        );
      await this.removeFinalizers(orphans);
      return;
    }
    const uid = job.metadata?.uid ?? '';
    const api = this.client.api(Job, namespace);
    const pods = this.pods.store
      .byIndex(CONTROLLER_INDEX, uid)
      .filter((p) => p.metadata?.namespace === namespace);
    const status: NonNullable<Job['status']> = structuredClone(job.status ?? {});
    const conditions: Condition[] = status.conditions ?? [];
    const finished = hasCondition(job, 'Complete') || hasCondition(job, 'Failed');
    const jobDeleting = Boolean(job.metadata?.deletionTimestamp);

    if (finished || jobDeleting) {
      await this.removeFinalizers(pods.filter(tracked));
      return;
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
    const settled = this.control.expectations.satisfied(uid);
    let activeNow = active;
    let deleted = 0;
    if (target || suspended) {
      await this.control.sync(job, [], active);
      deleted = active.length;
      activeNow = [];
    } else if (settled) {
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
        await this.control.sync(job, [], victims);
        activeNow = active.filter((p) => !victims.includes(p));
      }
    }
    if (!target && !suspended && deadline !== undefined && deadline !== null)
      this.queue.addAfter(key, Math.max(0, deadline * 1000 - elapsedMs) + 5);

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
    if (JSON.stringify(status) === JSON.stringify(job.status)) return;
    try {
      await api.updateStatus({ ...job, status });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
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
    await this.control.sync(
      job,
      Array.from({ length: n }, () => pod),
    );
  }
}
