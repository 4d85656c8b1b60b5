import { describe, expect, it } from 'vitest';
import { b, columnNames, created, fieldsOf, now, write } from '../shared/behaviour-test-support.js';
import { dig } from '../shared/util.js';

type Obj = Record<string, unknown>;

/** A workload with selector `app=web` and a one-container template. */
const workload = (spec: Obj = {}, template: Obj = {}): Obj => ({
  metadata: { name: 'web', namespace: 'default', uid: 'uid-1' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'nginx', image: 'nginx:1.25' }] },
      ...template,
    },
    ...spec,
  },
});

/** The pod template a kubectl user sees after defaulting. */
const defaultedTemplate = {
  metadata: { labels: { app: 'web' }, creationTimestamp: null },
  spec: {
    containers: [
      {
        name: 'nginx',
        image: 'nginx:1.25',
        imagePullPolicy: 'IfNotPresent',
        resources: {},
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
      },
    ],
    dnsPolicy: 'ClusterFirst',
    restartPolicy: 'Always',
    schedulerName: 'default-scheduler',
    securityContext: {},
    terminationGracePeriodSeconds: 30,
  },
};

const selectorMismatch =
  'spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`';

describe('deployments', () => {
  it('defaults like kubectl create deployment shows', () => {
    const { obj, causes } = write('apps/deployments', workload());
    expect(causes).toEqual([]);
    expect(obj.spec).toEqual({
      replicas: 1,
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      selector: { matchLabels: { app: 'web' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: defaultedTemplate,
    });
    expect(obj.status).toEqual({});
  });

  it('keeps Recreate without a rollingUpdate', () => {
    const { obj, causes } = write('apps/deployments', workload({ strategy: { type: 'Recreate' } }));
    expect(causes).toEqual([]);
    expect((obj.spec as Obj).strategy).toEqual({ type: 'Recreate' });
  });

  it.each<[string, Obj, Obj, string[]]>([
    ['selector mismatch', {}, { metadata: { labels: { app: 'other' } } }, [selectorMismatch]],
    [
      'negative replicas',
      { replicas: -1 },
      {},
      ['spec.replicas: Invalid value: -1: must be greater than or equal to 0'],
    ],
    [
      'missing selector',
      { selector: undefined },
      {},
      [
        'spec.selector: Required value',
        // A nil selector selects nothing, so the template cannot match it either.
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
      ],
    ],
    [
      'empty selector',
      { selector: {} },
      {},
      [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
      ],
    ],
    [
      'restartPolicy Never',
      {},
      { spec: { restartPolicy: 'Never', containers: [{ name: 'nginx', image: 'nginx' }] } },
      ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'],
    ],
    [
      'zero surge and unavailable',
      { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } } },
      {},
      [
        'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"0%"}: may not be 0 when `maxSurge` is 0',
      ],
    ],
    [
      'bad percent',
      { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 'lots', maxUnavailable: '150%' } } },
      {},
      [
        "spec.strategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"lots\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
        'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%',
      ],
    ],
    [
      'Recreate with rollingUpdate',
      { strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } } },
      {},
      ["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"],
    ],
    [
      'unknown strategy',
      { strategy: { type: 'BlueGreen' } },
      {},
      [
        'spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:"BlueGreen", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", "RollingUpdate"',
      ],
    ],
    [
      'deadline below minReadySeconds',
      { minReadySeconds: 700 },
      {},
      ['spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds'],
    ],
  ])('validates %s', (_name, spec, template, want) => {
    expect(fieldsOf(write('apps/deployments', workload(spec, template)).causes)).toEqual(want);
  });

  it('forbids changing the selector', () => {
    const old = write('apps/deployments', workload()).obj;
    const next = structuredClone(old);
    (next.spec as Obj).selector = { matchLabels: { app: 'web', tier: 'x' } };
    (((next.spec as Obj).template as Obj).metadata as Obj).labels = { app: 'web', tier: 'x' };
    expect(fieldsOf(write('apps/deployments', next, old).causes)).toEqual([
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "tier":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
    ]);
    const scaled = structuredClone(old);
    (scaled.spec as Obj).replicas = 5;
    expect(write('apps/deployments', scaled, old).causes).toEqual([]);
  });

  it('rejects a status that contradicts itself', () => {
    const obj = write('apps/deployments', workload()).obj;
    obj.status = { replicas: 1, readyReplicas: 2, availableReplicas: 2 };
    expect(fieldsOf(b('apps/deployments').validate!(obj))).toEqual([
      'status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas',
      'status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas',
    ]);
  });

  it('prints NAME READY UP-TO-DATE AVAILABLE AGE + wide', () => {
    expect(columnNames('apps/deployments')).toEqual([
      'Name',
      'Ready',
      'Up-to-date',
      'Available',
      'Age',
      'Containers*',
      'Images*',
      'Selector*',
    ]);
    const obj = write('apps/deployments', workload({ replicas: 3 })).obj;
    (obj.metadata as Obj).creationTimestamp = created(90);
    obj.status = { replicas: 3, readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 };
    expect(b('apps/deployments').row(obj, now)).toEqual([
      'web',
      '2/3',
      3,
      2,
      '90s',
      'nginx',
      'nginx:1.25',
      'app=web',
    ]);
    const fresh = {
      metadata: { name: 'x' },
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'a', image: 'i' },
              { name: 'b', image: 'j' },
            ],
          },
        },
      },
    };
    expect(b('apps/deployments').row(fresh, now)).toEqual(['x', '0/0', 0, 0, '<unknown>', 'a,b', 'i,j', '']);
  });
});

describe('replicasets', () => {
  it('defaults replicas and the template', () => {
    const { obj, causes } = write('apps/replicasets', workload());
    expect(causes).toEqual([]);
    expect(obj.spec).toEqual({
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: defaultedTemplate,
    });
    expect(obj.status).toEqual({ replicas: 0 });
  });

  it.each<[Obj, Obj, string[]]>([
    [{}, { metadata: { labels: { app: 'other' } } }, [selectorMismatch]],
    [
      { selector: {} },
      {},
      [
        // Kubernetes says "deployment" here too.
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
      ],
    ],
    [
      { minReadySeconds: -5 },
      {},
      ['spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0'],
    ],
  ])('validates %j %j', (spec, template, want) => {
    expect(fieldsOf(write('apps/replicasets', workload(spec, template)).causes)).toEqual(want);
  });

  it('prints NAME DESIRED CURRENT READY AGE + wide, and has no field labels of its own', () => {
    expect(columnNames('apps/replicasets')).toEqual([
      'Name',
      'Desired',
      'Current',
      'Ready',
      'Age',
      'Containers*',
      'Images*',
      'Selector*',
    ]);
    const obj = write('apps/replicasets', workload({ replicas: 2 })).obj;
    (obj.metadata as Obj).creationTimestamp = created(4000);
    obj.status = { replicas: 2, readyReplicas: 1 };
    expect(b('apps/replicasets').row(obj, now)).toEqual([
      'web',
      2,
      2,
      1,
      '66m',
      'nginx',
      'nginx:1.25',
      'app=web',
    ]);
    // apps/v1 registers no field label conversion: kube-apiserver refuses `status.replicas`.
    expect(b('apps/replicasets').fieldSelectors).toBeUndefined();
  });
});

describe('statefulsets', () => {
  const sts = (spec: Obj = {}): Obj =>
    workload({
      serviceName: 'web',
      volumeClaimTemplates: [
        {
          metadata: { name: 'www' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
      ...spec,
    });

  it('defaults policies, partition, retention and claim templates', () => {
    const { obj, causes } = write('apps/statefulsets', sts());
    expect(causes).toEqual([]);
    expect(obj.spec).toEqual({
      serviceName: 'web',
      replicas: 1,
      revisionHistoryLimit: 10,
      podManagementPolicy: 'OrderedReady',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      selector: { matchLabels: { app: 'web' } },
      template: defaultedTemplate,
      volumeClaimTemplates: [
        {
          metadata: { name: 'www', creationTimestamp: null },
          spec: {
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: '1Gi' } },
            volumeMode: 'Filesystem',
          },
          status: { phase: 'Pending' },
        },
      ],
    });
    expect(obj.status).toEqual({ replicas: 0, availableReplicas: 0 });
  });

  it('drops a new maxUnavailable (MaxUnavailableStatefulSet is off in 1.32) but keeps one in use', () => {
    const withMax = (maxUnavailable: unknown) =>
      sts({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1, maxUnavailable } } });
    const fresh = withMax(0);
    b('apps/statefulsets').prepare?.(fresh);
    expect(dig(fresh, 'spec', 'updateStrategy', 'rollingUpdate')).toEqual({ partition: 1 });
    expect(write('apps/statefulsets', fresh).causes).toEqual([]);
    const updated = withMax(2);
    b('apps/statefulsets').prepare?.(updated, fresh);
    expect(dig(updated, 'spec', 'updateStrategy', 'rollingUpdate')).toEqual({ partition: 1 });
    const old = write('apps/statefulsets', withMax(1)).obj;
    const kept = withMax(0);
    b('apps/statefulsets').prepare?.(kept, old);
    expect(dig(kept, 'spec', 'updateStrategy', 'rollingUpdate')).toEqual({ partition: 1, maxUnavailable: 0 });
    expect(fieldsOf(write('apps/statefulsets', kept, old).causes)).toEqual([
      'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: cannot be 0',
    ]);
  });

  it('keeps OnDelete without rollingUpdate', () => {
    const { obj } = write('apps/statefulsets', sts({ updateStrategy: { type: 'OnDelete' } }));
    expect((obj.spec as Obj).updateStrategy).toEqual({ type: 'OnDelete' });
  });

  it.each<[Obj, string[]]>([
    [
      { podManagementPolicy: 'Random' },
      ["spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'"],
    ],
    [
      { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: -1, maxUnavailable: 0 } } },
      [
        'spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0',
        'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: cannot be 0',
      ],
    ],
    [
      { persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Keep', whenScaled: 'Delete' } },
      [
        'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete"',
      ],
    ],
    [
      {
        template: {
          metadata: { labels: { app: 'other' } },
          spec: { containers: [{ name: 'nginx', image: 'x' }] },
        },
      },
      [selectorMismatch],
    ],
    [
      {
        selector: {},
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'nginx', image: 'x' }] },
        },
      },
      [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset',
      ],
    ],
  ])('validates %j', (spec, want) => {
    expect(fieldsOf(write('apps/statefulsets', sts(spec)).causes)).toEqual(want);
  });

  it('allows changing replicas and the template, forbids the rest', () => {
    const old = write('apps/statefulsets', sts()).obj;
    const scaled = structuredClone(old);
    (scaled.spec as Obj).replicas = 3;
    (((scaled.spec as Obj).template as Obj).spec as Obj).containers = [
      { name: 'nginx', image: 'nginx:1.26' },
    ];
    expect(write('apps/statefulsets', scaled, old).causes).toEqual([]);
    const renamed = structuredClone(old);
    (renamed.spec as Obj).serviceName = 'other';
    expect(fieldsOf(write('apps/statefulsets', renamed, old).causes)).toEqual([
      "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    ]);
  });

  it('prints NAME READY AGE + wide', () => {
    expect(columnNames('apps/statefulsets')).toEqual(['Name', 'Ready', 'Age', 'Containers*', 'Images*']);
    const obj = write('apps/statefulsets', sts({ replicas: 3 })).obj;
    (obj.metadata as Obj).creationTimestamp = created(200000);
    obj.status = { replicas: 3, readyReplicas: 1 };
    expect(b('apps/statefulsets').row(obj, now)).toEqual(['web', '1/3', '2d7h', 'nginx', 'nginx:1.25']);
  });
});

describe('daemonsets', () => {
  it('defaults the update strategy and history', () => {
    const { obj, causes } = write('apps/daemonsets', workload());
    expect(causes).toEqual([]);
    expect(obj.spec).toEqual({
      revisionHistoryLimit: 10,
      selector: { matchLabels: { app: 'web' } },
      template: defaultedTemplate,
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
    });
    expect(obj.status).toEqual({
      currentNumberScheduled: 0,
      desiredNumberScheduled: 0,
      numberMisscheduled: 0,
      numberReady: 0,
    });
  });

  it.each<[Obj, Obj, string[]]>([
    [{}, { metadata: { labels: { app: 'other' } } }, [selectorMismatch]],
    [
      { selector: {} },
      {},
      [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset',
      ],
    ],
    [
      { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } } },
      {},
      [
        'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero',
      ],
    ],
    [
      { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } } },
      {},
      ['spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0'],
    ],
    [
      { updateStrategy: { type: 'Sometimes' } },
      {},
      [
        'spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Sometimes", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: "RollingUpdate", "OnDelete"',
      ],
    ],
    [
      {},
      { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'nginx', image: 'x' }] } },
      ['spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'],
    ],
  ])('validates %j %j', (spec, template, want) => {
    expect(fieldsOf(write('apps/daemonsets', workload(spec, template)).causes)).toEqual(want);
  });

  it('prints the scheduling counts and node selector', () => {
    expect(columnNames('apps/daemonsets')).toEqual([
      'Name',
      'Desired',
      'Current',
      'Ready',
      'Up-to-date',
      'Available',
      'Node Selector',
      'Age',
      'Containers*',
      'Images*',
      'Selector*',
    ]);
    const obj = write(
      'apps/daemonsets',
      workload(
        {},
        {
          spec: {
            nodeSelector: { 'kubernetes.io/os': 'linux' },
            containers: [{ name: 'nginx', image: 'nginx:1.25' }],
          },
        },
      ),
    ).obj;
    (obj.metadata as Obj).creationTimestamp = created(30);
    obj.status = {
      desiredNumberScheduled: 3,
      currentNumberScheduled: 3,
      numberReady: 2,
      updatedNumberScheduled: 3,
      numberAvailable: 2,
    };
    expect(b('apps/daemonsets').row(obj, now)).toEqual([
      'web',
      3,
      3,
      2,
      3,
      2,
      'kubernetes.io/os=linux',
      '30s',
      'nginx',
      'nginx:1.25',
      'app=web',
    ]);
  });
});
