import {
  Client,
  type ClientOptions,
  CustomResourceDefinition,
  type KubeObject,
  Namespace,
  type ResourceDescriptor,
} from 'kubeloop/client';
import type { CustomResourceDefinition as DefinedCrd } from 'kubeloop/schema';
import { startTestEnv, type TestEnv, type TestEnvOptions } from './test-env.js';
import { eventually } from './wait.js';

/** Options of {@link startClientEnv}: the control plane's, and the clients'. */
export interface ClientEnvOptions extends TestEnvOptions {
  /** Options of every client of the env (default: retries after 1 ms instead of backing off). */
  client?: ClientOptions;
}

/** A control plane and a `kubeloop/client` of it, for one test file. */
export interface ClientEnv {
  /** The control plane (with clients of other identities: `env.clientConfigFor`). */
  env: TestEnv;
  client: Client;
  /** Another client of the same control plane with other options (closed by `stop()`). */
  newClient(options?: ClientOptions): Client;
  /** Creates a namespace. */
  namespace(name: string): Promise<void>;
  /** Creates a CRD and waits until its kind is served ({@link installCrd}). */
  installCrd(crd: CustomResourceDefinition | DefinedCrd): Promise<void>;
  /** Closes the clients and stops the control plane. */
  stop(): Promise<void>;
}

/**
 * Starts a {@link startTestEnv} control plane with a `kubeloop/client` of it: what an operator's
 * integration test needs (envtest plus a client). The clients retry after 1 ms, so tests of
 * conflicts and retries do not wait for production back-offs.
 *
 * @example
 * ```ts
 * let t: ClientEnv;
 * beforeAll(async () => {
 *   t = await startClientEnv({ controllers: false });
 *   await t.installCrd(Widget.crd());
 * });
 * afterAll(() => t.stop());
 *
 * it('creates a widget', async () => {
 *   await t.client.api(Widget, 'default').create(Widget.build({ metadata: { name: 'w' }, spec: { size: 1 } }));
 * });
 * ```
 */
export async function startClientEnv(options: ClientEnvOptions = {}): Promise<ClientEnv> {
  const { client: clientOptions, ...envOptions } = options;
  const env = await startTestEnv(envOptions);
  const clients: Client[] = [];
  const newClient = (o: ClientOptions = {}) => {
    const c = new Client(env.clientConfig, { retry: { baseDelayMs: 1 }, ...clientOptions, ...o });
    clients.push(c);
    return c;
  };
  const client = newClient();
  return {
    env,
    client,
    newClient,
    async namespace(name) {
      await client.api(Namespace).create({ metadata: { name } });
    },
    installCrd: (crd) => installCrd(client, crd),
    async stop() {
      await Promise.all(clients.map((c) => c.close()));
      await env.stop();
    },
  };
}

/**
 * Creates a CustomResourceDefinition (a client's object, or `defineResource(…).crd()`) and waits
 * until its kind is served: a list of its first served version answers (in `default` when
 * namespaced). controller-runtime's envtest does the same for the CRDs it installs before a test.
 *
 * @example
 * ```ts
 * await installCrd(client, Widget.crd());
 * await client.api(Widget, 'default').create(Widget.build({ metadata: { name: 'w' }, spec: { size: 1 } }));
 * ```
 */
export async function installCrd(client: Client, crd: CustomResourceDefinition | DefinedCrd): Promise<void> {
  // Both shapes are the same object on the wire; kubeloop/schema's is typed more loosely.
  const object = crd as CustomResourceDefinition;
  await client.api(CustomResourceDefinition).create(object);
  const { group, names, scope, versions } = object.spec;
  const version = versions.find((v) => v.served)?.name ?? versions[0]?.name ?? '';
  const namespaced = scope !== 'Cluster';
  // A complete descriptor: the list does not depend on the client's discovery cache.
  const kind: ResourceDescriptor<KubeObject> = {
    group,
    version,
    kind: names.kind,
    plural: names.plural,
    namespaced,
  };
  await eventually(
    async () => {
      await client.api(kind, namespaced ? 'default' : undefined).list({ limit: 1 });
      return true;
    },
    10_000,
    `the ${names.kind} CRD to be served`,
  );
}
