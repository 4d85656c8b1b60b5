import { Client, Job, Pod } from 'kubeloop/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let k: KubectlEnv;
let client: Client;

beforeAll(async () => {
  k = await startKubectlEnv({ nodes: { count: 2 } });
  client = new Client(k.cp.clientConfig);
});
afterAll(async () => {
  await client.close();
  await k.stop();
});

const job = (name: string, spec: Record<string, unknown>, simulate?: string): Job => ({
  metadata: { name },
  spec: {
    ...spec,
    template: {
      ...(simulate && { metadata: { annotations: { 'kubeloop.dev/simulate': simulate } } }),
      spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] },
    },
  },
});

const podsOf = async (name: string) =>
  (await client.api(Pod, 'default').list({ labelSelector: { 'batch.kubernetes.io/job-name': name } })).items;

describe('Job controller', () => {
  it('runs pods to the wanted completions, at most parallelism at a time (kubectl wait)', async () => {
    const jobs = client.api(Job, 'default');
    const created = await jobs.create(job('batch', { completions: 3, parallelism: 2 }, 'succeed'));
    const wait = await k.run(['wait', '--for=condition=complete', 'job/batch', '--timeout=30s']);
    expect(wait.stdout).toContain('job.batch/batch condition met');
    const done = await jobs.get('batch');
    expect(done.status).toMatchObject({
      succeeded: 3,
      ready: 0,
      terminating: 0,
      uncountedTerminatedPods: {},
    });
    expect(done.status?.active).toBeUndefined();
    expect(done.status?.failed).toBeUndefined();
    expect(done.status?.startTime).toMatch(/Z$/);
    expect(done.status?.completionTime).toMatch(/Z$/);
    expect(done.status?.conditions?.map((c) => [c.type, c.status, c.reason, c.message])).toEqual([
      ['SuccessCriteriaMet', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods'],
      ['Complete', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods'],
    ]);
    const pods = await podsOf('batch');
    expect(pods).toHaveLength(3);
    for (const p of pods) {
      expect(p.status?.phase).toBe('Succeeded');
      expect(p.metadata?.name).toMatch(/^batch-[a-z0-9]{5}$/);
      // Counted, so released.
      expect(p.metadata?.finalizers ?? []).toEqual([]);
      expect(p.metadata?.ownerReferences).toEqual([
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          name: 'batch',
          uid: created.metadata?.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(p.metadata?.labels?.['batch.kubernetes.io/controller-uid']).toBe(created.metadata?.uid);
    }
    const out = await k.ok(['get', 'job', 'batch']);
    expect(out).toMatch(/batch\s+Complete\s+3\/3/);
  });

  it('fails a Job whose pods fail more than backoffLimit times', async () => {
    const jobs = client.api(Job, 'default');
    await jobs.create(job('doomed', { backoffLimit: 1 }, 'fail'));
    const wait = await k.run(['wait', '--for=condition=failed', 'job/doomed', '--timeout=30s']);
    expect(wait.stdout).toContain('condition met');
    const s = (await jobs.get('doomed')).status;
    expect(s).toMatchObject({ failed: 2, ready: 0, terminating: 0 });
    expect(s?.succeeded).toBeUndefined();
    expect(s?.completionTime).toBeUndefined();
    expect(s?.conditions?.map((c) => [c.type, c.reason, c.message])).toEqual([
      ['FailureTarget', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'],
      ['Failed', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'],
    ]);
    const pods = await podsOf('doomed');
    expect(pods.map((p) => p.status?.phase)).toEqual(['Failed', 'Failed']);
  });

  it('reports active and ready pods, and stops them at activeDeadlineSeconds', async () => {
    const jobs = client.api(Job, 'default');
    await jobs.create(job('forever', { parallelism: 2, completions: 4, activeDeadlineSeconds: 600 }));
    const running = await eventually(async () => {
      const s = (await jobs.get('forever')).status;
      return s?.active === 2 && s.ready === 2 ? s : undefined;
    });
    expect(running.conditions).toBeUndefined();
    // The deadline may change while the Job runs; the smallest one passes within a second of its start.
    await k.ok(['patch', 'job', 'forever', '--type=merge', '-p', '{"spec":{"activeDeadlineSeconds":1}}']);
    await k.ok(['wait', '--for=condition=failed', 'job/forever', '--timeout=30s']);
    const s = (await jobs.get('forever')).status;
    expect(s?.conditions?.map((c) => [c.type, c.reason])).toEqual([
      ['FailureTarget', 'DeadlineExceeded'],
      ['Failed', 'DeadlineExceeded'],
    ]);
    expect(s).toMatchObject({ failed: 2, ready: 0, terminating: 0 });
    await eventually(async () => (await podsOf('forever')).length === 0);
  });

  it('suspends and resumes a Job (kubectl patch)', async () => {
    const jobs = client.api(Job, 'default');
    await jobs.create(job('paused', { parallelism: 2, completions: 2, suspend: true }));
    const s = await eventually(async () => {
      const st = (await jobs.get('paused')).status;
      return st?.conditions?.length ? st : undefined;
    });
    expect(s.conditions?.map((c) => [c.type, c.status, c.reason, c.message])).toEqual([
      ['Suspended', 'True', 'JobSuspended', 'Job suspended'],
    ]);
    expect(s.startTime).toBeUndefined();
    expect(await podsOf('paused')).toHaveLength(0);

    await k.ok(['patch', 'job', 'paused', '--type=merge', '-p', '{"spec":{"suspend":false}}']);
    const running = await eventually(async () => {
      const st = (await jobs.get('paused')).status;
      return st?.ready === 2 ? st : undefined;
    });
    expect(running.startTime).toMatch(/Z$/);
    expect(running.conditions?.map((c) => [c.type, c.status, c.reason, c.message])).toEqual([
      ['Suspended', 'False', 'JobResumed', 'Job resumed'],
    ]);

    await k.ok(['patch', 'job', 'paused', '--type=merge', '-p', '{"spec":{"suspend":true}}']);
    await eventually(async () => {
      const st = (await jobs.get('paused')).status;
      return st?.active === undefined && st?.conditions?.[0]?.status === 'True';
    });
    await eventually(async () => (await podsOf('paused')).length === 0);
  });

  it('releases the pods of a deleted Job, which the garbage collector removes', async () => {
    const jobs = client.api(Job, 'default');
    await jobs.create(job('gone', { parallelism: 2, completions: 2 }));
    await eventually(async () => (await jobs.get('gone')).status?.ready === 2);
    await k.ok(['delete', 'job', 'gone']);
    await eventually(async () => (await podsOf('gone')).length === 0);
  });
});
