import { describe, expect, it } from 'vitest';
import { b, columnNames, created, fieldsOf, now, write } from '../shared/behaviour-test-support.js';

type Obj = Record<string, unknown>;

describe('namespaces', () => {
  it('defaults the name label, the kubernetes finalizer and phase Active', () => {
    const { obj, causes } = write('/namespaces', { metadata: { name: 'team-a' } });
    expect(causes).toEqual([]);
    expect(obj).toEqual({
      metadata: { name: 'team-a', labels: { 'kubernetes.io/metadata.name': 'team-a' } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
  });

  it('does not bring the finalizer back once a stored namespace dropped it', () => {
    const { obj } = write('/namespaces', {
      metadata: { name: 'x' },
      spec: { finalizers: [] },
      status: { phase: 'Terminating' },
    });
    expect(obj.spec).toEqual({ finalizers: [] });
  });

  it.each([
    ['example.com/cleanup', []],
    ['orphan', []],
    [
      'cleanup',
      [
        'spec.finalizers: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
      ],
    ],
  ])('validates finalizer %s (ValidateNamespace names the list)', (finalizer, want) => {
    const { causes } = write('/namespaces', {
      metadata: { name: 'x' },
      spec: { finalizers: ['kubernetes', finalizer] },
    });
    expect(fieldsOf(causes)).toEqual(want);
  });

  it('prints NAME STATUS AGE and selects on status.phase', () => {
    expect(columnNames('/namespaces')).toEqual(['Name', 'Status', 'Age']);
    const ns = { metadata: { name: 'a', creationTimestamp: created(300) }, status: { phase: 'Terminating' } };
    expect(b('/namespaces').row(ns, now)).toEqual(['a', 'Terminating', '5m']);
    expect(b('/namespaces').fieldSelectors?.['status.phase']?.(ns)).toBe('Terminating');
  });
});

describe('configmaps', () => {
  it.each([
    [{ data: { 'key.name': 'v', KEY_NAME: 'v' } }, []],
    [
      { data: { 'bad key': 'v' } },
      [
        "data[bad key]: Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
      ],
    ],
    [
      { data: { a: 'x' }, binaryData: { a: 'eA==' } },
      ['data[a]: Invalid value: "a": duplicate of key present in binaryData'],
    ],
    [{ data: { big: 'x'.repeat(1024 * 1024 + 1) } }, ['[]: Too long: may not be more than 1048576 bytes']],
  ])('validates %#', (cm, want) => {
    expect(fieldsOf(write('/configmaps', { metadata: { name: 'c' }, ...cm }).causes)).toEqual(want);
  });

  it('keeps an immutable configmap immutable', () => {
    const old = { metadata: { name: 'c' }, immutable: true, data: { a: '1' } };
    expect(fieldsOf(write('/configmaps', { ...old, data: { a: '2' } }, old).causes)).toEqual([
      'data: Forbidden: field is immutable when `immutable` is set',
    ]);
    expect(fieldsOf(write('/configmaps', { ...old, immutable: false }, old).causes)).toEqual([
      'immutable: Forbidden: field is immutable when `immutable` is set',
    ]);
    expect(write('/configmaps', { ...old, metadata: { name: 'c', labels: { x: 'y' } } }, old).causes).toEqual(
      [],
    );
  });

  it('prints the number of data and binaryData keys', () => {
    const cm = {
      metadata: { name: 'c', creationTimestamp: created(3) },
      data: { a: '1', b: '2' },
      binaryData: { c: 'eA==' },
    };
    expect(columnNames('/configmaps')).toEqual(['Name', 'Data', 'Age']);
    expect(b('/configmaps').row(cm, now)).toEqual(['c', 3, '3s']);
  });
});

describe('secrets', () => {
  it('defaults type Opaque and folds stringData into data', () => {
    const { obj } = write('/secrets', {
      metadata: { name: 's' },
      data: { a: 'MQ==' },
      stringData: { b: 'two', a: 'one' },
    });
    expect(obj).toEqual({ metadata: { name: 's' }, type: 'Opaque', data: { a: 'b25l', b: 'dHdv' } });
  });

  it.each([
    ['kubernetes.io/tls', {}, {}, ['data[tls.crt]: Required value', 'data[tls.key]: Required value']],
    ['kubernetes.io/tls', { 'tls.crt': 'eA==', 'tls.key': 'eA==' }, {}, []],
    ['kubernetes.io/dockerconfigjson', {}, {}, ['data[.dockerconfigjson]: Required value']],
    [
      'kubernetes.io/basic-auth',
      {},
      {},
      ['data[username]: Required value', 'data[password]: Required value'],
    ],
    ['kubernetes.io/basic-auth', { username: '' }, {}, []],
    ['kubernetes.io/ssh-auth', {}, {}, ['data[ssh-privatekey]: Required value']],
    [
      'kubernetes.io/service-account-token',
      {},
      {},
      ['metadata.annotations[kubernetes.io/service-account.name]: Required value'],
    ],
    ['kubernetes.io/service-account-token', {}, { 'kubernetes.io/service-account.name': 'default' }, []],
    ['example.com/custom', {}, {}, []],
  ])('type %s with data %j', (type, data, annotations, want) => {
    expect(fieldsOf(write('/secrets', { metadata: { name: 's', annotations }, type, data }).causes)).toEqual(
      want,
    );
  });

  it('forbids changing the type', () => {
    const old = { metadata: { name: 's' }, type: 'Opaque', data: {} };
    expect(
      fieldsOf(
        write('/secrets', { ...old, type: 'kubernetes.io/basic-auth', data: { username: 'eA==' } }, old)
          .causes,
      ),
    ).toEqual(['type: Invalid value: "kubernetes.io/basic-auth": field is immutable']);
  });

  it('prints NAME TYPE DATA AGE and selects on type', () => {
    const s = {
      metadata: { name: 's', creationTimestamp: created(7200) },
      type: 'Opaque',
      data: { a: 'eA==' },
    };
    expect(columnNames('/secrets')).toEqual(['Name', 'Type', 'Data', 'Age']);
    expect(b('/secrets').row(s, now)).toEqual(['s', 'Opaque', 1, '120m']);
    expect(b('/secrets').fieldSelectors?.type?.(s)).toBe('Opaque');
  });
});

describe('services', () => {
  const svc = (spec: Obj): Obj => ({ metadata: { name: 'web', namespace: 'default' }, spec });

  it('defaults a ClusterIP service', () => {
    const { obj, causes } = write('/services', svc({ selector: { app: 'web' }, ports: [{ port: 80 }] }));
    expect(causes).toEqual([]);
    expect(obj.spec).toEqual({
      selector: { app: 'web' },
      ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
      sessionAffinity: 'None',
      type: 'ClusterIP',
      internalTrafficPolicy: 'Cluster',
      ipFamilyPolicy: 'SingleStack',
      ipFamilies: ['IPv4'],
    });
    expect(obj.status).toEqual({ loadBalancer: {} });
  });

  it.each([
    [
      'NodePort',
      {},
      { externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Cluster', ipFamilyPolicy: 'SingleStack' },
    ],
    [
      'LoadBalancer',
      {},
      {
        externalTrafficPolicy: 'Cluster',
        allocateLoadBalancerNodePorts: true,
        ipFamilyPolicy: 'SingleStack',
      },
    ],
    ['ClusterIP', { clusterIP: 'None' }, { ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv4'] }],
    ['ClusterIP', { clusterIP: 'None', selector: { a: 'b' } }, { ipFamilyPolicy: 'SingleStack' }],
    [
      'ClusterIP',
      { sessionAffinity: 'ClientIP' },
      { sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } } },
    ],
  ])('defaults type %s %j', (type, extra, want) => {
    const { obj } = write('/services', svc({ type, ports: [{ port: 80, targetPort: 'http' }], ...extra }));
    expect(obj.spec).toMatchObject(want);
    expect((obj.spec as Obj).ports).toEqual([{ port: 80, protocol: 'TCP', targetPort: 'http' }]);
  });

  it('leaves ExternalName services without IP families', () => {
    const { obj, causes } = write('/services', svc({ type: 'ExternalName', externalName: 'db.example.com' }));
    expect(causes).toEqual([]);
    expect(obj.spec).toEqual({
      type: 'ExternalName',
      externalName: 'db.example.com',
      sessionAffinity: 'None',
    });
  });

  it.each([
    [{ selector: { app: 'x' } }, ['spec.ports: Required value']],
    [
      { ports: [{ port: 80 }, { port: 443 }] },
      ['spec.ports[0].name: Required value', 'spec.ports[1].name: Required value'],
    ],
    [
      { ports: [{ port: 0 }] },
      [
        'spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive',
        // targetPort defaults to the (invalid) port, and is reported too.
        'spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive',
      ],
    ],
    [
      { ports: [{ port: 80, protocol: 'HTTP' }] },
      ['spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'],
    ],
    [
      { type: 'Magic', ports: [{ port: 80 }] },
      [
        'spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
      ],
    ],
    [
      { ports: [{ port: 80, nodePort: 30080 }] },
      ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
    ],
    [
      {
        ports: [
          { name: 'a', port: 80 },
          { name: 'a', port: 81 },
        ],
      },
      ['spec.ports[1].name: Duplicate value: "a"'],
    ],
    [
      {
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 80 },
        ],
      },
      [
        'spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}',
      ],
    ],
    [{ type: 'ExternalName' }, ['spec.externalName: Required value']],
    [
      { type: 'NodePort', clusterIP: 'None', ports: [{ port: 80 }] },
      ['spec.clusterIPs[0]: Invalid value: "None": may not be set to \'None\' for NodePort services'],
    ],
    // 1.32 (ServiceTrafficDistribution beta, on): PreferClose is the one value.
    [
      { ports: [{ port: 80 }], trafficDistribution: 'Anywhere' },
      ['spec.trafficDistribution: Unsupported value: "Anywhere": supported values: "PreferClose"'],
    ],
    [{ ports: [{ port: 80 }], trafficDistribution: 'PreferClose' }, []],
  ])('validates %j', (spec, want) => {
    expect(fieldsOf(write('/services', svc(spec)).causes)).toEqual(want);
  });

  it('keeps the cluster IP once set', () => {
    const old = write(
      '/services',
      svc({ ports: [{ port: 80 }], clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'] }),
    ).obj;
    const moved = structuredClone(old);
    Object.assign(moved.spec as Obj, { clusterIP: '10.96.0.11', clusterIPs: ['10.96.0.11'] });
    expect(fieldsOf(write('/services', moved, old).causes)).toEqual([
      'spec.clusterIPs[0]: Invalid value: []string{"10.96.0.11"}: may not change once set',
    ]);
    // An update that leaves the IP out keeps it (the server copies it from the stored object).
    const omitted = structuredClone(old);
    delete (omitted.spec as Obj).clusterIP;
    delete (omitted.spec as Obj).clusterIPs;
    expect(write('/services', omitted, old).causes).toEqual([]);
  });

  it.each([
    [
      {
        type: 'ClusterIP',
        clusterIP: '10.96.0.10',
        clusterIPs: ['10.96.0.10'],
        selector: { app: 'web' },
        ports: [{ port: 80, protocol: 'TCP' }],
      },
      {},
      ['web', 'ClusterIP', '10.96.0.10', '<none>', '80/TCP', '10s', 'app=web'],
    ],
    [
      {
        type: 'NodePort',
        clusterIPs: ['10.96.0.11'],
        ports: [
          { port: 80, nodePort: 30080, protocol: 'TCP' },
          { port: 53, nodePort: 30053, protocol: 'UDP' },
        ],
      },
      {},
      ['web', 'NodePort', '10.96.0.11', '<none>', '80:30080/TCP,53:30053/UDP', '10s', '<none>'],
    ],
    [
      {
        type: 'LoadBalancer',
        clusterIPs: ['10.96.0.12'],
        ports: [{ port: 443, nodePort: 31443, protocol: 'TCP' }],
      },
      {},
      ['web', 'LoadBalancer', '10.96.0.12', '<pending>', '443:31443/TCP', '10s', '<none>'],
    ],
    [
      { type: 'LoadBalancer', clusterIPs: ['10.96.0.12'], ports: [{ port: 443, protocol: 'TCP' }] },
      { loadBalancer: { ingress: [{ ip: '203.0.113.9' }, { hostname: 'lb.example.com' }] } },
      ['web', 'LoadBalancer', '10.96.0.12', '203.0.113.9,lb.example.com', '443/TCP', '10s', '<none>'],
    ],
    [
      { type: 'ExternalName', externalName: 'db.example.com' },
      {},
      ['web', 'ExternalName', '<none>', 'db.example.com', '<none>', '10s', '<none>'],
    ],
    [
      {
        type: 'ClusterIP',
        clusterIP: 'None',
        clusterIPs: ['None'],
        externalIPs: ['1.2.3.4'],
        ports: [{ port: 80, protocol: 'TCP' }],
      },
      {},
      ['web', 'ClusterIP', 'None', '1.2.3.4', '80/TCP', '10s', '<none>'],
    ],
  ])('prints %j', (spec, status, want) => {
    expect(columnNames('/services')).toEqual([
      'Name',
      'Type',
      'Cluster-IP',
      'External-IP',
      'Port(s)',
      'Age',
      'Selector*',
    ]);
    const obj = { metadata: { name: 'web', creationTimestamp: created(10) }, spec, status };
    expect(b('/services').row(obj, now)).toEqual(want);
  });

  it('selects on spec.clusterIP and spec.type', () => {
    const s = { spec: { type: 'NodePort', clusterIP: '10.0.0.1' } };
    expect(b('/services').fieldSelectors?.['spec.clusterIP']?.(s)).toBe('10.0.0.1');
    expect(b('/services').fieldSelectors?.['spec.type']?.(s)).toBe('NodePort');
  });
});

describe('endpoints', () => {
  it.each([
    [[], '<none>'],
    [
      [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ports: [{ port: 80 }] }],
      '10.0.0.1:80,10.0.0.2:80',
    ],
    [[{ addresses: [{ ip: 'fd00::1' }], ports: [{ port: 80 }] }], '[fd00::1]:80'],
    [[{ addresses: [{ ip: '10.0.0.1' }] }], '10.0.0.1'],
    [
      [
        {
          addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }, { ip: '10.0.0.3' }],
          ports: [{ port: 80 }, { port: 443 }],
        },
      ],
      '10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 3 more...',
    ],
  ])('prints %j', (subsets, want) => {
    expect(columnNames('/endpoints')).toEqual(['Name', 'Endpoints', 'Age']);
    expect(
      b('/endpoints').row({ metadata: { name: 'web', creationTimestamp: created(1) }, subsets }, now),
    ).toEqual(['web', want, '1s']);
  });

  it('defaults port protocols and validates addresses and ports', () => {
    const { obj, causes } = write('/endpoints', {
      metadata: { name: 'web' },
      subsets: [{ addresses: [{ ip: 'not-an-ip' }], ports: [{ port: 80 }, { port: 70000, name: 'b' }] }, {}],
    });
    expect((obj.subsets as Obj[])[0]).toMatchObject({
      ports: [{ port: 80, protocol: 'TCP' }, { protocol: 'TCP' }],
    });
    expect(fieldsOf(causes)).toEqual([
      'subsets[0].addresses[0].ip: Invalid value: "not-an-ip": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      // ValidateNonSpecialIP after the rest of the address, as kube reports it.
      'subsets[0].addresses[0].ip: Invalid value: "not-an-ip": must be a valid IP address',
      'subsets[0].ports[0].name: Required value',
      'subsets[0].ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive',
      'subsets[1]: Required value: must specify `addresses` or `notReadyAddresses`',
    ]);
  });
});

describe('pods', () => {
  const pod = (spec: Obj, extra: Obj = {}): Obj => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: '6f1c2f5e-0000-4000-8000-000000000001' },
    spec,
    ...extra,
  });

  // The ServiceAccount admission plugin (its name and token volume) has its own tests:
  // admission/service-account.test.ts.
  it('defaults a pod like the API server and its in-registry admission plugins do', () => {
    const { obj, causes } = write(
      '/pods',
      pod({ containers: [{ name: 'nginx', image: 'nginx', ports: [{ containerPort: 80 }] }] }),
    );
    expect(causes).toEqual([]);
    expect(obj).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default', uid: '6f1c2f5e-0000-4000-8000-000000000001' },
      spec: {
        containers: [
          {
            name: 'nginx',
            image: 'nginx',
            imagePullPolicy: 'Always',
            ports: [{ containerPort: 80, protocol: 'TCP' }],
            resources: {},
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
          },
        ],
        dnsPolicy: 'ClusterFirst',
        enableServiceLinks: true,
        restartPolicy: 'Always',
        schedulerName: 'default-scheduler',
        securityContext: {},
        terminationGracePeriodSeconds: 30,
        tolerations: [
          {
            effect: 'NoExecute',
            key: 'node.kubernetes.io/not-ready',
            operator: 'Exists',
            tolerationSeconds: 300,
          },
          {
            effect: 'NoExecute',
            key: 'node.kubernetes.io/unreachable',
            operator: 'Exists',
            tolerationSeconds: 300,
          },
        ],
      },
      status: { phase: 'Pending', qosClass: 'BestEffort' },
    });
    // Defaulting again (an update) is stable.
    const again = structuredClone(obj);
    b('/pods').defaults?.(again);
    expect(again).toEqual(obj);
  });

  it.each([
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['nginx:1.25', 'IfNotPresent'],
    ['registry.example.com:5000/team/app', 'Always'],
    ['registry.example.com:5000/team/app:v2', 'IfNotPresent'],
    ['nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'IfNotPresent'],
  ])('image %s pulls %s', (image, policy) => {
    const { obj } = write('/pods', pod({ containers: [{ name: 'c', image }] }));
    expect(((obj.spec as Obj).containers as Obj[])[0]!.imagePullPolicy).toBe(policy);
  });

  it.each([
    [[{ name: 'a', image: 'x' }], 'BestEffort'],
    [[{ name: 'a', image: 'x', resources: { limits: { cpu: '1', memory: '1Gi' } } }], 'Guaranteed'],
    [
      [
        {
          name: 'a',
          image: 'x',
          resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } },
        },
      ],
      'Burstable',
    ],
    [[{ name: 'a', image: 'x', resources: { requests: { cpu: '100m' } } }], 'Burstable'],
  ])('computes qosClass for %j', (containers, qos) => {
    expect((write('/pods', pod({ containers })).obj.status as Obj).qosClass).toBe(qos);
  });

  // 1.32's rules for sidecars (restartable init containers), lifecycle hooks, DNS and the OS;
  // the local plane took all of these.
  const INIT = 'may not be set for init containers without restartPolicy=Always';
  it.each([
    [
      'probes and hooks of a plain init container',
      {
        initContainers: [
          {
            name: 'i',
            image: 'x',
            livenessProbe: { exec: { command: ['a'] } },
            lifecycle: { preStop: { exec: { command: ['a'] } } },
          },
        ],
      },
      [
        `spec.initContainers[0].lifecycle: Forbidden: ${INIT}`,
        `spec.initContainers[0].livenessProbe: Forbidden: ${INIT}`,
      ],
    ],
    [
      'an init container restarting other than Always, a regular one with a restart policy',
      {
        initContainers: [{ name: 'i', image: 'x', restartPolicy: 'Never' }],
        containers: [{ name: 'c', image: 'x', restartPolicy: 'Always' }],
      },
      [
        'spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers',
        'spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"',
      ],
    ],
    [
      'a sidecar with a probe',
      {
        initContainers: [
          { name: 'i', image: 'x', restartPolicy: 'Always', readinessProbe: { exec: { command: ['a'] } } },
        ],
      },
      [],
    ],
    [
      'lifecycle hooks',
      {
        containers: [
          {
            name: 'c',
            image: 'x',
            lifecycle: { postStart: {}, preStop: { sleep: { seconds: 40 } } },
          },
        ],
      },
      [
        'spec.containers[0].lifecycle.postStart: Required value: must specify a handler type',
        'spec.containers[0].lifecycle.preStop.sleep: Invalid value: 40: must be greater than 0 and less than terminationGracePeriodSeconds (30). Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep.',
      ],
    ],
    [
      'DNS config',
      { dnsConfig: { nameservers: ['1.1.1.1', '2.2.2.2', '3.3.3.3', 'x'], options: [{}] } },
      [
        'spec.dnsConfig.nameservers: Invalid value: []string{"1.1.1.1", "2.2.2.2", "3.3.3.3", "x"}: must not have more than 3 nameservers',
        'spec.dnsConfig.nameservers[3]: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
        'spec.dnsConfig.options[0]: Required value: must not be empty',
      ],
    ],
    [
      'dnsPolicy None without a config',
      { dnsPolicy: 'None' },
      ['spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None'],
    ],
    [
      'an OS other than linux or windows',
      { os: { name: 'mac' } },
      ['spec.os: Unsupported value: "mac": supported values: "linux", "windows"'],
    ],
    [
      'volume sources',
      {
        volumes: [
          {
            name: 'a',
            configMap: {
              name: 'x',
              defaultMode: 1000,
              items: [
                { key: 'k', path: '/abs' },
                { key: 'k', path: 'a/../b' },
              ],
            },
          },
          { name: 'b', projected: { sources: [{ secret: { name: 's' }, configMap: { name: 'c' } }] } },
          {
            name: 'c',
            downwardAPI: { items: [{ path: 'x', fieldRef: { apiVersion: 'v1', fieldPath: 'spec.bogus' } }] },
          },
          { name: 'd', emptyDir: { sizeLimit: '-1Gi' } },
        ],
      },
      [
        'spec.volumes[0].configMap.defaultMode: Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive',
        'spec.volumes[0].configMap.items[0].path: Invalid value: "/abs": must be a relative path',
        'spec.volumes[0].configMap.items[1].path: Invalid value: "a/../b": must not contain \'..\'',
        'spec.volumes[1].projected.sources[0]: Forbidden: may not specify more than 1 volume type',
        'spec.volumes[2].downwardAPI.fieldRef.fieldPath: Invalid value: "spec.bogus": error converting fieldPath: field label not supported: spec.bogus',
        'spec.volumes[3].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity',
      ],
    ],
    [
      'environment sources',
      {
        containers: [
          {
            name: 'c',
            image: 'x',
            env: [
              { name: 'A', valueFrom: { configMapKeyRef: { name: 'x', key: 'bad key!' } } },
              { name: 'B', valueFrom: { resourceFieldRef: { resource: 'limits.gpu' } } },
            ],
            envFrom: [{ prefix: 'A_' }],
          },
        ],
      },
      [
        "spec.containers[0].env[0].valueFrom.configMapKeyRef.key: Invalid value: \"bad key!\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
        'spec.containers[0].env[1].valueFrom.resourceFieldRef.resource: Unsupported value: "limits.gpu": supported values: "limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory"',
        'spec.containers[0].envFrom: Invalid value: "": must specify one of: `configMapRef` or `secretRef`',
      ],
    ],
    [
      'mounts, devices, host ports and the node name',
      {
        nodeName: 'Bad_Node',
        volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'x' } }],
        containers: [
          {
            name: 'c',
            image: 'x',
            ports: [{ containerPort: 80, hostPort: 8080 }],
            volumeDevices: [{ name: 'v', devicePath: '/d' }],
            volumeMounts: [{ name: 'v', mountPath: '/d', mountPropagation: 'Everywhere' }],
          },
          { name: 'd', image: 'x', ports: [{ containerPort: 81, hostPort: 8080 }] },
        ],
      },
      [
        'spec.containers[0].volumeMounts[0].name: Invalid value: "v": must not already exist in volumeDevices',
        'spec.containers[0].volumeMounts[0].mountPath: Invalid value: "/d": must not already exist as a path in volumeDevices',
        'spec.containers[0].volumeMounts.mountPropagation: Unsupported value: "Everywhere": supported values: "Bidirectional", "HostToContainer", "None"',
        'spec.containers[0].volumeDevices[0].name: Invalid value: "v": must not already exist in volumeMounts',
        'spec.containers[0].volumeDevices[0].devicePath: Invalid value: "/d": must not already exist as a path in volumeMounts',
        'spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"',
        "spec.nodeName: Invalid value: \"Bad_Node\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      ],
    ],
    [
      'pod security context',
      {
        securityContext: {
          supplementalGroups: [-1],
          sysctls: [{ name: 'bad name!', value: '1' }],
          fsGroupChangePolicy: 'Sometimes',
          seccompProfile: { type: 'Localhost' },
          appArmorProfile: { type: 'Localhost' },
        },
      },
      [
        'spec.securityContext.supplementalGroups[0]: Invalid value: -1: must be between 0 and 2147483647, inclusive',
        'spec.securityContext.sysctls[0].name: Invalid value: "bad name!": must have at most 253 characters and match regex ([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?',
        'spec.securityContext.fsGroupChangePolicy: Unsupported value: "Sometimes": supported values: "Always", "OnRootMismatch"',
        'spec.securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost',
        'spec.securityContext.appArmorProfile.localhostProfile: Required value: must be set when AppArmor type is Localhost',
      ],
    ],
    [
      'container security context',
      {
        containers: [
          {
            name: 'c',
            image: 'x',
            securityContext: { seccompProfile: { type: 'Strict' }, appArmorProfile: {} },
          },
        ],
      },
      [
        'spec.containers[0].securityContext.seccompProfile.type: Unsupported value: "Strict": supported values: "Localhost", "RuntimeDefault", "Unconfined"',
        'spec.containers[0].securityContext.appArmorProfile.type: Required value: type is required when appArmorProfile is set',
      ],
    ],
  ])('validates %s', (_name, spec, want) => {
    const { causes } = write('/pods', pod({ containers: [{ name: 'c', image: 'x' }], ...spec }));
    expect(fieldsOf(causes)).toEqual(want);
  });

  it('refuses allowPrivilegeEscalation false for a privileged container', () => {
    const { causes } = write(
      '/pods',
      pod({
        containers: [
          { name: 'c', image: 'x', securityContext: { privileged: true, allowPrivilegeEscalation: false } },
        ],
      }),
    );
    expect(fieldsOf(causes)).toEqual([
      expect.stringMatching(
        /^spec\.containers\[0\]\.securityContext: Invalid value: core\.SecurityContext\{.*Privileged:\(\*bool\)\(true\).*\}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true$/,
      ),
    ]);
  });

  it('defaults requests to limits, probes, host ports and keeps explicit tolerations', () => {
    const { obj } = write(
      '/pods',
      pod({
        hostNetwork: true,
        automountServiceAccountToken: false,
        serviceAccountName: 'builder',
        priorityClassName: 'system-node-critical',
        tolerations: [{ operator: 'Exists' }],
        containers: [
          {
            name: 'c',
            image: 'x:1',
            ports: [{ containerPort: 8080 }],
            resources: { limits: { cpu: '2' }, requests: { memory: '1Gi' } },
            livenessProbe: { httpGet: { port: 8080 } },
            readinessProbe: { grpc: { port: 9000 }, periodSeconds: 5 },
          },
        ],
        volumes: [{ name: 'scratch' }, { name: 'cfg', configMap: { name: 'cfg' } }],
      }),
    );
    const spec = obj.spec as Obj;
    const c = (spec.containers as Obj[])[0]!;
    expect(c.resources).toEqual({ limits: { cpu: '2' }, requests: { memory: '1Gi', cpu: '2' } });
    expect(c.ports).toEqual([{ containerPort: 8080, hostPort: 8080, protocol: 'TCP' }]);
    expect(c.livenessProbe).toEqual({
      httpGet: { port: 8080, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(c.readinessProbe).toEqual({
      grpc: { port: 9000, service: '' },
      periodSeconds: 5,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(c.volumeMounts).toBeUndefined();
    expect(spec.volumes).toEqual([
      { name: 'scratch', emptyDir: {} },
      { name: 'cfg', configMap: { name: 'cfg', defaultMode: 420 } },
    ]);
    expect(spec.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(spec.serviceAccount).toBe('builder');
    // The priority is the Priority admission plugin's, from the stored PriorityClass (admission/priority.ts).
    expect(spec.priority).toBeUndefined();
  });

  it.each([
    [{ containers: [] }, ['spec.containers: Required value']],
    [
      { containers: [{ name: 'Web', image: 'x' }] },
      [
        "spec.containers[0].name: Invalid value: \"Web\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      ],
    ],
    [{ containers: [{ name: 'a' }] }, ['spec.containers[0].image: Required value']],
    [
      { containers: [{ name: 'a', image: 'nginx ' }] },
      ['spec.containers[0].image: Invalid value: "nginx ": must not have leading or trailing whitespace'],
    ],
    [
      {
        containers: [
          { name: 'a', image: 'x' },
          { name: 'a', image: 'y' },
        ],
      },
      ['spec.containers[1].name: Duplicate value: "a"'],
    ],
    [
      { initContainers: [{ name: 'a', image: 'x' }], containers: [{ name: 'a', image: 'y' }] },
      ['spec.initContainers[0].name: Duplicate value: "a"'],
    ],
    [
      { containers: [{ name: 'a', image: 'x', ports: [{ containerPort: 0 }, { containerPort: 70000 }] }] },
      [
        'spec.containers[0].ports[0].containerPort: Required value',
        'spec.containers[0].ports[1].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
      ],
    ],
    [
      { containers: [{ name: 'a', image: 'x', imagePullPolicy: 'Sometimes' }] },
      [
        'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
      ],
    ],
    [
      { restartPolicy: 'Sometimes', containers: [{ name: 'a', image: 'x' }] },
      [
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
      ],
    ],
    [
      { containers: [{ name: 'a', image: 'x', volumeMounts: [{ name: 'data', mountPath: '/data' }] }] },
      ['spec.containers[0].volumeMounts[0].name: Not found: "data"'],
    ],
    [
      {
        containers: [
          { name: 'a', image: 'x', env: [{ name: '1.ok-in-1.32' }, { value: 'v' }, { name: 'A=B' }] },
        ],
      },
      // RelaxedEnvironmentVariableValidation (beta, on in 1.32): any printable ASCII but '='.
      [
        'spec.containers[0].env[1].name: Required value',
        'spec.containers[0].env[1].name: Invalid value: "": environment variable name must be non-empty',
        'spec.containers[0].env[2].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than \'=\'',
      ],
    ],
    [
      {
        containers: [{ name: 'a', image: 'x', resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } }],
      },
      [
        'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
      ],
    ],
    [
      { volumes: [{ name: 'v' }, { name: 'v' }], containers: [{ name: 'a', image: 'x' }] },
      ['spec.volumes[1].name: Duplicate value: "v"'],
    ],
    [
      {
        tolerations: [{ key: 'k', operator: 'Maybe', effect: 'Sometimes' }],
        containers: [{ name: 'a', image: 'x' }],
      },
      [
        'spec.tolerations[0].operator: Unsupported value: "Maybe": supported values: "Equal", "Exists"',
        'spec.tolerations[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
      ],
    ],
  ])('validates %j', (spec, want) => {
    expect(fieldsOf(write('/pods', pod({ automountServiceAccountToken: false, ...spec })).causes)).toEqual(
      want,
    );
  });

  it('allows image and toleration changes on update, forbids the rest', () => {
    const old = write('/pods', pod({ containers: [{ name: 'a', image: 'x:1' }] })).obj;
    const image = structuredClone(old);
    ((image.spec as Obj).containers as Obj[])[0]!.image = 'x:2';
    ((image.spec as Obj).tolerations as Obj[]).push({ key: 'extra', operator: 'Exists' });
    expect(write('/pods', image, old).causes).toEqual([]);

    const moved = structuredClone(old);
    (moved.spec as Obj).nodeName = 'node-2';
    const causes = write('/pods', moved, old).causes;
    expect(causes).toHaveLength(1);
    expect(causes[0]!.field).toBe('spec');
    expect(causes[0]!.message).toMatch(
      /^Forbidden: pod updates may not change fields other than `spec.containers\[\*\].image`,`spec.initContainers\[\*\].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` \(only additions to existing tolerations\),`spec.terminationGracePeriodSeconds` \(allow it to be set to 1 if it was previously negative\)\n/,
    );
    expect(causes[0]!.message).toContain('spec.nodeName');

    const added = structuredClone(old);
    ((added.spec as Obj).containers as Obj[]).push({ name: 'b', image: 'y' });
    expect(fieldsOf(write('/pods', added, old).causes)).toEqual([
      'spec.containers: Forbidden: pod updates may not add or remove containers',
    ]);
  });

  const running = (extra: Obj = {}): Obj => ({ running: { startedAt: created(50) }, ...extra });
  it.each<[string, Obj, Obj, string[]]>([
    ['pending, unscheduled', { containers: [{ name: 'a' }] }, { phase: 'Pending' }, ['0/1', 'Pending', '0']],
    [
      'container creating',
      { containers: [{ name: 'a' }] },
      {
        phase: 'Pending',
        containerStatuses: [
          { name: 'a', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } },
        ],
      },
      ['0/1', 'ContainerCreating', '0'],
    ],
    [
      'running and ready',
      { containers: [{ name: 'a' }, { name: 'b' }] },
      {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [
          { name: 'a', ready: true, restartCount: 0, state: running() },
          { name: 'b', ready: false, restartCount: 0, state: running() },
        ],
      },
      ['1/2', 'Running', '0'],
    ],
    [
      'crash looping',
      { containers: [{ name: 'a' }] },
      {
        phase: 'Running',
        containerStatuses: [
          {
            name: 'a',
            ready: false,
            restartCount: 5,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: created(130) } },
          },
        ],
      },
      ['0/1', 'CrashLoopBackOff', '5 (2m10s ago)'],
    ],
    [
      'completed',
      { containers: [{ name: 'a' }] },
      {
        phase: 'Succeeded',
        containerStatuses: [
          {
            name: 'a',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 0, reason: 'Completed' } },
          },
        ],
      },
      ['0/1', 'Completed', '0'],
    ],
    [
      'killed by signal',
      { containers: [{ name: 'a' }] },
      {
        phase: 'Failed',
        containerStatuses: [{ name: 'a', state: { terminated: { exitCode: 137, signal: 9 } } }],
      },
      ['0/1', 'Signal:9', '0'],
    ],
    [
      'init container running',
      { initContainers: [{ name: 'init' }], containers: [{ name: 'a' }] },
      {
        phase: 'Pending',
        initContainerStatuses: [{ name: 'init', state: running() }],
        containerStatuses: [{ name: 'a', state: { waiting: { reason: 'PodInitializing' } } }],
      },
      ['0/1', 'Init:0/1', '0'],
    ],
    [
      'init container failing',
      { initContainers: [{ name: 'init' }], containers: [{ name: 'a' }] },
      {
        phase: 'Pending',
        initContainerStatuses: [
          { name: 'init', restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } } },
        ],
      },
      ['0/1', 'Init:CrashLoopBackOff', '2'],
    ],
    [
      'sidecar counts as a container',
      { initContainers: [{ name: 'proxy', restartPolicy: 'Always' }], containers: [{ name: 'a' }] },
      {
        phase: 'Running',
        conditions: [{ type: 'Initialized', status: 'True' }],
        initContainerStatuses: [{ name: 'proxy', started: true, ready: true, state: running() }],
        containerStatuses: [{ name: 'a', ready: true, state: running() }],
      },
      ['2/2', 'Running', '0'],
    ],
    [
      'scheduling gated',
      { containers: [{ name: 'a' }] },
      {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }],
      },
      ['0/1', 'SchedulingGated', '0'],
    ],
  ])('prints a %s pod', (_name, spec, status, want) => {
    const obj = { metadata: { name: 'web', creationTimestamp: created(60) }, spec, status };
    const [name, ready, reason, restarts, age] = b('/pods').row(obj, now);
    expect([name, age]).toEqual(['web', '60s']);
    expect([ready, reason, restarts]).toEqual(want);
  });

  it('prints a deleted pod as Terminating and the wide columns', () => {
    expect(columnNames('/pods')).toEqual([
      'Name',
      'Ready',
      'Status',
      'Restarts',
      'Age',
      'IP*',
      'Node*',
      'Nominated Node*',
      'Readiness Gates*',
    ]);
    const obj = {
      metadata: { name: 'web', creationTimestamp: created(60), deletionTimestamp: created(1) },
      spec: {
        nodeName: 'node-1',
        containers: [{ name: 'a' }],
        readinessGates: [{ conditionType: 'example.com/lb' }, { conditionType: 'x' }],
      },
      status: {
        phase: 'Running',
        podIP: '10.244.0.5',
        podIPs: [{ ip: '10.244.0.5' }],
        conditions: [{ type: 'example.com/lb', status: 'True' }],
        containerStatuses: [{ name: 'a', ready: true, state: running() }],
      },
    };
    expect(b('/pods').row(obj, now)).toEqual([
      'web',
      '1/1',
      'Terminating',
      '0',
      '60s',
      '10.244.0.5',
      'node-1',
      '<none>',
      '1/2',
    ]);
    const bare = {
      metadata: { name: 'p', creationTimestamp: created(1) },
      spec: { containers: [{ name: 'a' }] },
      status: {},
    };
    expect(b('/pods').row(bare, now).slice(5)).toEqual(['<none>', '<none>', '<none>', '<none>']);
  });

  it.each([
    ['spec.nodeName', 'node-1'],
    ['spec.restartPolicy', 'Always'],
    ['spec.schedulerName', 'default-scheduler'],
    ['spec.serviceAccountName', 'default'],
    ['spec.hostNetwork', 'false'],
    ['status.phase', 'Running'],
    ['status.podIP', '10.244.0.5'],
    ['status.nominatedNodeName', ''],
  ])('selects on %s', (field, want) => {
    const obj = write(
      '/pods',
      pod({ nodeName: 'node-1', serviceAccountName: 'default', containers: [{ name: 'a', image: 'x' }] }),
    ).obj;
    (obj.status as Obj).phase = 'Running';
    (obj.status as Obj).podIPs = [{ ip: '10.244.0.5' }];
    expect(b('/pods').fieldSelectors?.[field]?.(obj)).toBe(want);
  });
});

describe('nodes', () => {
  const node = {
    metadata: {
      name: 'node-1',
      creationTimestamp: created(3 * 86400),
      labels: {
        'node-role.kubernetes.io/control-plane': '',
        'node-role.kubernetes.io/worker': '',
        'kubernetes.io/role': 'infra',
      },
    },
    spec: { unschedulable: true },
    status: {
      conditions: [{ type: 'Ready', status: 'True' }],
      addresses: [
        { type: 'InternalIP', address: '172.18.0.2' },
        { type: 'Hostname', address: 'node-1' },
      ],
      nodeInfo: {
        kubeletVersion: 'v1.32.0',
        osImage: 'Debian GNU/Linux 12',
        kernelVersion: '6.1.0',
        containerRuntimeVersion: 'containerd://1.7.0',
      },
    },
  };

  it('prints status, roles, version and wide columns', () => {
    expect(columnNames('/nodes')).toEqual([
      'Name',
      'Status',
      'Roles',
      'Age',
      'Version',
      'Internal-IP*',
      'External-IP*',
      'OS-Image*',
      'Kernel-Version*',
      'Container-Runtime*',
    ]);
    expect(b('/nodes').row(node, now)).toEqual([
      'node-1',
      'Ready,SchedulingDisabled',
      'control-plane,infra,worker',
      '3d',
      'v1.32.0',
      '172.18.0.2',
      '<none>',
      'Debian GNU/Linux 12',
      '6.1.0',
      'containerd://1.7.0',
    ]);
    expect(b('/nodes').row({ metadata: { name: 'n' } }, now)).toEqual([
      'n',
      'Unknown',
      '<none>',
      '<unknown>',
      '',
      '<none>',
      '<none>',
      '<unknown>',
      '<unknown>',
      '<unknown>',
    ]);
  });

  it('selects on spec.unschedulable and defaults allocatable', () => {
    expect(b('/nodes').fieldSelectors?.['spec.unschedulable']?.(node)).toBe('true');
    expect(b('/nodes').fieldSelectors?.['spec.unschedulable']?.({})).toBe('false');
    const { obj, causes } = write('/nodes', { metadata: { name: 'n' }, status: { capacity: { cpu: '4' } } });
    expect(causes).toEqual([]);
    expect(obj.status).toMatchObject({ capacity: { cpu: '4' }, allocatable: { cpu: '4' } });
    // Go writes the status's structs even when empty.
    expect(obj.status).toMatchObject({
      daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
      nodeInfo: { kubeletVersion: '' },
    });
    expect(
      fieldsOf(
        write('/nodes', { metadata: { name: 'n' }, spec: { taints: [{ key: 'k', effect: 'Bad' }] } }).causes,
      ),
    ).toEqual([
      'metadata.taints[0].effect: Unsupported value: "Bad": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    ]);
  });
});

describe('serviceaccounts', () => {
  it('prints NAME SECRETS AGE', () => {
    expect(columnNames('/serviceaccounts')).toEqual(['Name', 'Secrets', 'Age']);
    expect(
      b('/serviceaccounts').row({ metadata: { name: 'default', creationTimestamp: created(5) } }, now),
    ).toEqual(['default', 0, '5s']);
  });
});

describe('events', () => {
  const event = {
    metadata: { name: 'web.17c', namespace: 'default', creationTimestamp: created(600) },
    involvedObject: {
      kind: 'Pod',
      namespace: 'default',
      name: 'web',
      uid: 'u-1',
      apiVersion: 'v1',
      fieldPath: 'spec.containers{nginx}',
    },
    reason: 'Pulled',
    message: 'Successfully pulled image "nginx"\n',
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: created(600),
    lastTimestamp: created(30),
    count: 3,
    type: 'Normal',
  };

  it('prints LAST SEEN TYPE REASON OBJECT MESSAGE plus the wide columns', () => {
    expect(columnNames('/events')).toEqual([
      'Last Seen',
      'Type',
      'Reason',
      'Object',
      'Subobject*',
      'Source*',
      'Message',
      'First Seen*',
      'Count*',
      'Name*',
    ]);
    expect(b('/events').row(event, now)).toEqual([
      '30s',
      'Normal',
      'Pulled',
      'pod/web',
      'spec.containers{nginx}',
      'kubelet, node-1',
      'Successfully pulled image "nginx"',
      '10m',
      3,
      'web.17c',
    ]);
  });

  it('prints a new-style event from eventTime and series', () => {
    const e = {
      metadata: { name: 'e' },
      involvedObject: { kind: 'Node', name: 'node-1' },
      reason: 'Scheduled',
      message: 'm',
      eventTime: created(120),
      series: { count: 4, lastObservedTime: created(5) },
      reportingComponent: 'default-scheduler',
      reportingInstance: 'sched-1',
      firstTimestamp: null,
      lastTimestamp: null,
      type: 'Normal',
    };
    expect(b('/events').row(e, now)).toEqual([
      '5s',
      'Normal',
      'Scheduled',
      'node/node-1',
      '',
      'default-scheduler, sched-1',
      'm',
      '2m',
      4,
      'e',
    ]);
  });

  it('fills the fields Go always serializes and checks the namespace', () => {
    const { obj, causes } = write('/events', {
      metadata: { name: 'e', namespace: 'default' },
      involvedObject: { namespace: 'other' },
    });
    expect(obj).toMatchObject({
      eventTime: null,
      firstTimestamp: null,
      lastTimestamp: null,
      reportingComponent: '',
      reportingInstance: '',
      source: {},
    });
    expect(fieldsOf(causes)).toEqual([
      'involvedObject.namespace: Invalid value: "other": does not match event.namespace',
    ]);
    const newStyle = write('/events', {
      metadata: { name: 'e', namespace: 'default' },
      involvedObject: { namespace: 'default' },
      eventTime: '2024-05-01T11:59:00.000000Z',
    });
    expect(fieldsOf(newStyle.causes)).toEqual([
      'reportingComponent: Required value',
      'reportingComponent: Invalid value: "": name part must be non-empty',
      expect.stringContaining(
        'reportingComponent: Invalid value: "": name part must consist of alphanumeric characters',
      ),
      'reportingInstance: Required value',
      'action: Required value',
      'reason: Required value',
    ]);
  });

  it.each([
    ['involvedObject.kind', 'Pod'],
    ['involvedObject.namespace', 'default'],
    ['involvedObject.name', 'web'],
    ['involvedObject.uid', 'u-1'],
    ['involvedObject.apiVersion', 'v1'],
    ['involvedObject.resourceVersion', ''],
    ['involvedObject.fieldPath', 'spec.containers{nginx}'],
    ['reason', 'Pulled'],
    ['reportingComponent', ''],
    ['source', 'kubelet'],
    ['type', 'Normal'],
  ])('selects on %s', (field, want) => {
    expect(b('/events').fieldSelectors?.[field]?.(event)).toBe(want);
  });
});

describe('persistentvolumeclaims', () => {
  const claim = (spec: Obj, extra: Obj = {}): Obj => ({
    metadata: { name: 'data', namespace: 'default' },
    spec,
    ...extra,
  });
  const valid = { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } };

  it('defaults volumeMode and phase Pending', () => {
    const { obj, causes } = write('/persistentvolumeclaims', claim(valid));
    expect(causes).toEqual([]);
    expect(obj.spec).toEqual({ ...valid, volumeMode: 'Filesystem' });
    expect(obj.status).toEqual({ phase: 'Pending' });
  });

  it.each([
    [
      {},
      [
        'spec.accessModes: Required value: at least 1 access mode is required',
        'spec.resources[storage]: Required value',
      ],
    ],
    [
      { accessModes: ['ReadWriteSometimes'], resources: { requests: { storage: '1Gi' } } },
      [
        'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
      ],
    ],
    [
      { accessModes: ['ReadWriteOncePod', 'ReadOnlyMany'], resources: { requests: { storage: '1Gi' } } },
      ['spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes'],
    ],
    [
      { ...valid, volumeMode: 'Raw' },
      ['spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"'],
    ],
  ])('validates %j', (spec, want) => {
    expect(fieldsOf(write('/persistentvolumeclaims', claim(spec)).causes)).toEqual(want);
  });

  it('allows setting volumeName once and growing a bound claim, nothing else', () => {
    const old = write('/persistentvolumeclaims', claim(valid)).obj;
    const bound = structuredClone(old);
    (bound.spec as Obj).volumeName = 'pv-1';
    expect(write('/persistentvolumeclaims', bound, old).causes).toEqual([]);
    const grown = structuredClone(bound);
    (grown.status as Obj).phase = 'Bound';
    (((grown.spec as Obj).resources as Obj).requests as Obj).storage = '2Gi';
    expect(write('/persistentvolumeclaims', grown, bound).causes).toEqual([]);
    const changed = structuredClone(old);
    (changed.spec as Obj).storageClassName = 'fast';
    const causes = write('/persistentvolumeclaims', changed, old).causes;
    expect(causes[0]!.message).toMatch(
      /^Forbidden: spec is immutable after creation except resources.requests for bound claims\n/,
    );
  });

  it('prints a pending and a bound claim', () => {
    expect(columnNames('/persistentvolumeclaims')).toEqual([
      'Name',
      'Status',
      'Volume',
      'Capacity',
      'Access Modes',
      'StorageClass',
      'VolumeAttributesClass',
      'Age',
      'VolumeMode*',
    ]);
    const pending = {
      metadata: { name: 'data', creationTimestamp: created(10) },
      spec: { ...valid, storageClassName: 'standard' },
      status: { phase: 'Pending' },
    };
    expect(b('/persistentvolumeclaims').row(pending, now)).toEqual([
      'data',
      'Pending',
      '',
      '',
      '',
      'standard',
      '<unset>',
      '10s',
      '<unset>',
    ]);
    const bound = {
      metadata: { name: 'data', creationTimestamp: created(10) },
      spec: { ...valid, volumeName: 'pvc-123', storageClassName: 'standard', volumeMode: 'Filesystem' },
      status: {
        phase: 'Bound',
        accessModes: ['ReadWriteMany', 'ReadWriteOnce'],
        capacity: { storage: '1Gi' },
      },
    };
    expect(b('/persistentvolumeclaims').row(bound, now)).toEqual([
      'data',
      'Bound',
      'pvc-123',
      '1Gi',
      'RWO,RWX',
      'standard',
      '<unset>',
      '10s',
      'Filesystem',
    ]);
  });
});

// Compared with kube-apiserver: type and resource names, a claim's storage bound, and the
// quantities kube prints (Go's %#v of resource.Quantity, the other side's for two of the checks).
describe('limitranges', () => {
  const lr = (limits: Obj[]) => ({ metadata: { name: 'lr', namespace: 'default' }, spec: { limits } });
  const q = (value: number, s: string) =>
    `resource.Quantity{i:resource.int64Amount{value:${value}, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"${s}", Format:"DecimalSI"}`;
  it.each([
    [
      'a type neither standard nor fully qualified, then a fully qualified one',
      [
        { type: 'Widget', max: { cpu: '1' } },
        { type: 'example.com/widget', max: { cpu: '1' } },
      ],
      ['spec.limits[0].type: Invalid value: "Widget": must be a standard limit type or fully qualified'],
    ],
    [
      'a claim without a storage bound',
      [{ type: 'PersistentVolumeClaim', max: { memory: '1Gi' } }],
      [
        'spec.limits[0].limits: Required value: either minimum or maximum storage value is required, but neither was provided',
      ],
    ],
    [
      'a container resource that is not one',
      [{ type: 'Container', max: { pods: '1' } }],
      [
        'spec.limits[0].max[pods]: Invalid value: "pods": must be a standard resource for containers',
        'spec.limits[0].default[pods]: Invalid value: "pods": must be a standard resource for containers',
        'spec.limits[0].defaultRequest[pods]: Invalid value: "pods": must be a standard resource for containers',
      ],
    ],
    [
      'a default above max',
      [{ type: 'Container', max: { cpu: '1' }, default: { cpu: '2' } }],
      [
        `spec.limits[0].defaultRequest[cpu]: Invalid value: ${q(2, '2')}: default request value 2 is greater than max value 1`,
        `spec.limits[0].default[cpu]: Invalid value: ${q(1, '1')}: default value 2 is greater than max value 1`,
      ],
    ],
  ])('validates %s', (_name, limits, want) => {
    expect(fieldsOf(write('/limitranges', lr(limits)).causes)).toEqual(want);
  });
});
