/**
 * The CronJob controller of kube-controller-manager (`pkg/controller/cronjob`, v2): creates a Job
 * at each scheduled time, named `<cronjob>-<scheduled minutes since the epoch>`, minding
 * `concurrencyPolicy`, `startingDeadlineSeconds` and `suspend`; keeps `status.active`,
 * `lastScheduleTime` and `lastSuccessfulTime`; deletes finished Jobs beyond the history limits;
 * and records the Events kube's controller records. Time comes from an injectable clock, so
 * tests move it instead of waiting for a minute to pass.
 */

import { isTimeZone, parseSchedule, rfc3339In, type Schedule, ScheduleError } from 'kubeloop/api';
import { type Client, CronJob, isAlreadyExists, isNotFound, Job, type KubeObject } from 'kubeloop/client';
import {
  type Clock,
  type ControllerDefinition,
  controller,
  controllerOf,
  type EventRecorder,
  type ReconcileResult,
} from 'kubeloop/runtime';
import { updateStatus } from '../status-write.js';

/** The annotation that records which scheduled time a Job ran for (`batch.kubernetes.io`, beta in 1.32). */
export const SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';
/** Kube adds 100 ms to each wake-up so that the schedule's minute has surely begun. */
const NEXT_SCHEDULE_DELTA_MS = 100;

type ObjectReference = NonNullable<NonNullable<CronJob['status']>['active']>[number];

const metaTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** Go's `time.RFC1123Z` of a UTC time: `Mon, 02 Jan 2006 15:04:05 +0000`. */
const rfc1123z = (ms: number) => new Date(ms).toUTCString().replace(/GMT$/, '+0000');

function finished(job: Job): 'Complete' | 'Failed' | undefined {
  for (const c of job.status?.conditions ?? [])
    if ((c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') return c.type;
  return undefined;
}

/** Options of {@link cronJobController}. */
export interface CronJobControllerOptions {
  /** `now()` in epoch milliseconds; also the clock of the controller's queue. */
  clock: Clock;
  /** Events, reported by `cronjob-controller`. */
  events: EventRecorder;
}

/** `mostRecentScheduleTime`: the earliest time to consider, the latest missed time, how many were missed. */
function mostRecent(
  cj: CronJob,
  now: number,
  schedule: Schedule,
  withDeadline: boolean,
): { earliest: number; latest: number | undefined; missed: 'none' | 'few' | 'many' } {
  let earliest = Date.parse(cj.status?.lastScheduleTime ?? cj.metadata?.creationTimestamp ?? '') || now;
  const deadline = cj.spec?.startingDeadlineSeconds;
  if (withDeadline && deadline !== undefined && deadline !== null)
    earliest = Math.max(earliest, now - deadline * 1000);
  const t1 = schedule.next(earliest);
  if (t1 === undefined || now < t1) return { earliest, latest: undefined, missed: 'none' };
  let latest = t1;
  let count = 1;
  for (let t = schedule.next(t1); t !== undefined && t <= now; t = schedule.next(t)) {
    latest = t;
    count += 1;
    if (count > 100_000) break;
  }
  return { earliest, latest, missed: count > 100 ? 'many' : 'few' };
}

/** `nextScheduleTimeDuration`: how long until the schedule's next time after the latest one. */
function untilNext(cj: CronJob, now: number, schedule: Schedule): number | undefined {
  const { earliest, latest } = mostRecent(cj, now, schedule, false);
  const next = schedule.next(latest ?? earliest);
  return next === undefined ? undefined : next + NEXT_SCHEDULE_DELTA_MS - now;
}

/** The CronJob controller (`cronjob`). */
export function cronJobController(options: CronJobControllerOptions): ControllerDefinition<CronJob> {
  const { clock, events: recorder } = options;
  return controller(CronJob)
    .named('cronjob')
    .owns(Job)
    .withOptions({ clock })
    .reconcile(async (cj, { client, cache }): Promise<ReconcileResult> => {
      const ns = cj.metadata?.namespace ?? '';
      const name = cj.metadata?.name ?? '';
      const uid = cj.metadata?.uid ?? '';
      const regarding: KubeObject = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: cj.metadata ?? {} };
      const event = (type: 'Normal' | 'Warning', reason: string, note: string) =>
        recorder.event(regarding, type, reason, note);
      const now = clock.now();
      const jobs = (await cache.list(Job, { namespace: ns })).filter((j) => controllerOf(j)?.uid === uid);
      let active: ObjectReference[] = [...(cj.status?.active ?? [])];
      let lastScheduleTime = cj.status?.lastScheduleTime;
      let lastSuccessfulTime = cj.status?.lastSuccessfulTime;
      const isActive = (u: string | undefined) => active.some((r) => r.uid === u);

      for (const j of jobs) {
        const state = finished(j);
        if (!state && !isActive(j.metadata?.uid))
          event(
            'Warning',
            'UnexpectedJob',
            `Saw a job that the controller did not create or forgot: ${j.metadata?.name}`,
          );
        else if (state && isActive(j.metadata?.uid)) {
          active = active.filter((r) => r.uid !== j.metadata?.uid);
          event('Normal', 'SawCompletedJob', `Saw completed job: ${j.metadata?.name}, condition: ${state}`);
        }
        const done = j.status?.completionTime;
        if (
          state === 'Complete' &&
          done &&
          (!lastSuccessfulTime || Date.parse(done) > Date.parse(lastSuccessfulTime))
        )
          lastSuccessfulTime = done;
      }
      for (const ref of [...active]) {
        if (jobs.some((j) => j.metadata?.uid === ref.uid)) continue;
        // The cache may lag behind a Job just created: ask the server before calling it missing.
        try {
          await client.api(Job, ns).get(ref.name ?? '');
        } catch (err) {
          if (!isNotFound(err)) throw err;
          event('Normal', 'MissingJob', `Active job went missing: ${ref.name}`);
          active = active.filter((r) => r.uid !== ref.uid);
        }
      }

      let requeueAfter: number | undefined;
      const schedule = cj.metadata?.deletionTimestamp ? undefined : scheduleOf(cj, event);
      if (schedule && !cj.spec?.suspend) {
        const { latest: scheduled, missed } = mostRecent(cj, now, schedule, true);
        if (missed === 'many')
          event(
            'Warning',
            'TooManyMissedTimes',
            'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew',
          );
        requeueAfter = untilNext(cj, now, schedule);
        const deadline = cj.spec?.startingDeadlineSeconds;
        const jobName = scheduled === undefined ? '' : `${name}-${Math.floor(scheduled / 60_000)}`;
        if (scheduled === undefined) {
          // Nothing due yet.
        } else if (deadline !== undefined && deadline !== null && scheduled + deadline * 1000 < now) {
          event('Warning', 'MissSchedule', `Missed scheduled time to start a job: ${rfc1123z(scheduled)}`);
        } else if (
          active.some((r) => r.name === jobName) ||
          (lastScheduleTime !== undefined && Date.parse(lastScheduleTime) === scheduled)
        ) {
          // This time's Job was already made.
        } else if (cj.spec?.concurrencyPolicy === 'Forbid' && active.length > 0) {
          event(
            'Normal',
            'JobAlreadyActive',
            'Not starting job because prior execution is running and concurrency policy is Forbid',
          );
        } else {
          if (cj.spec?.concurrencyPolicy === 'Replace')
            for (const ref of [...active]) {
              await deleteJob(client, ns, ref.name ?? '', event);
              active = active.filter((r) => r.uid !== ref.uid);
            }
          const created = await createJob(client, cj, scheduled, jobName, schedule.timeZone, event);
          if (created) {
            active.push({
              kind: 'Job',
              namespace: ns,
              name: created.metadata?.name ?? jobName,
              uid: created.metadata?.uid ?? '',
              apiVersion: 'batch/v1',
              resourceVersion: created.metadata?.resourceVersion ?? '',
            });
            lastScheduleTime = metaTime(scheduled);
          }
        }
      }

      // History limits: the oldest finished Jobs beyond them go (kube's `cleanupFinishedJobs`).
      for (const [state, limit] of [
        ['Complete', cj.spec?.successfulJobsHistoryLimit ?? 3],
        ['Failed', cj.spec?.failedJobsHistoryLimit ?? 1],
      ] as const) {
        const done = jobs
          .filter((j) => finished(j) === state && !j.metadata?.deletionTimestamp)
          .sort(
            (a, b) =>
              (Date.parse(a.status?.startTime ?? '') || 0) - (Date.parse(b.status?.startTime ?? '') || 0) ||
              (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
          );
        for (const j of done.slice(0, Math.max(0, done.length - limit))) {
          await deleteJob(client, ns, j.metadata?.name ?? '', event);
          active = active.filter((r) => r.uid !== j.metadata?.uid);
        }
      }

      const status = {
        active: active.length > 0 ? active : null,
        lastScheduleTime: lastScheduleTime ?? null,
        lastSuccessfulTime: lastSuccessfulTime ?? null,
      };
      const current = {
        active: cj.status?.active?.length ? cj.status.active : null,
        lastScheduleTime: cj.status?.lastScheduleTime ?? null,
        lastSuccessfulTime: cj.status?.lastSuccessfulTime ?? null,
      };
      if (JSON.stringify(status) !== JSON.stringify(current)) {
        const again = await updateStatus(client, CronJob, cj, status);
        if (again) return again;
      }
      // Measured from the time read at the start: the clock may have moved while this ran.
      return requeueAfter === undefined
        ? undefined
        : { requeueAfter: Math.max(0, requeueAfter - (clock.now() - now)) };
    });
}

/** The schedule in the CronJob's zone, or undefined with the Warning kube records. */
function scheduleOf(
  cj: CronJob,
  event: (type: 'Normal' | 'Warning', reason: string, note: string) => void,
): Schedule | undefined {
  const spec = cj.spec?.schedule ?? '';
  const zone = cj.spec?.timeZone;
  if (zone !== undefined && zone !== null && !isTimeZone(zone)) {
    event('Warning', 'UnknownTimeZone', `invalid timeZone: "${zone}": unknown time zone ${zone}`);
    return undefined;
  }
  if (spec.includes('TZ'))
    event(
      'Warning',
      'UnsupportedSchedule',
      `CRON_TZ or TZ used in schedule "${spec}" is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details`,
    );
  try {
    return parseSchedule(spec, spec.includes('TZ') ? 'UTC' : (zone ?? 'UTC'));
  } catch (err) {
    if (!(err instanceof ScheduleError)) throw err;
    event('Warning', 'UnparseableSchedule', `unparseable schedule: "${spec}" : ${err.message}`);
    return undefined;
  }
}

/** Creates the Job of one scheduled time (`getJobFromTemplate2`); undefined when it exists but is not ours. */
async function createJob(
  client: Client,
  cj: CronJob,
  scheduled: number,
  name: string,
  zone: string,
  event: (type: 'Normal' | 'Warning', reason: string, note: string) => void,
): Promise<Job | undefined> {
  const ns = cj.metadata?.namespace ?? '';
  const template = cj.spec?.jobTemplate ?? {};
  const job: Job = {
    metadata: {
      name,
      namespace: ns,
      labels: { ...template.metadata?.labels },
      annotations: {
        ...template.metadata?.annotations,
        [SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339In(scheduled, zone),
      },
      ownerReferences: [
        {
          apiVersion: 'batch/v1',
          kind: 'CronJob',
          name: cj.metadata?.name ?? '',
          uid: cj.metadata?.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: template.spec ?? { template: {} },
  };
  try {
    const created = await client.api(Job, ns).create(job);
    event('Normal', 'SuccessfulCreate', `Created job ${created.metadata?.name}`);
    return created;
  } catch (err) {
    if (isAlreadyExists(err)) {
      // Made before a status write was lost: take it back into the active list if it is ours.
      const existing = await client.api(Job, ns).get(name);
      return controllerOf(existing)?.uid === cj.metadata?.uid ? existing : undefined;
    }
    event(
      'Warning',
      'FailedCreate',
      `Error creating job: ${err instanceof Error ? err.message : String(err)}`,
    );
    throw err;
  }
}

async function deleteJob(
  client: Client,
  ns: string,
  name: string,
  event: (type: 'Normal' | 'Warning', reason: string, note: string) => void,
): Promise<void> {
  try {
    await client.api(Job, ns).delete(name, { propagationPolicy: 'Background' });
    event('Normal', 'SuccessfulDelete', `Deleted job ${name}`);
  } catch (err) {
    if (isNotFound(err)) return;
    event('Warning', 'FailedDelete', `Deleted job: ${err instanceof Error ? err.message : String(err)}`);
    throw err;
  }
}
