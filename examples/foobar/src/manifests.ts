/**
 * `kubeloop generate` (`npm run manifests`) runs this: it writes `config/` (CRDs, RBAC derived
 * from the controllers, the manager's Deployment, samples), `dist/install.yaml` and the
 * Dockerfile from the declarations, so the YAML never drifts from the code. `IMG` sets the
 * manager's image (`kubeloop deploy --image` sets it).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateManifests, writeGeneratedFiles } from 'kubeloop/manifests';
import { createManager, LEADER_ELECTION_ID, NAME } from './manager.js';
import { resources } from './resources.js';
import { allWebhooks } from './webhooks.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const generated = generateManifests({
  name: NAME,
  image: process.env.IMG || `${NAME}:latest`,
  resources: resources.map((r) => r.resource),
  samples: resources.flatMap((r) => [...(r.sample ? [r.sample] : []), ...(r.samples ?? [])]),
  // FooBar's conversion: its CRD gets the conversion stanza, config/ the webhook Service and certificate.
  webhooks: allWebhooks,
  ...createManager({ leaderElection: { id: LEADER_ELECTION_ID } }).permissions,
});
// FooBarTask is internal: users never write one, so config/samples gets none (the generator
// gives a kind without a sample a skeleton, which the task's schema would refuse anyway).
const TASK_SKELETON = 'test_v1_foobartask.yaml';
const files = generated
  .filter((f) => f.path !== `config/samples/${TASK_SKELETON}`)
  .map((f) =>
    f.path === 'config/samples/kustomization.yaml'
      ? { ...f, content: f.content.replace(`  - ${TASK_SKELETON}\n`, '') }
      : f,
  );
await writeGeneratedFiles(root, files);
for (const f of files) process.stdout.write(`wrote ${f.path}\n`);
