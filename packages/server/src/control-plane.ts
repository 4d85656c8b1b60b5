import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { dirname } from 'node:path';
import type { Clock } from 'kubeloop/runtime';
import { builtinAdmission } from './admission/chain.js';
import type { AdmissionOptions } from './admission/options.js';
import { policyMetrics } from './admission/policy/metrics.js';
import type { PolicyPluginDeps } from './admission/policy/plugin.js';
import { PolicyStatusController } from './admission/policy/status-controller.js';
import { admitConnect } from './admission/webhook/connect.js';
import { CrdController } from './apiextensions/crd-controller.js';
import { manageFields, manageScaleFields } from './apply/hooks.js';
import { AuditListeners, type AuditOptions } from './audit/index.js';
import { Authenticator, type UserInfo } from './auth/authentication/index.js';
import { issuerDiscovery } from './auth/authentication/issuer-discovery.js';
import {
  LEGACY_TOKEN_LAST_USED_LABEL,
  ServiceAccountTokens,
} from './auth/authentication/service-account-token.js';
import { ServiceAccountSigningKey } from './auth/authentication/signing-key.js';
import { reconcileBootstrapPolicy } from './auth/authorization/bootstrap-policy/index.js';
import { type AuthorizationMode, createAuthorizer } from './auth/authorization/index.js';
import {
  type CertificateUsage,
  createCertificateAuthority,
  issueClientCertificate,
  issueServingCertificate,
  type KeyPair,
  signCertificateRequest,
} from './auth/pki.js';
import type { BuiltinControllers } from './controllers/builtin.js';
import type { Kubelet, SimulatedNodesOptions } from './controllers/kubelet/kubelet.js';
import type { SimulatedRuntime } from './controllers/kubelet/runtime.js';
import { Discovery } from './discovery/discovery.js';
import { ApiServer } from './http/api-server.js';
import { Faults } from './http/faults.js';
import { ApiMetrics } from './http/metrics.js';
import { podStreamingHandlers } from './http/streaming/index.js';
import type { PortForwardTarget } from './http/streaming/portforward.js';
import { type Loopback, startLoopback } from './loopback.js';
import { metricsKinds } from './metrics/metrics-api.js';
import { createOpenApiEndpoints } from './openapi-endpoints.js';
import { serviceAllocator } from './registry/allocators.js';
import {
  ensureSystemNamespacesAndService,
  ensureSystemPriorityClasses,
  syncLocalAPIServices,
} from './registry/cluster-objects.js';
import { FlowControlBootstrap } from './registry/flowcontrol/bootstrap.js';
import { NamespaceController } from './registry/namespace-controller.js';
import { Registry } from './registry/registry.js';
import { RestStorage } from './registry/rest.js';
import type { ResourceType } from './registry/types.js';
import { Compactor, DEFAULT_COMPACTION_INTERVAL_MS } from './storage/compactor.js';
import { type Journal, MemoryJournal } from './storage/journal.js';
import { Store } from './storage/store.js';
import type { Obj } from './util/object.js';

/** Options of {@link startControlPlane}; the audit options are kube-apiserver's `--audit-*` flags. */
export interface ControlPlaneOptions extends AuditOptions {
  /** Address to listen on (default 127.0.0.1: loopback only). */
  host?: string;
  /** Port (default 6443); 0 picks a free one. */
  port?: number;
  /** Durable storage in this directory (SQLite); in memory when omitted. */
  dataDir?: string;
  /** Where to write the admin kubeconfig; not written when omitted. */
  kubeconfigPath?: string;
  /**
   * Events kept in memory for watch resume and consistent pagination (default 10,000). In memory,
   * older revisions get 410 Gone; with `dataDir`, they are read from disk down to the last compaction.
   */
  watchHistorySize?: number;
  /**
   * With `dataDir`: how often the history on disk is compacted, as kube-apiserver's
   * `--etcd-compaction-interval` (default 5 minutes; 0: never). Each compaction forgets the
   * changes made before the previous one, so a watch can resume from any revision of the last
   * one to two intervals (also after a restart) and the data file stays bounded.
   */
  compactionIntervalMs?: number;
  /** Interval of BOOKMARK events on watches that allow them (default 15 s). */
  bookmarkIntervalMs?: number;
  /** Name of the cluster, context and user in the kubeconfig (default `kubeloop`). */
  name?: string;
  /** Where warnings and errors go (default: stderr as JSON lines). */
  log?: (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
  /**
   * Run the built-in controllers of kube-controller-manager (default true): the garbage
   * collector and the ClusterRole aggregation controller, and with simulated nodes their kubelet, the scheduler and the Deployment, ReplicaSet,
   * ReplicationController, DaemonSet, StatefulSet, Job, CronJob, Endpoints, disruption (PDB),
   * resource quota, horizontal pod autoscaler, persistent volume and CSR signing controllers, with
   * the metrics API and a default StorageClass. `false`: a bare API server (the
   * namespace and CRD controllers still run; `admin`, `edit` and `view` get no rules).
   */
  controllers?: boolean;
  /**
   * Resolve only once the built-in controllers have filled their caches and the simulated nodes
   * are registered (default false; `startTestEnv`: true), so that a test's first scenario does not
   * pay for their start. A server's readiness never waits for them otherwise.
   */
  waitForControllers?: boolean;
  /**
   * Simulated nodes and their kubelet (default: one node, `kubeloop-node-1`; `startTestEnv`:
   * none). Pods bound to them run, and are deleted gracefully; the scheduler and the workload
   * controllers (Deployment, ReplicaSet, DaemonSet, StatefulSet, Job) and Endpoints run with them (without nodes, workloads stay untouched, as in envtest).
   */
  nodes?: SimulatedNodesOptions;
  /**
   * Where `kubectl port-forward` connections go: a function that, for a pod and a port, connects
   * a duplex stream (e.g. to a local process). Default: refused as containerd refuses a port
   * nothing listens on, since a simulated pod runs nothing.
   */
  portForward?: PortForwardTarget;
  /**
   * The wall clock (`now()`: ms since the epoch) of the time-driven controllers: CronJob
   * schedules, HPA stabilization. Tests pass a `FakeClock` of `kubeloop/runtime` and move it.
   */
  clock?: Clock;
  /**
   * kube-apiserver's `--authorization-mode`: `RBAC` (default) allows what Roles and bindings
   * grant, `AlwaysAllow` everything; in both, `system:masters` may do anything.
   */
  authorizationMode?: AuthorizationMode;
}

/** Connection settings for a client of the control plane. */
export interface ClientConfig {
  server: string;
  token: string;
  /** PEM of the cluster CA. */
  caData: string;
}

/** A running local control plane. */
export interface ControlPlane {
  /** `https://127.0.0.1:<port>` */
  readonly url: string;
  /** The admin kubeconfig (YAML). */
  readonly kubeconfig: string;
  /** Where the kubeconfig was written, when it was. */
  readonly kubeconfigPath: string | undefined;
  readonly clientConfig: ClientConfig;
  /** Fault injection for reliability tests. */
  readonly faults: Faults;
  /** The audit stage's listeners: every authenticated request, with its user (for tests). */
  readonly audit: AuditListeners;
  /** The storage (for white-box checks in tests). */
  readonly store: Store;
  readonly registry: Registry;
  /**
   * Mints a client certificate signed by the cluster CA: the server authenticates it as `user`
   * (subject CN) in `groups` (subject O), like kube-apiserver's x509 authenticator.
   */
  issueClientCertificate(user: string, groups?: readonly string[]): Promise<KeyPair>;
  /**
   * Resolves once the server has settled: the built-in controllers started and their caches
   * synced (at once without controllers). Never rejects.
   */
  readonly settled: Promise<void>;
  /** Stops serving, ends every connection, flushes and closes storage. Idempotent. */
  stop(): Promise<void>;
}

const META_CA = 'ca';
const META_TOKEN = 'admin-token';
const META_SA_KEY = 'service-account-key';

const defaultLog: NonNullable<ControlPlaneOptions['log']> = (level, msg, fields) => {
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), msg, ...fields })}\n`);
};

/**
 * Starts the local Kubernetes-compatible control plane: an HTTPS API server with its storage,
 * built-in kinds and namespace controllers.
 *
 * @example
 * ```ts
 * const cp = await startControlPlane({ port: 0, kubeconfigPath: '.kubeloop/kubeconfig' });
 * console.log(`kubectl --kubeconfig .kubeloop/kubeconfig get ns  # ${cp.url}`);
 * await cp.stop();
 * ```
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? defaultLog;
  const name = options.name ?? 'kubeloop';
  // SQLite (and its native addon) loads only for durable storage.
  const journal: Journal = options.dataDir
    ? (await import('./storage/sqlite-journal.js')).openSqliteJournal(options.dataDir)
    : new MemoryJournal();

  try {
    const { ca, token } = await credentials(journal);
    const store = Store.open({
      journal,
      ...(options.watchHistorySize !== undefined && { historySize: options.watchHistorySize }),
    });
    const compactor = options.dataDir
      ? new Compactor(store, {
          intervalMs: options.compactionIntervalMs ?? DEFAULT_COMPACTION_INTERVAL_MS,
          log,
        })
      : undefined;
    compactor?.start();
    const registry = new Registry();
    // metrics-server's API, where simulated kubelets have usage to report.
    if (options.controllers !== false && (options.nodes?.count ?? 1) > 0)
      registry.register(...metricsKinds(store, (p) => kubelet?.processes?.usage(p.metadata?.uid ?? '')));
    const metrics = new ApiMetrics(store, registry);
    const policyDeps: PolicyPluginDeps = { registry, metrics: policyMetrics(metrics.registry) };
    const admission = builtinAdmission(store, policyDeps);
    admission.webhooks?.metrics.register(metrics.registry);
    const { authorizer, policy } = createAuthorizer(options.authorizationMode ?? 'RBAC', store);
    policyDeps.authorizer = authorizer;
    let kubelet: Kubelet | undefined;
    const rest = new RestStorage(store, registry, {
      mutate: admission.mutate,
      admit: admission.validate,
      allocate: serviceAllocator(store),
      hasKubelet: (node) => kubelet?.runs(node) ?? false,
      manageFields,
      manageScaleFields,
      authorization: { authorizer, policy },
    });
    const crds = new CrdController(rest, log);
    crds.recordConversionsIn(metrics.registry);
    admission.addValidating((op, t) => {
      if (op === 'CREATE') crds.admitCreate(t);
    });
    const faults = new Faults();
    const audit = new AuditListeners();
    // The audit backend loads only with a policy: without one no event is ever built.
    const auditor = options.auditPolicyFile
      ? (await import('./audit/auditor.js')).Auditor.open(options)
      : undefined;
    let address = `${host}:${options.port ?? 6443}`;
    const discovery = new Discovery(registry, () => address);
    const version = versionInfo();
    const openapi = createOpenApiEndpoints(registry, version.gitVersion!);
    // The built-in components call the API with tokens of their own, one per user they act as
    // (`controllers/identities.ts`), so that fault injection (meant for the client under test)
    // leaves their requests alone.
    const controllerToken = randomBytes(32).toString('base64url');
    const users = new Map<string, UserInfo>([
      [token, { username: 'kubeloop-admin', groups: ['system:masters', 'system:authenticated'] }],
      [
        controllerToken,
        { username: 'system:kube-controller-manager', groups: ['system:masters', 'system:authenticated'] },
      ],
    ]);
    const componentTokens = new Set([`Bearer ${controllerToken}`]);
    const componentCredentials = new Map<string, string>();
    const credentialsFor = (identity: { username: string; groups: readonly string[] }): string => {
      let t = componentCredentials.get(identity.username);
      if (!t) {
        t = randomBytes(32).toString('base64url');
        componentCredentials.set(identity.username, t);
        // Each component is its own user, held to the permissions the bootstrap policy gives it.
        users.set(t, { username: identity.username, groups: [...identity.groups] });
        componentTokens.add(`Bearer ${t}`);
      }
      return t;
    };
    // Service account tokens are signed with an RSA key kept beside the CA, so they stay valid
    // across restarts; one authenticates while its ServiceAccount (and bound object) exists.
    const saKey = new ServiceAccountSigningKey(
      { get: () => journal.getMeta(META_SA_KEY), set: (pem) => journal.setMeta(META_SA_KEY, pem) },
      (msg, fields) => log('warn', msg, fields),
    );
    const saTokens = new ServiceAccountTokens(
      saKey,
      (resource, ns, n) => {
        const t = registry.lookup('', 'v1', resource);
        return t
          ? (rest.store.get(rest.key(t, ns, n))?.object as Record<string, unknown> | undefined)
          : undefined;
      },
      undefined,
      () => options.clock?.now() ?? Date.now(),
      // The legacy token's day of use, in the background: the request does not wait for it.
      (secret, today) => {
        const t = registry.lookup('', 'v1', 'secrets')!;
        rest
          .patch(t, secret.namespace, secret.name, undefined, { dryRun: false }, (current) => {
            const next = structuredClone(current);
            const meta = next.metadata as { uid?: string; labels?: Record<string, string> };
            if (meta.uid !== secret.uid) throw new Error('secret replaced');
            meta.labels = { ...meta.labels, [LEGACY_TOKEN_LAST_USED_LABEL]: today };
            return next;
          })
          .catch(() => undefined);
      },
    );
    const authenticator = new Authenticator({ tokens: users, serviceAccounts: saTokens });
    let ready = false;
    // The simulated containers: the kubelet drives them, the streaming subresources read them.
    // Made (and its shell, files and programs loaded) with the kubelet, after ready.
    let runtime: SimulatedRuntime | undefined;
    const api = new ApiServer({
      rest,
      registry,
      discovery,
      openapi,
      faults,
      audit,
      ...(auditor && { auditor }),
      exemptFromFaults: (req) => componentTokens.has(req.headers.authorization ?? ''),
      authenticator,
      authorizer,
      issueServiceAccountToken: (sa, request) => saTokens.issue(sa, request),
      serviceAccountIssuerDiscovery: issuerDiscovery(saKey, () =>
        host.includes(':')
          ? `https://[${host}]:${address.slice(address.lastIndexOf(':') + 1)}`
          : `https://${address}`,
      ),
      version,
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 15_000,
      ready: () => ready,
      metrics,
      log,
      ...(admission.webhooks && {
        admitSubresource: async (t: ResourceType, obj: Obj, options: AdmissionOptions) => {
          await admission.webhooks?.mutate('CREATE', t, obj, undefined, options);
          await admission.webhooks?.validate('CREATE', t, obj, undefined, options);
        },
      }),
      connect: admitConnect(
        admission.webhooks,
        registry,
        podStreamingHandlers({
          rest,
          registry,
          runtime: () => (kubelet ? runtime : undefined),
          hasKubelet: (node) => kubelet?.runs(node) ?? false,
          log,
          // A process-backed pod's ports are its processes'; every other pod refuses, as before.
          portForward: options.portForward ?? (async (c) => kubelet?.processes?.connect(c.uid, c.port)),
        }),
      ),
    });

    await ensureSystemNamespacesAndService(rest, registry);
    // The rbac/bootstrap-roles post-start hook: the 1.32 bootstrap policy, created or topped up.
    await reconcileBootstrapPolicy(rest, registry, { log });
    await ensureSystemPriorityClasses(rest, registry);
    // The priority-and-fairness-config-producer post-start hook: APF's bootstrap configuration.
    const apf = new FlowControlBootstrap(rest, registry, log);
    await apf.start();
    await syncLocalAPIServices(rest, registry);
    // CRD groups come and go: autoregister keeps their Local APIServices in step.
    registry.onChange(() => {
      syncLocalAPIServices(rest, registry).catch((err: unknown) =>
        log('warn', 'syncing Local APIServices failed', { error: String(err) }),
      );
    });
    const namespaces = new NamespaceController(rest, { caCert: ca.cert, log });
    namespaces.start();
    await crds.start();
    const policyStatus = new PolicyStatusController(rest, registry, log);
    policyStatus.start();
    const serving = await issueServingCertificate(ca, ['localhost', '127.0.0.1', '::1', host]);
    // Client certificates are asked for but not required: they are checked per request, and a
    // connection without one (or with one the CA did not sign) falls back to its bearer token.
    const server = createServer(
      {
        cert: serving.cert,
        key: serving.key,
        ca: ca.cert,
        requestCert: true,
        rejectUnauthorized: false,
        // Go's http.DefaultMaxHeaderBytes (1 MiB): long label selectors need more than Node's 16 KiB.
        maxHeaderSize: 1 << 20,
        ServerResponse: ApiServer.Response,
      },
      api.listener,
    );
    server.on('upgrade', api.upgradeListener);
    server.on('clientError', api.clientError);
    server.keepAliveTimeout = 60_000;
    server.headersTimeout = 65_000;
    server.requestTimeout = 0; // watches are long-lived
    const sockets = new Set<Socket>();
    server.on('secureConnection', (s) => {
      // A handshake that completes while stopping would otherwise keep server.close() waiting.
      if (stopping) {
        s.destroy();
        return;
      }
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    server.on('tlsClientError', () => {
      // A client that fails the TLS handshake (wrong CA, port scan) is not the server's problem.
    });
    await listen(server, options.port ?? 6443, host);
    const port = (server.address() as AddressInfo).port;
    address = `${host}:${port}`;
    const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
    ready = true;

    // Controllers talk to the server over HTTPS like any operator; they start in the background
    // so that readiness does not wait for their informers to sync.
    // The built-in controllers (and the client and runtime they need) load after the server is
    // ready: start-up and a bare server's memory stay small, and nothing waits for them.
    let controllers: BuiltinControllers | undefined;
    let loopback: Loopback | undefined;
    const controllersStarting =
      options.controllers === false
        ? Promise.resolve()
        : Promise.all([
            import('./controllers/builtin.js'),
            import('./controllers/kubelet/runtime.js'),
            startLoopback(api.listener),
          ]).then(
            ([m, r, lo]) => {
              loopback = lo;
              if (stopping) return;
              runtime = new r.SimulatedRuntime({
                get: (resource, ns, n) => {
                  const t = registry.lookup('', 'v1', resource);
                  return t
                    ? (rest.store.get(rest.key(t, ns, n))?.object as Record<string, unknown> | undefined)
                    : undefined;
                },
              });
              controllers = m.startBuiltinControllers({
                server: url,
                socketPath: lo?.socketPath,
                token: controllerToken,
                credentials: credentialsFor,
                caData: ca.cert,
                nodes: options.nodes,
                runtime,
                log,
                clock: options.clock,
                sign: (request, usages, notAfter) =>
                  signCertificateRequest(ca, request, usages as CertificateUsage[], notAfter),
                issueLegacyToken: (sa, secretName) => saTokens.issueLegacy(sa, secretName),
              });
              kubelet = controllers.kubelet;
            },
            (err: unknown) => log('error', 'built-in controllers failed to start', { err: String(err) }),
          );

    const kubeconfig = renderKubeconfig({ name, server: url, caCert: ca.cert, token });
    if (options.kubeconfigPath) {
      mkdirSync(dirname(options.kubeconfigPath), { recursive: true });
      writeFileSync(options.kubeconfigPath, kubeconfig, { mode: 0o600 });
    }

    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        ready = false;
        await controllersStarting;
        await controllers?.stop();
        await loopback?.close();
        namespaces.stop();
        policyStatus.stop();
        apf.stop();
        policy.close();
        crds.stop();
        admission.webhooks?.close();
        faults.dropWatches();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          for (const s of sockets) s.destroy();
        });
        await compactor?.stop();
        // A key still being generated is stored before the storage closes.
        await saKey.settled();
        await store.close();
        auditor?.close();
      })();
      return stopping;
    };

    if (options.waitForControllers) {
      await controllersStarting;
      // Best effort: a controller that cannot sync says so in the log, and the server still serves.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        controllers?.waitForSync(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, 10_000);
          timer.unref();
        }),
      ]).catch((err: unknown) => log('warn', 'built-in controllers did not sync', { err: String(err) }));
      clearTimeout(timer);
    }

    const settled = controllersStarting
      .then(() => controllers?.waitForSync())
      .then(
        () => undefined,
        () => undefined,
      );

    return {
      url,
      kubeconfig,
      kubeconfigPath: options.kubeconfigPath,
      clientConfig: { server: url, token, caData: ca.cert },
      faults,
      audit,
      store,
      registry,
      issueClientCertificate: async (user, groups) => issueClientCertificate(ca, user, groups),
      settled,
      stop,
    };
  } catch (err) {
    await journal.close().catch(() => undefined);
    throw err;
  }
}

/** The CA and admin token: kept in the data directory so kubeconfigs stay valid across restarts. */
async function credentials(journal: Journal): Promise<{ ca: KeyPair; token: string }> {
  const storedCa = journal.getMeta(META_CA);
  let ca: KeyPair;
  if (storedCa) ca = JSON.parse(storedCa) as KeyPair;
  else {
    ca = await createCertificateAuthority();
    journal.setMeta(META_CA, JSON.stringify(ca));
  }
  let token = journal.getMeta(META_TOKEN);
  if (!token) {
    token = randomBytes(32).toString('base64url');
    journal.setMeta(META_TOKEN, token);
  }
  return { ca, token };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function versionInfo(): Record<string, string> {
  return {
    major: '1',
    minor: '32',
    gitVersion: 'v1.32.0-kubeloop',
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'kubeloop',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}

/** A kubeconfig for the admin user of a control plane. */
export function renderKubeconfig(o: { name: string; server: string; caCert: string; token: string }): string {
  const ca = Buffer.from(o.caCert).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${o.name}`,
    '  cluster:',
    `    server: ${o.server}`,
    `    certificate-authority-data: ${ca}`,
    'users:',
    `- name: ${o.name}-admin`,
    '  user:',
    `    token: ${o.token}`,
    'contexts:',
    `- name: ${o.name}`,
    '  context:',
    `    cluster: ${o.name}`,
    `    user: ${o.name}-admin`,
    '    namespace: default',
    `current-context: ${o.name}`,
    'preferences: {}',
    '',
  ].join('\n');
}
