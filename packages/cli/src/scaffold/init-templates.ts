/**
 * The files of a new project (`kubeloop init`): a standalone npm package whose scripts mirror
 * kubebuilder's Makefile targets, a strict tsconfig of its own, the manager's entry point, the
 * test set-up on `@kubeloop/server/testing`, README, .gitignore. `config/` and the Dockerfile
 * come from `kubeloop generate` (the project's `src/manifests.ts`), as `make manifests` writes them.
 */

/** How the project depends on kubeloop's three packages: a version range, or tarballs. */
export interface KubeloopSource {
  kubeloop: string;
  server: string;
  cli: string;
  /** Pin every copy to these (a tarball's dependents ask for the version). */
  overrides: boolean;
}

/** What the templates need. */
export interface InitOptions {
  name: string;
  domain: string;
  source: KubeloopSource;
  /** TypeScript, @types/node and vitest ranges of the project. */
  typescript: string;
  typesNode: string;
  vitest: string;
}

/** The project's `package.json`. */
export function packageJson(o: InitOptions): string {
  const pkg = {
    name: o.name,
    version: '0.1.0',
    private: true,
    description: `${o.name}: a Kubernetes operator written with kubeloop`,
    type: 'module',
    engines: { node: '>=20.18' },
    // kubebuilder's Makefile targets. `install` is npm's own lifecycle script (it would run at
    // every `npm install`): installing the CRDs is `install-crds` here.
    scripts: {
      build: 'tsc -b',
      // vitest, as kubeloop's own tests: it runs the TypeScript sources (no stale dist/), and a
      // project scaffolded inside kubeloop's repository runs under the repository's vitest as is.
      test: 'kubeloop generate && vitest run',
      manifests: 'kubeloop generate',
      'install-crds': 'kubeloop install',
      'uninstall-crds': 'kubeloop uninstall',
      run: 'kubeloop run',
      dev: 'kubeloop dev',
      deploy: 'kubeloop deploy',
      undeploy: 'kubeloop undeploy',
      start: 'node dist/main.js',
    },
    dependencies: { kubeloop: o.source.kubeloop },
    devDependencies: {
      '@kubeloop/cli': o.source.cli,
      '@kubeloop/server': o.source.server,
      '@types/node': o.typesNode,
      typescript: o.typescript,
      vitest: o.vitest,
    },
    ...(o.source.overrides && {
      overrides: { kubeloop: '$kubeloop', '@kubeloop/server': '$@kubeloop/server' },
    }),
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/** A strict tsconfig of the project's own (no path outside it). */
export function tsconfigJson(): string {
  const config = {
    compilerOptions: {
      target: 'ES2023',
      lib: ['ES2023'],
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noUncheckedIndexedAccess: true,
      noImplicitOverride: true,
      noFallthroughCasesInSwitch: true,
      verbatimModuleSyntax: true,
      isolatedModules: true,
      skipLibCheck: true,
      sourceMap: true,
      rootDir: 'src',
      outDir: 'dist',
      tsBuildInfoFile: 'dist/.tsbuildinfo',
      incremental: true,
      types: ['node'],
    },
    include: ['src/**/*.ts'],
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** `vitest.config.ts`: the tests beside the code in src/ (not their compiled copies in dist/). */
export function vitestConfigTs(): string {
  return `import { defineConfig } from 'vitest/config';

// Each test file starts its own local control plane: allow it the time a loaded machine takes.
export default defineConfig({
  test: { include: ['src/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 60_000 },
});
`;
}

/**
 * `src/main.ts`: the entry point. It sets the process's memory settings (`tuneOperatorHeap`)
 * before the operator's modules load, which only a dynamic import of them allows (a static
 * import graph is loaded before any code of it runs).
 */
export function mainTs(): string {
  return `/**
 * The operator's entry point: \`node dist/main.js [--leader-elect] [--metrics-bind-address=:8080]
 * [--health-probe-bind-address=:8081] [--max-concurrent-reconciles=N]\` (\`--help\` lists them),
 * against the in-cluster config or \`KUBECONFIG\`. The operator is in start.ts.
 */
import { tuneOperatorHeap } from 'kubeloop/young-generation';

// This process is the operator's alone: a small young generation, the old one collected when it
// has grown by half (~25 MB less RSS for the same CPU). Set before the operator's modules load:
// loading them alone would grow the young generation.
tuneOperatorHeap();
await import('./start.js');
`;
}

/** `src/start.ts`: the manager, with kubebuilder's flags read by `kubeloop/runtime`. */
export function startTs(): string {
  return `/** The operator, loaded by main.ts: the manager, with kubebuilder's flags read by \`kubeloop/runtime\`. */
import { managerFlags } from 'kubeloop/runtime';
import { createManager, LEADER_ELECTION_ID } from './manager.js';

await createManager(managerFlags(process.argv.slice(2), { leaderElectionId: LEADER_ELECTION_ID })).start();
`;
}

/** `src/manager.ts`: the manager and its controllers (`kubeloop create api` registers each here). */
export function managerTs(o: InitOptions): string {
  return `import { Manager, type ManagerOptions } from 'kubeloop/runtime';
// +kubeloop:scaffold:imports

/** The project's name: prefix of its objects' names, and of its namespace (\`${o.name}-system\`). */
export const NAME = '${o.name}';

/** The Lease of leader election (\`--leader-elect\`). */
export const LEADER_ELECTION_ID = '${o.name}.${o.domain}';

/** The operator's manager, with every controller of the project. */
export function createManager(options: ManagerOptions = {}): Manager {
  const manager = new Manager({ name: NAME, ...options });
  // +kubeloop:scaffold:controllers
  return manager;
}
`;
}

/** `src/resources.ts`: the kinds the project defines (`kubeloop create api` adds each here). */
export function resourcesTs(): string {
  return `import type { KubeObject } from 'kubeloop/client';
import type { CrdSource } from 'kubeloop/manifests';
// +kubeloop:scaffold:imports

/** The kinds the project defines, each with the example \`config/samples\` gets. */
export const resources: Array<{ resource: CrdSource; sample?: KubeObject }> = [
  // +kubeloop:scaffold:resources
];
`;
}

/** `src/manifests.ts`: `kubeloop generate` runs it to write \`config/\` from the declarations. */
export function manifestsTs(): string {
  return `/**
 * \`kubeloop generate\` (\`npm run manifests\`) runs this: it writes \`config/\` (CRDs, RBAC derived
 * from the controllers, the manager's Deployment, samples), \`dist/install.yaml\` and the
 * Dockerfile from the declarations, so the YAML never drifts from the code. \`IMG\` sets the
 * manager's image (\`kubeloop deploy --image\` sets it).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateManifests, writeGeneratedFiles } from 'kubeloop/manifests';
import { createManager, LEADER_ELECTION_ID, NAME } from './manager.js';
import { resources } from './resources.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const files = generateManifests({
  name: NAME,
  image: process.env.IMG || \`\${NAME}:latest\`,
  resources: resources.map((r) => r.resource),
  samples: resources.flatMap((r) => (r.sample ? [r.sample] : [])),
  ...createManager({ leaderElection: { id: LEADER_ELECTION_ID } }).permissions,
});
// Only the files whose content changed are written (each whole, by a rename).
const written = await writeGeneratedFiles(root, files);
for (const f of written) process.stdout.write(\`wrote \${f}\\n\`);
if (written.length < files.length) process.stdout.write(\`\${files.length - written.length} file(s) unchanged\\n\`);
`;
}

/** `src/testing/env.ts`: the test set-up, envtest's `suite_test.go`. */
export function testEnvTs(): string {
  return `/**
 * The test set-up of the controllers' tests (kubebuilder's \`suite_test.go\`): a fresh local
 * control plane with the project's CRDs (from \`config/crd\`, as envtest's CRDDirectoryPaths), a
 * client, and the operator's manager running against it.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestEnv, type TestEnv } from '@kubeloop/server/testing';
import { Client } from 'kubeloop/client';
import type { Manager } from 'kubeloop/runtime';
import { createManager } from '../manager.js';

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
 * (as with envtest, pods stay Pending): pass \`{ nodes: 1 }\` for pods to run.
 */
export async function startOperatorTestEnv(options: { nodes?: number } = {}): Promise<OperatorTestEnv> {
  process.env.LOG_LEVEL ??= 'warn';
  const env = await startTestEnv({
    crdDirectoryPaths: [join(root, 'config/crd')],
    nodes: { count: options.nodes ?? 0 },
  });
  const client = new Client(env.clientConfig);
  const manager = createManager({
    client,
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
`;
}

/** `.gitignore`. */
export function gitignore(): string {
  // dist/ holds the build, except dist/install.yaml: `kubeloop generate` renders it to be
  // committed, as kubebuilder's `make build-installer` (users install with kubectl apply -f <its URL>).
  return ['node_modules/', 'dist/*', '!dist/install.yaml', '*.tsbuildinfo', '.kubeloop/', '*.log', ''].join(
    '\n',
  );
}

/** The project's README. */
export function readme(o: InitOptions): string {
  return `# ${o.name}

A Kubernetes operator written in TypeScript with [kubeloop](https://github.com/kubeloop/kubeloop).

| command                   | what it does (kubebuilder's make target)                                                             |
| ------------------------- | ---------------------------------------------------------------------------------------------------- |
| \`npx kubeloop create api\` | a new kind (\`--group --version --kind\`): its declaration, controller, test, sample                   |
| \`npm run build\`           | compile \`src/\` into \`dist/\` (\`make build\`)                                                             |
| \`npm run manifests\`       | regenerate \`config/\` (CRDs, RBAC, manager, samples) from the code (\`make manifests\`)                   |
| \`npx kubeloop create webhook\` | webhooks of a kind (\`--defaulting --programmatic-validation\`): its defaulter, validator, test   |
| \`npm test\`                | the controllers' and webhooks' tests (vitest), on a local control plane (\`make test\`)               |
| \`npm run dev\`             | a local control plane, the CRDs, the operator (rebuilt on changes) and its samples                    |
| \`npm run install-crds\`    | install the CRDs into the cluster of the current kubeconfig (\`make install\`)                         |
| \`npm run uninstall-crds\`  | remove them (\`make uninstall\`)                                                                       |
| \`npm run run\`             | run the operator against the current kubeconfig (\`make run\`)                                         |
| \`npm run deploy -- --image IMG\` | deploy the operator (\`make deploy IMG=…\`); \`kubectl apply -k config/default\` does the same      |
| \`npm run undeploy\`        | remove it (\`make undeploy\`)                                                                          |

(\`install\` is npm's own lifecycle script, run at every \`npm install\`: hence \`install-crds\`.)

Layout: \`src/api/<group>/<version>/<kind>.ts\` declares each kind, \`src/controller/<kind>.ts\`
reconciles it (with its test beside it), \`src/manager.ts\` registers the controllers,
\`src/start.ts\` starts the manager (\`src/main.ts\`, the entry point, loads it), \`src/manifests.ts\` writes \`config/\`. \`PROJECT\` records what
was scaffolded.
`;
}
