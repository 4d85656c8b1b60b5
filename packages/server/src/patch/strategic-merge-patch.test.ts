import { ApiError } from 'kubeloop/api';
import { describe, expect, it } from 'vitest';
import { patchMetaForDefinition } from './patch-meta.js';
import { applyStrategicMergePatch } from './strategic-merge-patch.js';

const deploymentMeta = patchMetaForDefinition('io.k8s.api.apps.v1.Deployment');
const serviceMeta = patchMetaForDefinition('io.k8s.api.core.v1.Service');
const configMapMeta = patchMetaForDefinition('io.k8s.api.core.v1.ConfigMap');
const podMeta = patchMetaForDefinition('io.k8s.api.core.v1.Pod');

function deployment(): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'default',
      labels: { app: 'web', tier: 'frontend' },
      finalizers: ['a.example.com/cleanup', 'b.example.com/cleanup'],
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner-a', uid: 'uid-a' },
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner-b', uid: 'uid-b' },
      ],
    },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'nginx:1.25',
              ports: [{ containerPort: 80, protocol: 'TCP' }],
              env: [
                { name: 'A', value: '1' },
                { name: 'B', value: '2' },
              ],
              args: ['--verbose', '--port=80'],
            },
            { name: 'sidecar', image: 'busybox' },
          ],
          tolerations: [
            { key: 'k1', operator: 'Exists', effect: 'NoSchedule' },
            { key: 'k2', operator: 'Exists' },
          ],
          volumes: [{ name: 'config', configMap: { name: 'web-config' } }],
        },
      },
    },
  };
}

type Json = Record<string, unknown>;
const templateSpec = (o: unknown) => ((((o as Json).spec as Json).template as Json).spec as Json) ?? {};
const containers = (o: unknown) => templateSpec(o).containers as Json[];

describe('applyStrategicMergePatch on built-in kinds', () => {
  it('merges containers by name, keeping the fields and containers the patch does not mention', () => {
    const patch = { spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:1.26' }] } } } };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta);
    expect(containers(result)).toStrictEqual([
      { ...containers(deployment())[0], image: 'nginx:1.26' },
      { name: 'sidecar', image: 'busybox' },
    ]);
  });

  it('puts a container with a new name first when the patch does not give an order', () => {
    // Go interleaves the live items with the patch's by the live order; items it cannot place
    // come first (kubectl apply sends $setElementOrder to avoid this).
    const patch = { spec: { template: { spec: { containers: [{ name: 'logger', image: 'fluentd' }] } } } };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta);
    expect(containers(result).map((c) => c.name)).toStrictEqual(['logger', 'app', 'sidecar']);
  });

  it('deletes an env var with $patch: delete and merges another one by name', () => {
    const patch = {
      spec: {
        template: {
          spec: {
            containers: [
              {
                name: 'app',
                env: [
                  { name: 'B', $patch: 'delete' },
                  { name: 'A', value: 'changed' },
                ],
              },
            ],
          },
        },
      },
    };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta);
    expect(containers(result)[0]?.env).toStrictEqual([{ name: 'A', value: 'changed' }]);
  });

  it('merges container ports by containerPort', () => {
    const patch = {
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'app', ports: [{ containerPort: 80, name: 'http' }, { containerPort: 443 }] },
            ],
          },
        },
      },
    };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta);
    expect(containers(result)[0]?.ports).toStrictEqual([
      { containerPort: 80, protocol: 'TCP', name: 'http' },
      { containerPort: 443 },
    ]);
  });

  it('replaces a list without a patch strategy (container args, pod tolerations)', () => {
    const patch = {
      spec: {
        template: {
          spec: {
            containers: [{ name: 'app', args: ['--quiet'] }],
            tolerations: [{ key: 'k3', operator: 'Exists' }],
          },
        },
      },
    };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta);
    expect(containers(result)[0]?.args).toStrictEqual(['--quiet']);
    expect(templateSpec(result).tolerations).toStrictEqual([{ key: 'k3', operator: 'Exists' }]);
  });

  it('switches the Deployment strategy with $retainKeys, clearing rollingUpdate', () => {
    const patch = { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta) as Json;
    expect((result.spec as Json).strategy).toStrictEqual({ type: 'Recreate' });
  });

  it('keeps rollingUpdate when the strategy type changes without $retainKeys', () => {
    const patch = { spec: { strategy: { type: 'Recreate' } } };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta) as Json;
    expect((result.spec as Json).strategy).toStrictEqual({
      type: 'Recreate',
      rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
    });
  });

  it('orders containers by $setElementOrder/containers', () => {
    const patch = {
      spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }] } } },
    };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta);
    expect(containers(result).map((c) => c.name)).toStrictEqual(['sidecar', 'app']);
    expect(JSON.stringify(result)).not.toContain('$setElementOrder');
  });

  it('applies what kubectl apply sends when a container is added in front', () => {
    // kubectl apply's three-way patch: the new container plus the order of the whole list.
    const patch = {
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'init-logger' }, { name: 'app' }, { name: 'sidecar' }],
            containers: [{ name: 'init-logger', image: 'fluentd' }],
          },
        },
      },
    };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta);
    expect(containers(result).map((c) => c.name)).toStrictEqual(['init-logger', 'app', 'sidecar']);
  });

  it('merges ownerReferences by uid', () => {
    const patch = {
      metadata: {
        ownerReferences: [
          { uid: 'uid-b', controller: true },
          { apiVersion: 'v1', kind: 'Secret', name: 'owner-c', uid: 'uid-c' },
        ],
      },
    };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta) as Json;
    expect((result.metadata as Json).ownerReferences).toStrictEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner-a', uid: 'uid-a' },
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner-b', uid: 'uid-b', controller: true },
      { apiVersion: 'v1', kind: 'Secret', name: 'owner-c', uid: 'uid-c' },
    ]);
  });

  it('unions finalizers and removes one with $deleteFromPrimitiveList', () => {
    const added = applyStrategicMergePatch(
      deployment(),
      { metadata: { finalizers: ['b.example.com/cleanup', 'c.example.com/cleanup'] } },
      deploymentMeta,
    ) as Json;
    expect((added.metadata as Json).finalizers).toStrictEqual([
      'a.example.com/cleanup',
      'b.example.com/cleanup',
      'c.example.com/cleanup',
    ]);
    const removed = applyStrategicMergePatch(
      deployment(),
      { metadata: { '$deleteFromPrimitiveList/finalizers': ['a.example.com/cleanup'] } },
      deploymentMeta,
    ) as Json;
    expect((removed.metadata as Json).finalizers).toStrictEqual(['b.example.com/cleanup']);
  });

  it('does not add finalizers when deleting from a list the object does not have', () => {
    const original = { metadata: { name: 'cm' } };
    const patch = { metadata: { '$deleteFromPrimitiveList/finalizers': ['x.example.com/f'] } };
    expect(applyStrategicMergePatch(original, patch, configMapMeta)).toStrictEqual({
      metadata: { name: 'cm' },
    });
  });

  it('deletes a label with null and keeps the others', () => {
    const patch = { metadata: { labels: { tier: null, track: 'stable' } } };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta) as Json;
    expect((result.metadata as Json).labels).toStrictEqual({ app: 'web', track: 'stable' });
  });

  it('removes a ConfigMap data key with null', () => {
    const original = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: { a: '1', b: '2' },
    };
    const result = applyStrategicMergePatch(original, { data: { a: null, c: '3' } }, configMapMeta);
    expect(result).toStrictEqual({ ...original, data: { b: '2', c: '3' } });
  });

  it('merges Service ports by port', () => {
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: {
        selector: { app: 'web' },
        ports: [
          { name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' },
          { name: 'https', port: 443, targetPort: 8443, protocol: 'TCP' },
        ],
      },
    };
    const patch = {
      spec: {
        ports: [
          { port: 80, targetPort: 9090 },
          { name: 'metrics', port: 9100 },
        ],
      },
    };
    const result = applyStrategicMergePatch(service, patch, serviceMeta) as Json;
    expect((result.spec as Json).ports).toStrictEqual([
      { name: 'http', port: 80, targetPort: 9090, protocol: 'TCP' },
      { name: 'metrics', port: 9100 },
      { name: 'https', port: 443, targetPort: 8443, protocol: 'TCP' },
    ]);
  });

  it('switches a volume source with $retainKeys (volumes are merge,retainKeys)', () => {
    const patch = {
      spec: {
        template: {
          spec: {
            volumes: [{ name: 'config', $retainKeys: ['name', 'secret'], secret: { secretName: 's' } }],
          },
        },
      },
    };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta);
    expect(templateSpec(result).volumes).toStrictEqual([{ name: 'config', secret: { secretName: 's' } }]);
  });

  it('merges status conditions by type', () => {
    const pod = {
      status: {
        conditions: [
          { type: 'Ready', status: 'False' },
          { type: 'Initialized', status: 'True' },
        ],
      },
    };
    const result = applyStrategicMergePatch(
      pod,
      { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      podMeta,
    ) as Json;
    expect((result.status as Json).conditions).toStrictEqual([
      { type: 'Ready', status: 'True' },
      { type: 'Initialized', status: 'True' },
    ]);
  });

  it('replaces a whole list with a $patch: replace element', () => {
    const patch = {
      spec: { template: { spec: { containers: [{ $patch: 'replace' }, { name: 'only', image: 'x' }] } } },
    };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta);
    expect(containers(result)).toStrictEqual([{ name: 'only', image: 'x' }]);
  });

  it('replaces a whole map with $patch: replace', () => {
    const patch = { metadata: { labels: { $patch: 'replace', only: 'this' } } };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta) as Json;
    expect((result.metadata as Json).labels).toStrictEqual({ only: 'this' });
  });

  it('empties a map with $patch: delete', () => {
    const patch = { spec: { template: { metadata: { labels: { $patch: 'delete' } } } } };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta) as Json;
    expect(((result.spec as Json).template as Json).metadata).toStrictEqual({ labels: {} });
  });
});

describe('directives in values the patch adds', () => {
  it('drops elements carrying $patch from a list the object did not have', () => {
    const patch = {
      spec: {
        template: {
          spec: {
            initContainers: [
              { name: 'init', image: 'busybox' },
              { name: 'gone', $patch: 'delete' },
            ],
          },
        },
      },
    };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta);
    expect(templateSpec(result).initContainers).toStrictEqual([{ name: 'init', image: 'busybox' }]);
  });

  it('never leaves directive keys in the result', () => {
    const patch = {
      metadata: { annotations: { $patch: 'replace', note: 'x' } },
      spec: {
        template: {
          spec: {
            securityContext: { $retainKeys: ['runAsUser'], runAsUser: 1000 },
            containers: [{ name: 'app', resources: { '$setElementOrder/claims': [], limits: { cpu: '1' } } }],
          },
        },
      },
    };
    const result = applyStrategicMergePatch(deployment(), patch, deploymentMeta);
    const text = JSON.stringify(result);
    expect(text).not.toMatch(/\$patch|\$retainKeys|\$setElementOrder|\$deleteFromPrimitiveList/);
    expect(templateSpec(result).securityContext).toStrictEqual({ runAsUser: 1000 });
    expect(containers(result)[0]?.resources).toStrictEqual({ limits: { cpu: '1' } });
  });

  it('drops nulls from values the patch adds', () => {
    const original = { metadata: { name: 'c' } };
    const result = applyStrategicMergePatch(
      original,
      { metadata: { annotations: { a: '1', b: null } } },
      configMapMeta,
    );
    expect(result).toStrictEqual({ metadata: { name: 'c', annotations: { a: '1' } } });
  });

  it('keeps $ref and $schema, which are real fields of CRD schemas', () => {
    const original = { spec: { x: 1 } };
    const patch = {
      spec: { schema: { $ref: '#/definitions/a', $schema: 'http://json-schema.org/draft-04/schema' } },
    };
    expect(applyStrategicMergePatch(original, patch, undefined)).toStrictEqual({
      spec: { x: 1, schema: { $ref: '#/definitions/a', $schema: 'http://json-schema.org/draft-04/schema' } },
    });
  });
});

describe('without patch metadata', () => {
  it('merges maps and replaces lists like a JSON merge patch', () => {
    const original = { spec: { items: [{ name: 'a' }, { name: 'b' }], config: { x: 1, y: 2 } } };
    const patch = { spec: { items: [{ name: 'c' }], config: { y: null, z: 3 } } };
    expect(applyStrategicMergePatch(original, patch, undefined)).toStrictEqual({
      spec: { items: [{ name: 'c' }], config: { x: 1, z: 3 } },
    });
  });
});

describe('inputs and outputs', () => {
  it('never modifies its inputs', () => {
    const original = deployment();
    const patch = {
      metadata: { labels: { tier: null } },
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'sidecar', $patch: 'delete' },
              { name: 'app', image: 'x' },
            ],
          },
        },
      },
    };
    const originalCopy = structuredClone(original);
    const patchCopy = structuredClone(patch);
    applyStrategicMergePatch(original, patch, deploymentMeta);
    expect(original).toStrictEqual(originalCopy);
    expect(patch).toStrictEqual(patchCopy);
  });

  it('treats a null patch as an empty one', () => {
    expect(applyStrategicMergePatch(deployment(), null, deploymentMeta)).toStrictEqual(deployment());
  });

  it('treats keys named like Object.prototype members as plain data', () => {
    const original = JSON.parse('{"data":{"constructor":"a"}}') as unknown;
    const patch = JSON.parse('{"data":{"__proto__":{"polluted":true},"toString":"b"}}') as unknown;
    const result = applyStrategicMergePatch(original, patch, configMapMeta) as Json;
    expect(Object.keys(result.data as Json)).toStrictEqual(['constructor', '__proto__', 'toString']);
    expect(({} as Json).polluted).toBeUndefined();
  });
});

describe('errors, as kube-apiserver reports them', () => {
  const statusOf = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      if (err instanceof ApiError) return err.status;
      throw err;
    }
    throw new Error('expected an ApiError');
  };

  it('a list element without its merge key: 500 with the library message', () => {
    const patch = { spec: { template: { spec: { containers: [{ image: 'nginx' }] } } } };
    expect(statusOf(() => applyStrategicMergePatch(deployment(), patch, deploymentMeta))).toStrictEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'map: map[image:nginx] does not contain declared merge key: name',
      code: 500,
    });
  });

  it('an unknown $patch directive on a map: 500', () => {
    const patch = { metadata: { labels: { $patch: 'merge', a: 'b' } } };
    expect(statusOf(() => applyStrategicMergePatch(deployment(), patch, deploymentMeta))).toMatchObject({
      code: 500,
      message: 'unknown patch type: merge in map: map[$patch:merge a:b]',
    });
  });

  it('$patch: merge on a list element: 500', () => {
    const patch = { spec: { template: { spec: { containers: [{ name: 'app', $patch: 'merge' }] } } } };
    expect(statusOf(() => applyStrategicMergePatch(deployment(), patch, deploymentMeta))).toMatchObject({
      code: 500,
      message: 'merging lists cannot yet be specified in the patch',
    });
  });

  it('a $setElementOrder list that contradicts the patch list: 500', () => {
    const patch = {
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }],
            containers: [
              { name: 'sidecar', image: 'x' },
              { name: 'app', image: 'y' },
            ],
          },
        },
      },
    };
    const status = statusOf(() => applyStrategicMergePatch(deployment(), patch, deploymentMeta));
    expect(status.code).toBe(500);
    expect(status.message).toBe(
      "The order in patch list:\n[map[image:x name:sidecar] map[image:y name:app]]\n doesn't match $setElementOrder list:\n[map[name:app] map[name:sidecar]]\n",
    );
  });

  it('a list of lists: 422 without detail', () => {
    const original = { metadata: { finalizers: [] } };
    const patch = { metadata: { finalizers: [['b']] } };
    expect(statusOf(() => applyStrategicMergePatch(original, patch, configMapMeta))).toStrictEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server rejected our request due to an error in our request',
      reason: 'Invalid',
      details: {},
      code: 422,
    });
  });

  it('list elements of different types: 500', () => {
    const original = { metadata: { finalizers: ['a'] } };
    const patch = { metadata: { finalizers: [1] } };
    expect(statusOf(() => applyStrategicMergePatch(original, patch, configMapMeta))).toMatchObject({
      code: 500,
      message: 'list element types are not identical: [[a] [1]]',
    });
  });

  it('a body that is not an object: 400', () => {
    expect(statusOf(() => applyStrategicMergePatch(deployment(), [], deploymentMeta))).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'json: cannot unmarshal array into Go value of type map[string]interface {}',
    });
    expect(statusOf(() => applyStrategicMergePatch(deployment(), 'x', deploymentMeta))).toMatchObject({
      code: 400,
      message: 'json: cannot unmarshal string into Go value of type map[string]interface {}',
    });
  });

  it('a malformed $retainKeys: 400', () => {
    const patch = { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: { maxSurge: 1 } } } };
    expect(statusOf(() => applyStrategicMergePatch(deployment(), patch, deploymentMeta))).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'invalid patch format of retainKeys',
    });
  });
});
