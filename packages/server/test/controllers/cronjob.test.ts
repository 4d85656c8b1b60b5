import { Client, CronJob, Job } from 'kubeloop/client';
import { FakeClock } from 'kubeloop/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let k: KubectlEnv;
let client: Client;
// The controller's wall clock: each test moves it past a scheduled minute instead of waiting.
const clock = new FakeClock(Date.now());
const MINUTE = 60_000;

beforeAll(async () => {
  k = await startKubectlEnv({ nodes: { count: 1 }, clock });
  client = new Client(k.cp.clientConfig);
});
afterAll(async () => {
  await client.close();
  await k.stop();
});

const cronJob = (
  name: string,
  spec: Partial<NonNullable<CronJob['spec']>> = {},
  outcome?: 'succeed',
): CronJob => ({
  metadata: { name },
  spec: {
    schedule: '* * * * *',
    jobTemplate: {
      metadata: { labels: { cron: name } },
      spec: {
        template: {
          metadata: outcome ? { annotations: { 'kubeloop.dev/simulate': outcome } } : {},
          spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] },
        },
      },
    },
    ...spec,
  },
});

const jobsOf = async (name: string) =>
  (await client.api(Job, 'default').list({ labelSelector: { cron: name } })).items.filter(
    (j) => !j.metadata?.deletionTimestamp,
  );
const reasons = async (name: string) =>
  k.ok([
    'get',
    'events',
    '--field-selector',
    `involvedObject.kind=CronJob,involvedObject.name=${name}`,
    '-o',
    'jsonpath={range .items[*]}{.reason}: {.message} ({.source.component}{.reportingComponent}){"\\n"}{end}',
  ]);
/** The name kube gives the Job of the minute the clock is in. */
const jobNameNow = (name: string) => `${name}-${Math.floor(clock.now() / MINUTE)}`;

describe('CronJob controller', () => {
  it('creates the Job of a scheduled minute, tracks it active, then records its success', async () => {
    const cjs = client.api(CronJob, 'default');
    const cj = await cjs.create(cronJob('tick', {}, 'succeed'));
    clock.advance(MINUTE + 1000);
    const [job] = await eventually(async () => {
      const jobs = await jobsOf('tick');
      return jobs.length === 1 ? jobs : undefined;
    });
    expect(job?.metadata?.name).toBe(jobNameNow('tick'));
    expect(job?.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        name: 'tick',
        uid: cj.metadata?.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    const scheduled = Math.floor(clock.now() / MINUTE) * MINUTE;
    expect(job?.metadata?.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp']).toBe(
      new Date(scheduled).toISOString().replace(/\.000Z$/, 'Z'),
    );
    // The pods succeed: the Job completes, leaves the active list, and is the last success.
    const status = await eventually(async () => {
      const s = (await cjs.get('tick')).status;
      return s?.lastSuccessfulTime && !s.active ? s : undefined;
    });
    expect(status.lastScheduleTime).toBe(new Date(scheduled).toISOString().replace(/\.000Z$/, 'Z'));
    const events = await eventually(async () => {
      const e = await reasons('tick');
      return e.includes('SawCompletedJob') ? e : undefined;
    });
    expect(events).toContain(`SuccessfulCreate: Created job ${job?.metadata?.name} (cronjob-controller)`);
    expect(events).toContain(
      `SawCompletedJob: Saw completed job: ${job?.metadata?.name}, condition: Complete`,
    );
    // kubectl shows the schedule and last schedule.
    expect(await k.ok(['get', 'cronjob', 'tick', '-o', 'jsonpath={.status.lastScheduleTime}'])).toBe(
      status.lastScheduleTime,
    );
    await cjs.delete('tick', { propagationPolicy: 'Background' });
  });

  it('lists a running Job as active, and with Forbid starts no other while it runs', async () => {
    const cjs = client.api(CronJob, 'default');
    await cjs.create(cronJob('forbid', { concurrencyPolicy: 'Forbid' }));
    clock.advance(MINUTE + 1000);
    const first = await eventually(async () => {
      const s = (await cjs.get('forbid')).status;
      return s?.active?.length === 1 ? s.active[0] : undefined;
    });
    expect(first).toMatchObject({
      kind: 'Job',
      apiVersion: 'batch/v1',
      namespace: 'default',
      name: jobNameNow('forbid'),
    });
    clock.advance(MINUTE);
    await eventually(async () => (await reasons('forbid')).includes('JobAlreadyActive'));
    expect((await jobsOf('forbid')).map((j) => j.metadata?.name)).toEqual([first.name]);
    await cjs.delete('forbid', { propagationPolicy: 'Background' });
  });

  it('with Replace deletes the running Job for the next one', async () => {
    const cjs = client.api(CronJob, 'default');
    await cjs.create(cronJob('replace', { concurrencyPolicy: 'Replace' }));
    clock.advance(MINUTE + 1000);
    const first = await eventually(async () => (await cjs.get('replace')).status?.active?.[0]);
    clock.advance(MINUTE);
    const second = await eventually(async () => {
      const a = (await cjs.get('replace')).status?.active;
      return a?.length === 1 && a[0]?.name !== first.name ? a[0] : undefined;
    });
    expect(second.name).toBe(jobNameNow('replace'));
    await eventually(async () => (await jobsOf('replace')).every((j) => j.metadata?.name === second.name));
    expect(await reasons('replace')).toContain(`SuccessfulDelete: Deleted job ${first.name}`);
    await cjs.delete('replace', { propagationPolicy: 'Background' });
  });

  it('keeps successfulJobsHistoryLimit finished Jobs, and none while suspended', async () => {
    const cjs = client.api(CronJob, 'default');
    await cjs.create(cronJob('history', { successfulJobsHistoryLimit: 1 }, 'succeed'));
    clock.advance(MINUTE + 1000);
    const firstName = jobNameNow('history');
    await eventually(async () => (await cjs.get('history')).status?.lastSuccessfulTime);
    clock.advance(MINUTE);
    const secondName = jobNameNow('history');
    await eventually(async () => {
      const names = (await jobsOf('history')).map((j) => j.metadata?.name);
      return names.length === 1 && names[0] === secondName;
    });
    expect(await reasons('history')).toContain(`SuccessfulDelete: Deleted job ${firstName}`);

    await cjs.patch('history', { spec: { suspend: true } });
    await eventually(async () => (await cjs.get('history')).spec?.suspend === true);
    clock.advance(2 * MINUTE);
    // Nothing to wait for but time: a later resume is the proof that nothing ran in between.
    await cjs.patch('history', { spec: { suspend: false } });
    clock.advance(MINUTE);
    const names = await eventually(async () => {
      const n = (await jobsOf('history')).map((j) => j.metadata?.name);
      return n.length === 1 && n[0] !== secondName ? n : undefined;
    });
    expect(names).toEqual([jobNameNow('history')]);
    await cjs.delete('history', { propagationPolicy: 'Background' });
  });

  it('stamps the scheduled time in the time zone of the CronJob', async () => {
    const cjs = client.api(CronJob, 'default');
    await cjs.create(cronJob('tokyo', { timeZone: 'Asia/Tokyo' }));
    clock.advance(MINUTE + 1000);
    const [job] = await eventually(async () => {
      const jobs = await jobsOf('tokyo');
      return jobs.length === 1 ? jobs : undefined;
    });
    expect(job?.metadata?.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp']).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:00\+09:00$/,
    );
    await cjs.delete('tokyo', { propagationPolicy: 'Background' });
  });

  it('kubectl create job --from=cronjob/… makes a Job of its template', async () => {
    await client.api(CronJob, 'default').create(cronJob('manual', { suspend: true }));
    await k.ok(['create', 'job', 'by-hand', '--from=cronjob/manual']);
    const job = await client.api(Job, 'default').get('by-hand');
    expect(job.metadata?.annotations?.['cronjob.kubernetes.io/instantiate']).toBe('manual');
    expect(job.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'CronJob', name: 'manual' });
    expect(job.spec?.template?.spec?.containers?.[0]?.image).toBe('busybox');
    await eventually(async () => (await reasons('manual')).includes('UnexpectedJob'));
  });
});
