import { describe, expect, it } from 'vitest';
import { builtinBehaviours } from '../builtin-kinds.js';
import type { KindBehaviour } from '../shared/behaviour.js';

type Obj = Record<string, unknown>;

const jobs = builtinBehaviours['batch/jobs'] as KindBehaviour;
const now = new Date('2024-05-01T12:00:00Z');
const created = (ago: number) => new Date(now.getTime() - ago * 1000).toISOString().replace('.000Z', 'Z');

function write(obj: Obj, old?: Obj): { obj: Obj; causes: { field?: string; message?: string }[] } {
  const copy = structuredClone(obj);
  // As the registry runs them: defaults (decoding), then the strategy's prepare.
  jobs.defaults?.(copy);
  jobs.prepare?.(copy, old);
  return { obj: copy, causes: jobs.validate?.(copy, old) ?? [] };
}
const fieldsOf = (causes: { field?: string; message?: string }[]) =>
  causes.map((c) => `${c.field}: ${c.message}`);

const UID = '863452e6-270d-420e-9b94-53a54146c223';
const job = (spec: Obj = {}, podSpec: Obj = {}): Obj => ({
  metadata: { name: 'pi', namespace: 'default', uid: UID },
  spec: {
    template: {
      spec: { restartPolicy: 'Never', containers: [{ name: 'pi', image: 'perl:5.34.0' }], ...podSpec },
    },
    ...spec,
  },
});
const generated = {
  'batch.kubernetes.io/controller-uid': UID,
  'batch.kubernetes.io/job-name': 'pi',
  'controller-uid': UID,
  'job-name': 'pi',
};

describe('jobs', () => {
  it('defaults like the docs example shows, with the generated selector and labels', () => {
    const { obj, causes } = write(job());
    expect(causes).toEqual([]);
    expect(obj).toEqual({
      metadata: { name: 'pi', namespace: 'default', uid: UID, labels: generated },
      spec: {
        backoffLimit: 6,
        completionMode: 'NonIndexed',
        completions: 1,
        manualSelector: false,
        parallelism: 1,
        podReplacementPolicy: 'TerminatingOrFailed',
        selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': UID } },
        suspend: false,
        template: {
          metadata: { creationTimestamp: null, labels: generated },
          spec: {
            containers: [
              {
                name: 'pi',
                image: 'perl:5.34.0',
                imagePullPolicy: 'IfNotPresent',
                resources: {},
                terminationMessagePath: '/dev/termination-log',
                terminationMessagePolicy: 'File',
              },
            ],
            dnsPolicy: 'ClusterFirst',
            restartPolicy: 'Never',
            schedulerName: 'default-scheduler',
            securityContext: {},
            terminationGracePeriodSeconds: 30,
          },
        },
      },
      status: {},
    });
    const again = structuredClone(obj);
    jobs.defaults?.(again);
    expect(again).toEqual(obj);
  });

  it.each<[string, Obj, Obj]>([
    ['parallel job keeps completions unset', { parallelism: 3 }, { parallelism: 3, backoffLimit: 6 }],
    [
      'backoffLimitPerIndex lifts backoffLimit',
      { backoffLimitPerIndex: 1, completionMode: 'Indexed', completions: 2 },
      { backoffLimit: 2147483647 },
    ],
    [
      'pod failure policy',
      {
        podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] },
      },
      {
        podReplacementPolicy: 'Failed',
        podFailurePolicy: {
          rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }],
        },
      },
    ],
  ])('defaults: %s', (_name, spec, want) => {
    const { obj, causes } = write(job(spec));
    expect(causes).toEqual([]);
    expect(obj.spec).toMatchObject(want);
    if (spec.parallelism) expect((obj.spec as Obj).completions).toBeUndefined();
  });

  it('keeps the job own labels and a manual selector', () => {
    const { obj, causes } = write({
      metadata: { name: 'pi', namespace: 'default', uid: UID, labels: { team: 'a' } },
      spec: {
        manualSelector: true,
        selector: { matchLabels: { app: 'pi' } },
        template: {
          metadata: { labels: { app: 'pi' } },
          spec: { restartPolicy: 'OnFailure', containers: [{ name: 'pi', image: 'perl' }] },
        },
      },
    });
    expect(causes).toEqual([]);
    expect((obj.metadata as Obj).labels).toEqual({ team: 'a' });
    expect((obj.spec as Obj).selector).toEqual({ matchLabels: { app: 'pi' } });
    expect(((obj.spec as Obj).template as Obj).metadata).toEqual({
      labels: { app: 'pi' },
      creationTimestamp: null,
    });
  });

  it.each<[string, Obj, Obj, string[]]>([
    [
      'unset restartPolicy (defaulted to Always)',
      {},
      { restartPolicy: undefined },
      ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'],
    ],
    [
      'unknown restartPolicy',
      {},
      { restartPolicy: 'Sometimes' },
      [
        'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
        'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "OnFailure", "Never"',
      ],
    ],
    [
      'OnFailure with a pod failure policy',
      { podFailurePolicy: { rules: [] } },
      { restartPolicy: 'OnFailure' },
      [
        'spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified',
      ],
    ],
    [
      'negative backoffLimit',
      { backoffLimit: -1 },
      {},
      ['spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0'],
    ],
    [
      'unknown completion mode',
      { completionMode: 'Sometimes' },
      {},
      ['spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"'],
    ],
    [
      'indexed without completions',
      { completionMode: 'Indexed', parallelism: 2 },
      {},
      ['spec.completions: Required value: when completion mode is Indexed'],
    ],
    // The 1.32 policies (podFailurePolicy GA, backoffLimitPerIndex and successPolicy beta, on by default).
    [
      'pod failure policy rules',
      {
        podFailurePolicy: {
          rules: [
            { action: 'Explode', onExitCodes: { operator: 'In', values: [3, 0, 1, 1] } },
            {
              action: 'Ignore',
              onExitCodes: { operator: 'In', values: [1] },
              onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }],
            },
            { action: 'FailIndex' },
            { action: 'Count', onExitCodes: { operator: 'Maybe', containerName: 'nope', values: [] } },
          ],
        },
      },
      {},
      [
        'spec.podFailurePolicy.rules[0].action: Unsupported value: "Explode": supported values: "Count", "FailIndex", "FailJob", "Ignore"',
        'spec.podFailurePolicy.rules[0].onExitCodes.values[1]: Invalid value: 0: must not be 0 for the In operator',
        'spec.podFailurePolicy.rules[0].onExitCodes.values[3]: Duplicate value: 1',
        'spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{3, 0, 1, 1}: must be ordered',
        'spec.podFailurePolicy.rules[1]: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported',
        'spec.podFailurePolicy.rules[2].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set',
        'spec.podFailurePolicy.rules[2]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required',
        'spec.podFailurePolicy.rules[3].onExitCodes.operator: Unsupported value: "Maybe": supported values: "In", "NotIn"',
        'spec.podFailurePolicy.rules[3].onExitCodes.containerName: Invalid value: "nope": must be one of the container or initContainer names in the pod template',
        'spec.podFailurePolicy.rules[3].onExitCodes.values: Invalid value: []int32{}: at least one value is required',
      ],
    ],
    [
      'per-index backoff on a NonIndexed Job',
      { backoffLimitPerIndex: 1, maxFailedIndexes: 2 },
      {},
      [
        'spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode',
        'spec.maxFailedIndexes: Invalid value: 2: requires indexed completion mode',
      ],
    ],
    [
      'maxFailedIndexes without backoffLimitPerIndex, above completions',
      { completionMode: 'Indexed', completions: 2, maxFailedIndexes: 3 },
      {},
      [
        'spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified',
        'spec.maxFailedIndexes: Invalid value: 3: must be less than or equal to completions',
      ],
    ],
    [
      'success policy of a NonIndexed Job',
      { successPolicy: { rules: [{ succeededCount: 1 }] } },
      {},
      [
        'spec.successPolicy: Invalid value: batch.SuccessPolicy{Rules:[]batch.SuccessPolicyRule{batch.SuccessPolicyRule{SucceededIndexes:(*string)(nil), SucceededCount:(*int32)(1)}}}: requires indexed completion mode',
      ],
    ],
    [
      'success policy rules',
      {
        completionMode: 'Indexed',
        completions: 5,
        successPolicy: {
          rules: [
            {},
            { succeededIndexes: '1,3-2' },
            { succeededIndexes: '0-1', succeededCount: 3 },
            { succeededCount: 9 },
          ],
        },
      },
      {},
      [
        'spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be specified',
        'spec.successPolicy.rules[1].succeededIndexes: Invalid value: "1,3-2": error parsing succeededIndexes: non-increasing order, previous: 3, current: 2',
        'spec.successPolicy.rules[2].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)',
        'spec.successPolicy.rules[3].succeededCount: Invalid value: 9: must be less than or equal to 5 (the number of specified completions)',
      ],
    ],
    [
      'managedBy not a domain-prefixed path',
      { managedBy: 'kueue' },
      {},
      ['spec.managedBy: Invalid value: "kueue": must be a domain-prefixed path (such as "acme.io/foo")'],
    ],
    [
      'pod replacement policy',
      { podReplacementPolicy: 'Sometimes' },
      {},
      [
        'spec.podReplacementPolicy: Unsupported value: "Sometimes": supported values: "Failed", "TerminatingOrFailed"',
      ],
    ],
    [
      'hand-written selector without manualSelector',
      { selector: { matchLabels: { app: 'pi' } } },
      {},
      [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"pi", "batch.kubernetes.io/controller-uid":"863452e6-270d-420e-9b94-53a54146c223"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` not auto-generated',
        'spec.template.metadata.labels: Invalid value: map[string]string{"batch.kubernetes.io/controller-uid":"863452e6-270d-420e-9b94-53a54146c223", "batch.kubernetes.io/job-name":"pi", "controller-uid":"863452e6-270d-420e-9b94-53a54146c223", "job-name":"pi"}: `selector` does not match template `labels`',
      ],
    ],
  ])('validates %s', (_name, spec, podSpec, want) => {
    expect(fieldsOf(write(job(spec, podSpec)).causes)).toEqual(want);
  });

  it('reports a tampered controller-uid label', () => {
    const { causes } = write({
      metadata: { name: 'pi', namespace: 'default', uid: UID },
      spec: {
        template: {
          metadata: { labels: { 'controller-uid': 'someone-else' } },
          spec: { restartPolicy: 'Never', containers: [{ name: 'pi', image: 'perl' }] },
        },
      },
    });
    expect(fieldsOf(causes)[0]).toBe(
      `spec.template.metadata.labels[controller-uid]: Invalid value: map[string]string{"batch.kubernetes.io/controller-uid":"${UID}", "batch.kubernetes.io/job-name":"pi", "controller-uid":"someone-else", "job-name":"pi"}: ${UID}`,
    );
  });

  it('keeps the template and completions immutable, except scheduling directives of a suspended job', () => {
    const old = write(job()).obj;
    const image = structuredClone(old);
    (((image.spec as Obj).template as Obj).spec as Obj).containers = [{ name: 'pi', image: 'perl:6' }];
    const causes = write(image, old).causes;
    expect(causes).toHaveLength(1);
    expect(causes[0]!.field).toBe('spec.template');
    expect(causes[0]!.message).toMatch(/^Invalid value: .*: field is immutable$/);

    const completions = structuredClone(old);
    (completions.spec as Obj).completions = 3;
    expect(fieldsOf(write(completions, old).causes)).toEqual([
      'spec.completions: Invalid value: 3: field is immutable',
    ]);

    const suspended = write(job({ suspend: true })).obj;
    const moved = structuredClone(suspended);
    (((moved.spec as Obj).template as Obj).spec as Obj).nodeSelector = { zone: 'b' };
    expect(write(moved, suspended).causes).toEqual([]);

    const resumed = structuredClone(old);
    (resumed.spec as Obj).suspend = true;
    (resumed.spec as Obj).parallelism = 0;
    expect(write(resumed, old).causes).toEqual([]);
  });

  it.each<[string, Obj, Obj, Obj, [string, string, string]]>([
    ['just created', { completions: 1 }, {}, {}, ['Running', '0/1', '']],
    [
      'running',
      { completions: 3 },
      { startTime: created(200), succeeded: 1 },
      {},
      ['Running', '1/3', '3m20s'],
    ],
    [
      'complete',
      { completions: 1 },
      {
        startTime: created(600),
        completionTime: created(595),
        succeeded: 1,
        conditions: [{ type: 'Complete', status: 'True' }],
      },
      {},
      ['Complete', '1/1', '5s'],
    ],
    [
      'failed',
      { completions: 1 },
      {
        startTime: created(60),
        conditions: [
          { type: 'FailureTarget', status: 'True' },
          { type: 'Failed', status: 'True' },
        ],
      },
      {},
      ['Failed', '0/1', '60s'],
    ],
    [
      'suspended',
      { parallelism: 1 },
      { conditions: [{ type: 'Suspended', status: 'True' }] },
      {},
      ['Suspended', '0/1', ''],
    ],
    ['work queue', { parallelism: 4 }, { succeeded: 2 }, {}, ['Running', '2/1 of 4', '']],
    ['being deleted', { completions: 1 }, {}, { deletionTimestamp: created(1) }, ['Terminating', '0/1', '']],
  ])('prints a %s job', (_name, spec, status, meta, want) => {
    const obj = {
      metadata: { name: 'pi', creationTimestamp: created(600), ...meta },
      spec: {
        ...spec,
        selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': UID } },
        template: { spec: { containers: [{ name: 'pi', image: 'perl' }] } },
      },
      status,
    };
    expect(jobs.row(obj, now)).toEqual([
      'pi',
      ...want,
      '10m',
      'pi',
      'perl',
      `batch.kubernetes.io/controller-uid=${UID}`,
    ]);
  });

  it('has the 1.32 columns and selects on status.successful', () => {
    expect(jobs.columns.map((c) => (c.priority ? `${c.name}*` : c.name))).toEqual([
      'Name',
      'Status',
      'Completions',
      'Duration',
      'Age',
      'Containers*',
      'Images*',
      'Selector*',
    ]);
    expect(jobs.fieldSelectors?.['status.successful']?.({ status: { succeeded: 2 } })).toBe('2');
    expect(jobs.fieldSelectors?.['status.successful']?.({})).toBe('0');
  });
});
