/**
 * The test set-up of the controllers' tests (kubebuilder's `suite_test.go`): a fresh local
 * control plane with the project's CRDs (from `config/crd`, as envtest's CRDDirectoryPaths), a
 * client, and the operator's manager running against it.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestEnv, type TestEnv } from '@kubeloop/server/testing';
import { Client } from 'kubeloop/client';
import type { Manager } from 'kubeloop/runtime';
import { createManager } from '../manager.js';
import type { MemberApi } from '../members.js';

export { eventually } from '@kubeloop/server/testing';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** A running test environment. */
export interface OperatorTestEnv {
  readonly env: TestEnv;
  /** An admin client of the env. */
  readonly client: Client;
  readonly manager: Manager;
  stop(): Promise<void>;
}

/**
 * Starts a control plane with the project's CRDs and the manager on it. No simulated node runs
 * (as with envtest, pods stay Pending): pass `{ nodes: 1 }` for pods to run. `members` is the
 * etcd member API the operator uses (default: a fresh in-process one).
 */
export async function startOperatorTestEnv(
  options: { nodes?: number; members?: MemberApi } = {},
): Promise<OperatorTestEnv> {
  process.env.LOG_LEVEL ??= 'warn';
  const env = await startTestEnv({
    crdDirectoryPaths: [join(root, 'config/crd')],
    nodes: { count: options.nodes ?? 0 },
  });
  const client = new Client(env.clientConfig);
  const manager = createManager({
    client,
    ...(options.members && { members: options.members }),
    handleSignals: false,
    metricsAddress: false,
    healthProbeAddress: false,
  });
  const running = manager.start();
  running.catch(() => undefined);
  await manager.ready();
  return {
    env,
    client,
    manager,
    async stop() {
      await manager.stop();
      await client.close();
      await env.stop();
    },
  };
}
