/**
 * The kinds beyond a minimal cluster's, through kubectl: CronJobs, HorizontalPodAutoscalers (v2
 * and v1), ReplicationControllers, PodTemplates, PersistentVolumes, ResourceQuotas, LimitRanges,
 * ComponentStatuses. Per kind: defaults on create, an invalid object refused with Kubernetes'
 * message, and the columns of `kubectl get`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import { kindHelpers } from './support.js';

let env: KubectlEnv;
beforeAll(async () => {
  env = await startKubectlEnv();
});
afterAll(async () => {
  await env?.stop();
});

const { create, refused, getJson, table } = kindHelpers(() => env);

const podTemplate = (labels: Record<string, string>, restartPolicy?: string) => ({
  metadata: { labels },
  spec: { ...(restartPolicy && { restartPolicy }), containers: [{ name: 'c', image: 'busybox' }] },
});

describe('batch/v1 CronJob', () => {
  const cronjob = (name: string, schedule: string, extra: object = {}) => ({
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: 'default' },
    spec: {
      schedule,
      jobTemplate: { spec: { template: podTemplate({ app: name }, 'OnFailure') } },
      ...extra,
    },
  });

  it('is created with its defaults and listed with the columns of a 1.32 server', async () => {
    expect(await create(cronjob('tick', '*/5 * * * *'))).toBe('cronjob.batch/tick created\n');
    const cj = await getJson('cronjob', 'tick');
    expect(cj.spec).toMatchObject({
      concurrencyPolicy: 'Allow',
      suspend: false,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
    });
    expect(cj.spec.jobTemplate.spec.template.spec.terminationGracePeriodSeconds).toBe(30);
    expect(cj.metadata.generation).toBe(1);
    const rows = await table('cronjobs');
    expect(rows[0]).toBe('NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE');
    expect(rows[1]).toMatch(/^tick \*\/5 \* \* \* \* <none> False 0 <none> \d+s$/);
    const wide = await table('cronjobs', '-o', 'wide');
    expect(wide[0]).toBe(
      'NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE CONTAINERS IMAGES SELECTOR',
    );
  });

  it('refuses a schedule cron cannot parse, with robfig/cron’s error', async () => {
    expect(await refused(cronjob('bad', 'every minute'))).toBe(
      'The CronJob "bad" is invalid: spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: [every minute]',
    );
    expect(await refused(cronjob('bad', '61 * * * *'))).toBe(
      'The CronJob "bad" is invalid: spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61',
    );
    expect(await refused(cronjob('bad', '@sometimes'))).toBe(
      'The CronJob "bad" is invalid: spec.schedule: Invalid value: "@sometimes": unrecognized descriptor: @sometimes',
    );
    expect(await refused(cronjob('bad', '@hourly', { concurrencyPolicy: 'Sometimes' }))).toBe(
      'The CronJob "bad" is invalid: spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
    );
    expect(await refused(cronjob('bad', '@hourly', { timeZone: 'Mars/Olympus' }))).toBe(
      'The CronJob "bad" is invalid: spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
    );
  });

  it('is explained from its 1.32 schema', async () => {
    const out = await env.ok(['explain', 'cronjob.spec']);
    expect(out).toContain('GROUP:      batch\nKIND:       CronJob\nVERSION:    v1\n');
    expect(out).toContain('FIELD: spec <CronJobSpec>');
    expect(out).toContain('  schedule\t<string> -required-\n');
    expect(out).toContain('  timeZone\t<string>\n');
  });

  it('kubectl create cronjob (protobuf) works', async () => {
    expect(await env.ok(['create', 'cronjob', 'typed', '--image=busybox', '--schedule=0 * * * *'])).toBe(
      'cronjob.batch/typed created\n',
    );
    expect((await getJson('cronjob', 'typed')).spec.jobTemplate.spec.template.spec.restartPolicy).toBe(
      'OnFailure',
    );
  });
});

describe('batch/v1 Job', () => {
  const generated = [
    'batch.kubernetes.io/controller-uid',
    'batch.kubernetes.io/job-name',
    'controller-uid',
    'job-name',
  ];
  const managed = async (name: string) => {
    const job = JSON.parse(
      await env.ok(['get', 'job', name, '-n', 'default', '-o', 'json', '--show-managed-fields']),
    );
    return { job, entries: job.metadata.managedFields as { manager: string; fieldsV1: any }[] };
  };

  it('leaves the generated selector and labels to no manager, as kube fills them after the field manager', async () => {
    await env.ok(['create', 'job', 'pi', '-n', 'default', '--image=perl:5.34.0']);
    const { job, entries } = await managed('pi');
    // The object has them all …
    const uid = job.metadata.uid;
    expect(job.spec.selector).toEqual({ matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
    expect(Object.keys(job.spec.template.metadata.labels).sort()).toEqual(generated);
    expect(Object.keys(job.metadata.labels).sort()).toEqual(generated);
    // … but the writer owns only what it sent and what decoding defaulted.
    const mine = entries.find((e) => e.manager === 'kubectl-create')!;
    expect(mine.fieldsV1['f:spec']['f:selector']).toBeUndefined();
    expect(mine.fieldsV1['f:spec']['f:template']['f:metadata']).toBeUndefined();
    expect(mine.fieldsV1['f:metadata']).toBeUndefined();
    expect(mine.fieldsV1['f:spec']['f:backoffLimit']).toEqual({});
  });

  it('a Job without labels takes its template labels, and its writer owns only the ones it wrote', async () => {
    await create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'labelled', namespace: 'default' },
      spec: { template: podTemplate({ app: 'pi' }, 'Never') },
    });
    const { job, entries } = await managed('labelled');
    expect(Object.keys(job.metadata.labels).sort()).toEqual(['app', ...generated]);
    const mine = entries.find((e) => e.manager === 'kubectl-create')!;
    expect(mine.fieldsV1['f:metadata']['f:labels']).toEqual({ '.': {}, 'f:app': {} });
    expect(mine.fieldsV1['f:spec']['f:template']['f:metadata']).toEqual({
      'f:labels': { '.': {}, 'f:app': {} },
    });
    expect(mine.fieldsV1['f:spec']['f:selector']).toBeUndefined();
  });
});

describe('autoscaling HorizontalPodAutoscaler', () => {
  it('v2 is created with its defaults and printed with its targets', async () => {
    await create({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        maxReplicas: 5,
        behavior: { scaleDown: { stabilizationWindowSeconds: 60 } },
      },
    });
    const hpa = await getJson('horizontalpodautoscalers.v2.autoscaling', 'web');
    expect(hpa.spec.minReplicas).toBe(1);
    expect(hpa.spec.metrics).toEqual([
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
      },
    ]);
    expect(hpa.spec.behavior).toEqual({
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      },
      scaleDown: {
        stabilizationWindowSeconds: 60,
        selectPolicy: 'Max',
        policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
      },
    });
    const rows = await table('hpa');
    expect(rows[0]).toBe('NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE');
    expect(rows[1]).toMatch(/^web Deployment\/web cpu: <unknown>\/80% 1 5 0 \d+s$/);
  });

  it('is read through autoscaling/v1 with the CPU target, and written through it', async () => {
    const v1 = await getJson('horizontalpodautoscalers.v1.autoscaling', 'web');
    expect(v1.apiVersion).toBe('autoscaling/v1');
    expect(v1.spec).toEqual({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 1,
      maxReplicas: 5,
      targetCPUUtilizationPercentage: 80,
    });
    await env.ok(['create', 'deployment', 'api', '--image=busybox']);
    expect(await env.ok(['autoscale', 'deployment', 'api', '--max=4', '--cpu-percent=50'])).toBe(
      'horizontalpodautoscaler.autoscaling/api autoscaled\n',
    );
    const v2 = await getJson('horizontalpodautoscalers.v2.autoscaling', 'api');
    expect(v2.spec.metrics[0].resource.target).toEqual({ type: 'Utilization', averageUtilization: 50 });
  });

  it('refuses maxReplicas below minReplicas', async () => {
    expect(
      await refused({
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'bad', namespace: 'default' },
        spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, minReplicas: 3, maxReplicas: 2 },
      }),
    ).toBe(
      'The HorizontalPodAutoscaler "bad" is invalid: spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`',
    );
  });
});

describe('core/v1 ReplicationController and PodTemplate', () => {
  it('an RC takes its selector and labels from the template, and one replica', async () => {
    await create({
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'rc1', namespace: 'default' },
      spec: { template: podTemplate({ app: 'rc1' }) },
    });
    const rc = await getJson('rc', 'rc1');
    expect(rc.spec.selector).toEqual({ app: 'rc1' });
    expect(rc.metadata.labels).toEqual({ app: 'rc1' });
    expect(rc.spec.replicas).toBe(1);
    expect(rc.spec.template.spec.restartPolicy).toBe('Always');
    const rows = await table('rc', '-o', 'wide');
    expect(rows[0]).toBe('NAME DESIRED CURRENT READY AGE CONTAINERS IMAGES SELECTOR');
    expect(rows[1]).toMatch(/^rc1 1 0 0 \d+s c busybox app=rc1$/);
    expect(await env.ok(['scale', 'rc', 'rc1', '--replicas=3'])).toBe('replicationcontroller/rc1 scaled\n');
    expect((await getJson('rc', 'rc1')).spec.replicas).toBe(3);
  });

  it('refuses an RC whose selector does not match its template', async () => {
    expect(
      await refused({
        apiVersion: 'v1',
        kind: 'ReplicationController',
        metadata: { name: 'bad', namespace: 'default' },
        spec: { selector: { app: 'x' }, template: podTemplate({ app: 'y' }) },
      }),
    ).toBe(
      'The ReplicationController "bad" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"y"}: `selector` does not match template `labels`',
    );
  });

  it('a PodTemplate gets pod defaults and prints its containers', async () => {
    await create({
      apiVersion: 'v1',
      kind: 'PodTemplate',
      metadata: { name: 'pt', namespace: 'default' },
      template: podTemplate({ tier: 'web' }),
    });
    const pt = await getJson('podtemplate', 'pt');
    expect(pt.template.spec.dnsPolicy).toBe('ClusterFirst');
    expect(await table('podtemplates')).toEqual([
      'NAME CONTAINERS IMAGES POD LABELS',
      'pt c busybox tier=web',
    ]);
  });
});

describe('core/v1 PersistentVolume, ResourceQuota, LimitRange, ComponentStatus', () => {
  it('a PV defaults to Retain, Filesystem and Pending', async () => {
    await create({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv1' },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' } },
    });
    const pv = await getJson('pv', 'pv1');
    expect(pv.spec.persistentVolumeReclaimPolicy).toBe('Retain');
    expect(pv.spec.volumeMode).toBe('Filesystem');
    expect(pv.status.phase).toBe('Pending');
    const rows = await table('pv');
    expect(rows[0]).toBe(
      'NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS REASON AGE',
    );
    expect(rows[1]).toMatch(/^pv1 1Gi RWO Retain Pending <unset> \d+s$/);
  });

  it('refuses a PV without capacity or access modes', async () => {
    expect(
      await refused({
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'bad' },
        spec: { hostPath: { path: '/x' } },
      }),
    ).toBe(
      // As kube-apiserver answers it, the missing capacity reported twice.
      [
        'The PersistentVolume "bad" is invalid: ',
        '* spec.accessModes: Required value',
        '* spec.capacity: Required value',
        '* spec.capacity: Unsupported value: core.ResourceList(nil): supported values: "storage"',
      ].join('\n'),
    );
  });

  it('a ResourceQuota prints requests and limits, and refuses names quota does not know', async () => {
    await create({
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'q', namespace: 'default' },
      spec: { hard: { pods: '10', 'limits.cpu': '2', 'requests.memory': '1Gi' } },
    });
    const rows = await table('quota');
    expect(rows[0]).toBe('NAME AGE REQUEST LIMIT');
    expect(rows[1]).toMatch(/^q \d+s pods: 0\/10, requests.memory: 0\/1Gi limits.cpu: 0\/2$/);
    expect(
      await refused({
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { name: 'bad', namespace: 'default' },
        spec: { hard: { widgets: '1' } },
      }),
    ).toBe(
      // kubectl's words against kube-apiserver 1.24 (unchanged in 1.32's validation).
      'The ResourceQuota "bad" is invalid: \n' +
        '* spec.hard[widgets]: Invalid value: "widgets": must be a standard resource type or fully qualified\n' +
        '* spec.hard[widgets]: Invalid value: "widgets": must be a standard resource for quota',
    );
  });

  it('a LimitRange defaults container requests from limits and checks min ≤ max', async () => {
    await create({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'lr', namespace: 'default' },
      spec: { limits: [{ type: 'Container', max: { cpu: '2' }, min: { memory: '64Mi' } }] },
    });
    const lr = await getJson('limits', 'lr');
    expect(lr.spec.limits[0].default).toEqual({ cpu: '2' });
    expect(lr.spec.limits[0].defaultRequest).toEqual({ cpu: '2', memory: '64Mi' });
    expect((await table('limitranges'))[0]).toBe('NAME CREATED AT');
    expect(
      await refused({
        apiVersion: 'v1',
        kind: 'LimitRange',
        metadata: { name: 'bad', namespace: 'default' },
        spec: { limits: [{ type: 'Container', max: { cpu: '1' }, min: { cpu: '2' } }] },
      }),
    ).toBe(
      // The default limit and request come from max (1), so they fall below min too, as in
      // Kubernetes; the values are Go's %#v of a resource.Quantity (the default's line shows min's,
      // as kube's does), recorded from a real kube-apiserver.
      [
        'The LimitRange "bad" is invalid: ',
        `* spec.limits[0].min[cpu]: Invalid value: resource.Quantity{i:resource.int64Amount{value:2, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"2", Format:"DecimalSI"}: min value 2 is greater than max value 1`,
        `* spec.limits[0].defaultRequest[cpu]: Invalid value: resource.Quantity{i:resource.int64Amount{value:1, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"1", Format:"DecimalSI"}: min value 2 is greater than default request value 1`,
        `* spec.limits[0].default[cpu]: Invalid value: resource.Quantity{i:resource.int64Amount{value:2, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"2", Format:"DecimalSI"}: min value 2 is greater than default value 1`,
      ].join('\n'),
    );
  });

  it('componentstatuses lists the control plane as healthy', async () => {
    const r = await env.run(['get', 'componentstatuses']);
    expect(r.code).toBe(0);
    expect(
      r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.replace(/\s+/g, ' ').trim()),
    ).toEqual([
      'NAME STATUS MESSAGE ERROR',
      'scheduler Healthy ok',
      'controller-manager Healthy ok',
      'etcd-0 Healthy ok',
    ]);
  });
});
