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
const files = generateManifests({
  name: NAME,
  image: process.env.IMG || `${NAME}:latest`,
  resources: resources.map((r) => r.resource),
  samples: resources.flatMap((r) => (r.sample ? [r.sample] : [])),
  webhooks: allWebhooks,
  ...createManager({ leaderElection: { id: LEADER_ELECTION_ID } }).permissions,
});
await writeGeneratedFiles(root, files);
for (const f of files) process.stdout.write(`wrote ${f.path}\n`);
