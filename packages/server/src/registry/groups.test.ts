import { describe, expect, it } from 'vitest';
import { builtinBehaviours, defaultBehaviour, humanDuration } from './builtin-kinds.js';
import { b, columnNames, created, fieldsOf, now, write } from './shared/behaviour-test-support.js';

type Obj = Record<string, unknown>;

describe('the behaviour table', () => {
  it('covers every built-in kind the server serves', () => {
    expect(Object.keys(builtinBehaviours).sort()).toEqual(
      [
        '/namespaces',
        '/configmaps',
        '/secrets',
        '/services',
        '/endpoints',
        '/pods',
        '/nodes',
        '/serviceaccounts',
        '/events',
        '/persistentvolumeclaims',
        'apps/deployments',
        'apps/replicasets',
        'apps/statefulsets',
        'apps/daemonsets',
        'apps/controllerrevisions',
        'discovery.k8s.io/endpointslices',
        'batch/jobs',
        'coordination.k8s.io/leases',
        'events.k8s.io/events',
        'rbac.authorization.k8s.io/roles',
        'rbac.authorization.k8s.io/clusterroles',
        'rbac.authorization.k8s.io/rolebindings',
        'rbac.authorization.k8s.io/clusterrolebindings',
        'admissionregistration.k8s.io/mutatingwebhookconfigurations',
        'admissionregistration.k8s.io/validatingwebhookconfigurations',
        'apiextensions.k8s.io/customresourcedefinitions',
        '/replicationcontrollers',
        '/podtemplates',
        '/persistentvolumes',
        '/resourcequotas',
        '/limitranges',
        '/componentstatuses',
        'batch/cronjobs',
        'autoscaling/horizontalpodautoscalers',
        'policy/poddisruptionbudgets',
        'networking.k8s.io/ingresses',
        'networking.k8s.io/ingressclasses',
        'networking.k8s.io/networkpolicies',
        'storage.k8s.io/storageclasses',
        'storage.k8s.io/csidrivers',
        'storage.k8s.io/csinodes',
        'storage.k8s.io/csistoragecapacities',
        'storage.k8s.io/volumeattachments',
        'scheduling.k8s.io/priorityclasses',
        'node.k8s.io/runtimeclasses',
        'certificates.k8s.io/certificatesigningrequests',
        'apiregistration.k8s.io/apiservices',
        'flowcontrol.apiserver.k8s.io/flowschemas',
        'flowcontrol.apiserver.k8s.io/prioritylevelconfigurations',
        'admissionregistration.k8s.io/validatingadmissionpolicies',
        'admissionregistration.k8s.io/validatingadmissionpolicybindings',
      ].sort(),
    );
  });

  it.each(Object.entries(builtinBehaviours))(
    '%s: Name comes first and rows match the columns',
    (_key, behaviour) => {
      const first = behaviour.columns.find((c) => c.format === 'name');
      expect(first?.name).toBe('Name');
      for (const c of behaviour.columns) {
        expect(c.description.length, c.name).toBeGreaterThan(0);
        expect([0, 1]).toContain(c.priority);
      }
      const row = behaviour.row({ metadata: { name: 'x', creationTimestamp: created(5) } }, now);
      expect(row).toHaveLength(behaviour.columns.length);
    },
  );

  it('prints kinds without a printer as NAME CREATED AT', () => {
    expect(defaultBehaviour.columns.map((c) => [c.name, c.type])).toEqual([
      ['Name', 'string'],
      ['Created At', 'date'],
    ]);
    expect(
      defaultBehaviour.row({ metadata: { name: 'x', creationTimestamp: '2024-05-01T11:00:00Z' } }, now),
    ).toEqual(['x', '2024-05-01T11:00:00Z']);
    expect(humanDuration(3 * 86400_000)).toBe('3d');
  });
});

describe('leases', () => {
  it('prints NAME HOLDER AGE and validates durations', () => {
    expect(columnNames('coordination.k8s.io/leases')).toEqual(['Name', 'Holder', 'Age']);
    const lease = {
      metadata: { name: 'op', creationTimestamp: created(15) },
      spec: { holderIdentity: 'op-7d9f_1' },
    };
    expect(b('coordination.k8s.io/leases').row(lease, now)).toEqual(['op', 'op-7d9f_1', '15s']);
    expect(b('coordination.k8s.io/leases').row({ metadata: { name: 'free' } }, now)).toEqual([
      'free',
      '',
      '<unknown>',
    ]);
    expect(
      fieldsOf(
        write('coordination.k8s.io/leases', {
          metadata: { name: 'l' },
          spec: { leaseDurationSeconds: 0, leaseTransitions: -1 },
        }).causes,
      ),
    ).toEqual([
      'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
      'spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });
});

describe('events.k8s.io events', () => {
  const event = {
    metadata: { name: 'web.1', namespace: 'default', creationTimestamp: created(60) },
    eventTime: '2024-05-01T11:59:00.000000Z',
    reportingController: 'example.com/operator',
    reportingInstance: 'operator-0',
    action: 'Reconcile',
    reason: 'Synced',
    note: 'synced ok',
    type: 'Normal',
    regarding: { kind: 'Foo', namespace: 'default', name: 'web', apiVersion: 'example.com/v1' },
  };

  it('accepts a well-formed event and prints it like a core event', () => {
    const { obj, causes } = write('events.k8s.io/events', event);
    expect(causes).toEqual([]);
    expect(obj).toMatchObject({
      deprecatedFirstTimestamp: null,
      deprecatedLastTimestamp: null,
      deprecatedSource: {},
    });
    expect(b('events.k8s.io/events').row(obj, now)).toEqual([
      '60s',
      'Normal',
      'Synced',
      'foo/web',
      '',
      'example.com/operator, operator-0',
      'synced ok',
      '60s',
      1,
      'web.1',
    ]);
    expect(columnNames('events.k8s.io/events')).toEqual(columnNames('/events'));
  });

  it.each<[Obj, string[]]>([
    [{ eventTime: undefined }, ['eventTime: Required value']],
    [{ type: 'Info' }, ['type: Invalid value: "": has invalid value: Info']],
    [
      { reportingController: '' },
      expect.arrayContaining(['reportingController: Required value']) as unknown as string[],
    ],
    [{ action: '' }, ['action: Required value']],
    [{ deprecatedCount: 2 }, ['deprecatedCount: Invalid value: "": needs to be unset']],
    [
      { series: { count: 1 } },
      ['series.count: Invalid value: "": should be at least 2', 'series.lastObservedTime: Required value'],
    ],
  ])('validates %j', (change, want) => {
    expect(fieldsOf(write('events.k8s.io/events', { ...event, ...change }).causes)).toEqual(want);
  });

  it('keeps the note immutable and selects on regarding.*', () => {
    const old = write('events.k8s.io/events', event).obj;
    expect(fieldsOf(write('events.k8s.io/events', { ...old, note: 'changed' }, old).causes)).toEqual([
      'message: Invalid value: "changed": field is immutable',
    ]);
    expect(
      write('events.k8s.io/events', { ...old, series: { count: 2, lastObservedTime: created(1) } }, old)
        .causes,
    ).toEqual([]);
    const sel = b('events.k8s.io/events').fieldSelectors ?? {};
    expect(sel['regarding.kind']?.(event)).toBe('Foo');
    expect(sel['regarding.name']?.(event)).toBe('web');
    expect(sel.reportingController?.(event)).toBe('example.com/operator');
    expect(sel.type?.(event)).toBe('Normal');
  });
});

describe('rbac', () => {
  it('prints roles as NAME CREATED AT and validates rules', () => {
    expect(columnNames('rbac.authorization.k8s.io/roles')).toEqual(['Name', 'Created At']);
    expect(columnNames('rbac.authorization.k8s.io/clusterroles')).toEqual(['Name', 'Created At']);
    const role = {
      metadata: { name: 'r', namespace: 'default' },
      rules: [
        { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
        { resources: ['pods'] },
        { nonResourceURLs: ['/healthz'], verbs: ['get'] },
      ],
    };
    expect(fieldsOf(write('rbac.authorization.k8s.io/roles', role).causes)).toEqual([
      'rules[1].verbs: Required value: verbs must contain at least one value',
      'rules[1].apiGroups: Required value: resource rules must supply at least one api group',
      'rules[2].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs',
    ]);
    expect(
      fieldsOf(
        write('rbac.authorization.k8s.io/clusterroles', {
          metadata: { name: 'c' },
          rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'], resources: ['pods'] }],
          aggregationRule: { clusterRoleSelectors: [] },
        }).causes,
      ),
    ).toEqual([
      'rules[0].nonResourceURLs: Invalid value: []string{"/metrics"}: rules cannot apply to both regular resources and non-resource URLs',
      'aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil',
    ]);
  });

  const binding = {
    metadata: { name: 'rb', namespace: 'default', creationTimestamp: created(40) },
    roleRef: { kind: 'ClusterRole', name: 'view' },
    subjects: [
      { kind: 'User', name: 'alice' },
      { kind: 'Group', name: 'devs' },
      { kind: 'ServiceAccount', name: 'builder', namespace: 'ci' },
      { kind: 'ServiceAccount', name: 'default', namespace: 'default' },
    ],
  };

  it('defaults the API groups of roleRef and subjects', () => {
    const { obj, causes } = write('rbac.authorization.k8s.io/rolebindings', binding);
    expect(causes).toEqual([]);
    expect(obj.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' });
    expect((obj.subjects as Obj[]).map((s) => s.apiGroup)).toEqual([
      'rbac.authorization.k8s.io',
      'rbac.authorization.k8s.io',
      undefined,
      undefined,
    ]);
  });

  it('prints NAME ROLE AGE + USERS GROUPS SERVICEACCOUNTS', () => {
    for (const key of [
      'rbac.authorization.k8s.io/rolebindings',
      'rbac.authorization.k8s.io/clusterrolebindings',
    ]) {
      expect(columnNames(key)).toEqual(['Name', 'Role', 'Age', 'Users*', 'Groups*', 'ServiceAccounts*']);
      expect(b(key).row(binding, now)).toEqual([
        'rb',
        'ClusterRole/view',
        '40s',
        'alice',
        'devs',
        'ci/builder, default/default',
      ]);
    }
  });

  it.each<[string, Obj, string[]]>([
    [
      'rbac.authorization.k8s.io/rolebindings',
      { roleRef: { apiGroup: 'example.com', kind: 'Thing', name: '' } },
      [
        'roleRef.apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"',
        'roleRef.kind: Unsupported value: "Thing": supported values: "Role", "ClusterRole"',
        'roleRef.name: Required value',
      ],
    ],
    [
      'rbac.authorization.k8s.io/clusterrolebindings',
      { roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'ServiceAccount', name: 'sa' }] },
      [
        'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
        'subjects[0].namespace: Required value',
      ],
    ],
    [
      'rbac.authorization.k8s.io/rolebindings',
      {
        subjects: [
          { kind: 'Robot', name: 'r2' },
          { kind: 'User', name: 'bob', apiGroup: 'v1' },
          { kind: 'ServiceAccount', name: 'x', apiGroup: 'rbac.authorization.k8s.io' },
        ],
      },
      [
        'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
        'subjects[1].apiGroup: Unsupported value: "v1": supported values: "rbac.authorization.k8s.io"',
        'subjects[2].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: ""',
      ],
    ],
  ])('%s validates %j', (key, change, want) => {
    expect(fieldsOf(write(key, { ...binding, ...change }).causes)).toEqual(want);
  });

  it('forbids changing roleRef', () => {
    const old = write('rbac.authorization.k8s.io/rolebindings', binding).obj;
    expect(
      fieldsOf(
        write(
          'rbac.authorization.k8s.io/rolebindings',
          { ...old, roleRef: { kind: 'ClusterRole', name: 'edit' } },
          old,
        ).causes,
      ),
    ).toEqual([
      'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef',
    ]);
  });
});

describe('webhook configurations', () => {
  const hook = (extra: Obj = {}): Obj => ({
    name: 'validate.foo.example.com',
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    clientConfig: { service: { name: 'webhook', namespace: 'system', path: '/validate' } },
    rules: [
      {
        apiGroups: ['example.com'],
        apiVersions: ['v1'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['foos'],
      },
    ],
    ...extra,
  });

  it.each([
    ['admissionregistration.k8s.io/validatingwebhookconfigurations', false],
    ['admissionregistration.k8s.io/mutatingwebhookconfigurations', true],
  ])('%s defaults every webhook', (key, mutating) => {
    const { obj, causes } = write(key, { metadata: { name: 'foo' }, webhooks: [hook()] });
    expect(causes).toEqual([]);
    expect((obj.webhooks as Obj[])[0]).toEqual({
      ...hook(),
      clientConfig: { service: { name: 'webhook', namespace: 'system', path: '/validate', port: 443 } },
      rules: [
        {
          apiGroups: ['example.com'],
          apiVersions: ['v1'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['foos'],
          scope: '*',
        },
      ],
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
      ...(mutating ? { reinvocationPolicy: 'Never' } : {}),
    });
    expect(columnNames(key)).toEqual(['Name', 'Webhooks', 'Age']);
    expect(
      b(key).row(
        { metadata: { name: 'foo', creationTimestamp: created(2) }, webhooks: [hook(), hook()] },
        now,
      ),
    ).toEqual(['foo', 2, '2s']);
  });

  it.each<[Obj, string[]]>([
    [
      { name: 'validate' },
      [
        'webhooks[0].name: Invalid value: "validate": should be a domain with at least three segments separated by dots',
      ],
    ],
    [
      { sideEffects: undefined },
      ['webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun'],
    ],
    [
      { sideEffects: 'Some' },
      ['webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'],
    ],
    [
      { admissionReviewVersions: [] },
      ['webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1'],
    ],
    [
      { timeoutSeconds: 31 },
      ['webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds'],
    ],
    [
      { failurePolicy: 'Retry' },
      ['webhooks[0].failurePolicy: Unsupported value: "Retry": supported values: "Fail", "Ignore"'],
    ],
    [
      { clientConfig: {} },
      ['webhooks[0].clientConfig: Required value: exactly one of url or service is required'],
    ],
    [
      { clientConfig: { url: 'http://example.com/hook?x=1' } },
      [
        'webhooks[0].clientConfig.url: Invalid value: "http": \'https\' is the only allowed URL scheme; desired format: https://host[/path]',
        'webhooks[0].clientConfig.url: Invalid value: "x=1": query parameters are not permitted in the URL',
      ],
    ],
    [
      {
        rules: [
          {
            apiGroups: ['*', 'apps'],
            apiVersions: ['v1'],
            operations: ['PATCH'],
            resources: ['deployments'],
            scope: 'Global',
          },
        ],
      },
      [
        'webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
        'webhooks[0].rules[0].apiGroups: Invalid value: []string{"*", "apps"}: if \'*\' is present, must not specify other API groups',
        'webhooks[0].rules[0].scope: Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"',
      ],
    ],
  ])('validates %j', (extra, want) => {
    const key = 'admissionregistration.k8s.io/validatingwebhookconfigurations';
    expect(fieldsOf(write(key, { metadata: { name: 'foo' }, webhooks: [hook(extra)] }).causes)).toEqual(want);
  });

  it('rejects duplicate webhook names and unknown reinvocation policies', () => {
    const key = 'admissionregistration.k8s.io/mutatingwebhookconfigurations';
    expect(
      fieldsOf(
        write(key, { metadata: { name: 'foo' }, webhooks: [hook(), hook({ reinvocationPolicy: 'Always' })] })
          .causes,
      ),
    ).toEqual([
      'webhooks[1].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"',
      'webhooks[1].name: Duplicate value: "validate.foo.example.com"',
    ]);
  });
});

describe('customresourcedefinitions', () => {
  const crd = (spec: Obj = {}, meta: Obj = {}): Obj => ({
    metadata: { name: 'foos.example.com', ...meta },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'foos', kind: 'Foo' },
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
      ],
      ...spec,
    },
  });

  it('defaults names, conversion and the stored version', () => {
    const { obj, causes } = write('apiextensions.k8s.io/customresourcedefinitions', crd());
    expect(causes).toEqual([]);
    expect((obj.spec as Obj).names).toEqual({
      plural: 'foos',
      kind: 'Foo',
      singular: 'foo',
      listKind: 'FooList',
    });
    expect((obj.spec as Obj).conversion).toEqual({ strategy: 'None' });
    expect(obj.status).toEqual({ acceptedNames: { kind: '', plural: '' }, storedVersions: ['v1'] });
    // A new storage version is recorded next to the old one.
    const v2 = structuredClone(obj);
    (v2.spec as Obj).versions = [
      { name: 'v1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object' } } },
      { name: 'v2', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
    ];
    expect(write('apiextensions.k8s.io/customresourcedefinitions', v2, obj).obj.status).toMatchObject({
      storedVersions: ['v1', 'v2'],
    });
  });

  it.each<[Obj, Obj, string[]]>([
    [
      { group: 'other.com' },
      {},
      ['metadata.name: Invalid value: "foos.example.com": must be spec.names.plural+"."+spec.group'],
    ],
    [
      { group: 'example' },
      { name: 'foos.example' },
      ['spec.group: Invalid value: "example": should be a domain with at least one dot'],
    ],
    [
      { scope: 'Global' },
      {},
      ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'],
    ],
    [
      {
        versions: [
          { name: 'v1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object' } } },
        ],
      },
      {},
      [
        'spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:"v1", Served:true, Storage:false, …}}: must have exactly one version marked as storage version',
        'status.storedVersions: Invalid value: []string(nil): must have at least one stored version',
      ],
    ],
    [
      { versions: [{ name: 'v1', served: true, storage: true }] },
      {},
      ['spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required'],
    ],
    [
      { group: 'foo.k8s.io' },
      { name: 'foos.foo.k8s.io' },
      [
        'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
      ],
    ],
    [
      { group: 'foo.k8s.io' },
      { name: 'foos.foo.k8s.io', annotations: { 'api-approved.kubernetes.io': 'unapproved, experimental' } },
      [],
    ],
    [
      { names: { plural: 'foos', kind: 'Foo', shortNames: ['F!'] } },
      {},
      [
        "spec.names.shortNames[0]: Invalid value: \"F!\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      ],
    ],
    [
      { conversion: { strategy: 'Webhook' } },
      {},
      [
        'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
        'spec.conversion.conversionReviewVersions: Required value',
      ],
    ],
  ])('validates %j', (spec, meta, want) => {
    expect(fieldsOf(write('apiextensions.k8s.io/customresourcedefinitions', crd(spec, meta)).causes)).toEqual(
      want,
    );
  });

  it('keeps group and plural immutable', () => {
    const old = write('apiextensions.k8s.io/customresourcedefinitions', crd()).obj;
    const next = structuredClone(old);
    // The registry sets the stored resourceVersion on an unconditional update before validating.
    (next.metadata as Obj).resourceVersion = '7';
    (old.metadata as Obj).resourceVersion = '7';
    (next.spec as Obj).names = { plural: 'bars', kind: 'Foo', singular: 'foo', listKind: 'FooList' };
    expect(fieldsOf(write('apiextensions.k8s.io/customresourcedefinitions', next, old).causes)).toEqual([
      // ValidateCustomResourceDefinitionUpdate checks ObjectMeta as an update (the name is
      // immutable anyway), so only the names rule is reported.
      'spec.names.plural: Invalid value: "bars": field is immutable',
    ]);
  });

  it('prints NAME CREATED AT', () => {
    expect(columnNames('apiextensions.k8s.io/customresourcedefinitions')).toEqual(['Name', 'Created At']);
    expect(
      b('apiextensions.k8s.io/customresourcedefinitions').row(
        { metadata: { name: 'foos.example.com', creationTimestamp: '2024-01-02T03:04:05Z' } },
        now,
      ),
    ).toEqual(['foos.example.com', '2024-01-02T03:04:05Z']);
  });
});
