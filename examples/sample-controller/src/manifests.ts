/**
 * `npm run manifests`: regenerates `config/` (CRD, RBAC, manager, samples, webhooks and
 * cert-manager) from the declarations, so the YAML never drifts from the code.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateManifests, writeGeneratedFiles } from 'kubeloop/manifests';
import { Foo } from './api/foo.js';
import { createManager, LEADER_ELECTION_ID } from './operator.js';
import { webhooks } from './webhooks.js';

/** The sample applied by `kubeloop dev`. */
export const sampleFoo: Foo = {
  apiVersion: 'samplecontroller.k8s.io/v1alpha1',
  kind: 'Foo',
  metadata: { name: 'example-foo' },
  spec: { deploymentName: 'example-foo', replicas: 1 },
};

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const files = generateManifests({
  name: 'sample-controller',
  image: 'sample-controller:latest',
  resources: [Foo],
  ...createManager({ leaderElection: { id: LEADER_ELECTION_ID } }).permissions,
  samples: [sampleFoo],
  webhooks,
});
await writeGeneratedFiles(
  root,
  files.filter((f) => f.path.startsWith('config/')),
);
for (const f of files) if (f.path.startsWith('config/')) process.stdout.write(`wrote ${f.path}\n`);
