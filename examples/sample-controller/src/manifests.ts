/**
 * `npm run manifests`: regenerates `config/` (CRD, RBAC, manager, samples, webhooks and
 * cert-manager) and `dist/install.yaml` from the declarations, so the YAML never drifts from the
 * code. `IMG` sets the manager's image (`kubeloop deploy` sets it).
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
  image: process.env.IMG || 'sample-controller:latest',
  resources: [Foo],
  ...createManager({ leaderElection: { id: LEADER_ELECTION_ID } }).permissions,
  samples: [sampleFoo],
  webhooks,
});
// Not the Dockerfile: the sample is built into the local image store (`kubeloop build`) instead.
const written = files.filter((f) => f.path.startsWith('config/') || f.path === 'dist/install.yaml');
await writeGeneratedFiles(root, written);
for (const f of written) process.stdout.write(`wrote ${f.path}\n`);
