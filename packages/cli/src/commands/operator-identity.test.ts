/**
 * The operator's RBAC as `kubeloop dev`/`run` install it: config/rbac with config/default's name
 * prefix and namespace, the way `kubectl apply -k config/default` would apply them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readProjectRbac } from './operator-identity.js';

const example = fileURLToPath(new URL('../../../../examples/sample-controller', import.meta.url));

describe('readProjectRbac', () => {
  it("names and places the sample's RBAC as config/default does", async () => {
    const rbac = await readProjectRbac(example);
    expect(rbac?.serviceAccount).toEqual({
      namespace: 'sample-controller-system',
      name: 'sample-controller-controller-manager',
    });
    const byId = new Map(
      rbac?.objects.map((o) => [`${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}`, o]),
    );
    // The kind editor/viewer roles come along, bound to nobody, as kustomize installs them.
    expect([...byId.keys()].sort()).toEqual([
      'ClusterRole /sample-controller-foo-editor-role',
      'ClusterRole /sample-controller-foo-viewer-role',
      'ClusterRole /sample-controller-manager-role',
      'ClusterRoleBinding /sample-controller-manager-rolebinding',
      'Role sample-controller-system/sample-controller-leader-election-role',
      'RoleBinding sample-controller-system/sample-controller-leader-election-rolebinding',
      'ServiceAccount sample-controller-system/sample-controller-controller-manager',
    ]);
    expect(
      byId.get('RoleBinding sample-controller-system/sample-controller-leader-election-rolebinding'),
    ).toMatchObject({
      roleRef: { kind: 'Role', name: 'sample-controller-leader-election-role' },
      subjects: [
        {
          kind: 'ServiceAccount',
          name: 'sample-controller-controller-manager',
          namespace: 'sample-controller-system',
        },
      ],
    });
  });

  it('is undefined for a project whose manifests were never generated', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-no-rbac-'));
    try {
      expect(await readProjectRbac(dir)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
