/**
 * Making a missing permission loud. An operator whose RBAC lacks a rule otherwise fails quietly
 * in the cluster: its informer never syncs, a reconcile retries forever, and the only trace is an
 * error buried in the logs (seed 003: `genericdaemons.mydomain.com is forbidden: User
 * "system:serviceaccount:default:default" cannot list …`). Here every 403 of the manager's
 * requests is counted by (verb, group, resource), logged with the server's message and a hint
 * naming the declaration that grants it (`.owns(X)`, `.watches(X, …)`, `.needs({...})`), and an
 * informer that may not list or watch its kind keeps the manager's `/readyz` failing until it can.
 */
import type { Logger } from 'pino';
import { ApiError } from '../../api/status.js';
import type { ResourceApi } from '../../client/api.js';
import type { Client } from '../../client/client.js';
import type { KubeObject } from '../../client/types.js';
import { derivePolicyRules, type ManagerPermissions, type PolicyRule } from '../../manifests/rbac.js';
import type { Informer, InformerLifecycleEvent } from '../cache/informer.js';
import { Counter, Gauge, type Registry } from '../prom-client.js';

/** A request the server refused with 403, in RBAC's terms. */
export interface DeniedRequest {
  verb: string;
  /** API group (`''`: core). */
  group: string;
  /** The resource's plural. */
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** The kind, for the hint (`Deployment`). */
  kind: string;
}

/** Methods of a ResourceApi that make one request: their RBAC verb and subresource. */
const METHODS: Record<string, { verb: string; subresource?: string }> = {
  get: { verb: 'get' },
  list: { verb: 'list' },
  create: { verb: 'create' },
  update: { verb: 'update' },
  patch: { verb: 'patch' },
  apply: { verb: 'patch' },
  delete: { verb: 'delete' },
  deleteCollection: { verb: 'deletecollection' },
  getStatus: { verb: 'get', subresource: 'status' },
  updateStatus: { verb: 'update', subresource: 'status' },
  patchStatus: { verb: 'patch', subresource: 'status' },
  applyStatus: { verb: 'patch', subresource: 'status' },
  getScale: { verb: 'get', subresource: 'scale' },
  updateScale: { verb: 'update', subresource: 'scale' },
  patchScale: { verb: 'patch', subresource: 'scale' },
};

const READ_VERBS = new Set(['get', 'list', 'watch']);

const matches = (values: readonly string[] | undefined, value: string) =>
  (values ?? []).some((v) => v === '*' || v === value);

/** Whether `rules` grant `verb` on `group`/`resource` (`resource/subresource` for a subresource). */
export function rulesGrant(
  rules: readonly PolicyRule[],
  verb: string,
  group: string,
  resource: string,
): boolean {
  return rules.some(
    (r) =>
      !r.resourceNames?.length &&
      matches(r.verbs, verb) &&
      matches(r.apiGroups ?? [''], group) &&
      matches(r.resources, resource),
  );
}

/**
 * What to declare so that the generated RBAC grants a refused request — or, when the manager's
 * declarations already grant it, that the RBAC in the cluster is not the generated one.
 *
 * @example
 * ```ts
 * forbiddenHint({ verb: 'list', group: 'apps', resource: 'deployments', kind: 'Deployment' }, manager.permissions);
 * // 'declare it: .watches(Deployment, …) on the controller that reads them (.owns(Deployment) if it creates them), …'
 * ```
 */
export function forbiddenHint(request: DeniedRequest, permissions: ManagerPermissions): string {
  const { verb, group, kind } = request;
  const resource = request.subresource ? `${request.resource}/${request.subresource}` : request.resource;
  let all: PolicyRule[] = [];
  try {
    const derived = derivePolicyRules(permissions);
    all = [...derived.cluster, ...derived.namespaced, ...derived.leaderElection];
  } catch {
    // A declaration RBAC cannot be derived from (a descriptor without its plural): no rule is
    // known to be declared, and the hint says what to declare.
  }
  if (rulesGrant(all, verb, group, resource)) {
    return `the manager declares "${verb}" on "${resource}" in API group "${group}", but the identity it runs as is not granted it: run it under the ServiceAccount of its generated RBAC (config/rbac), applied and regenerated if its declarations changed`;
  }
  const needs = `.needs({ apiGroups: [${JSON.stringify(group)}], resources: [${JSON.stringify(resource)}], verbs: [${JSON.stringify(verb)}] })`;
  let declare: string;
  if (request.subresource) declare = `${needs} on the controller that calls it`;
  else if (READ_VERBS.has(verb))
    declare = `.watches(${kind}, …) on the controller that reads them (.owns(${kind}) if it creates them), or ${needs}`;
  else declare = `.owns(${kind}) on the controller that creates them, or ${needs}`;
  return `declare it: ${declare}; then regenerate the manifests (config/rbac)`;
}

/** The numbers of a {@link PermissionMonitor}, in the manager's registry. */
class PermissionMetrics {
  readonly forbiddenRequests: Counter<'verb' | 'group' | 'resource'>;
  readonly forbiddenInformers: Gauge<'group' | 'resource' | 'namespace'>;

  constructor(registry: Registry) {
    this.forbiddenRequests = new Counter({
      name: 'kubeloop_forbidden_requests_total',
      help: 'Requests of the manager the API server refused with 403 Forbidden, by RBAC verb, API group and resource (resource/subresource)',
      labelNames: ['verb', 'group', 'resource'],
      registers: [registry],
    });
    this.forbiddenInformers = new Gauge({
      name: 'kubeloop_informer_forbidden',
      help: 'Whether an informer of the manager is refused (403 Forbidden) the list or watch of its resource: 1 until it syncs again',
      labelNames: ['group', 'resource', 'namespace'],
      registers: [registry],
    });
  }
}

/**
 * Watches the manager's requests and informers for 403s: counts them
 * (`kubeloop_forbidden_requests_total`, `kubeloop_informer_forbidden`), logs each with a
 * {@link forbiddenHint}, and says whether an informer is forbidden now (the manager is then not
 * ready).
 *
 * @example
 * ```ts
 * const monitor = new PermissionMonitor(registry, log, () => manager.permissions);
 * const client = monitor.client(raw);        // 403s of its requests are reported
 * new InformerFactory(client, { onLifecycle: (e) => monitor.informerEvent(e, factory.informers) });
 * ```
 */
export class PermissionMonitor {
  private readonly metrics: PermissionMetrics;
  /** Informers refused now, by description (their collection). */
  private readonly forbidden = new Map<string, Record<'group' | 'resource' | 'namespace', string>>();
  /** The refused request behind an error a reconcile may rethrow, for its log line. */
  private readonly denied = new WeakMap<object, { request: DeniedRequest; hint: string }>();

  constructor(
    registry: Registry,
    private readonly log: Logger,
    private readonly permissions: () => ManagerPermissions,
  ) {
    this.metrics = new PermissionMetrics(registry);
  }

  /** Whether no informer is refused its list or watch now. */
  get informersAllowed(): boolean {
    return this.forbidden.size === 0;
  }

  /** The collections whose informers are refused now. */
  get forbiddenInformers(): string[] {
    return [...this.forbidden.keys()];
  }

  /** The hint logged for a 403 the manager's client received (e.g. rethrown by a reconcile). */
  hintFor(err: unknown): string | undefined {
    return typeof err === 'object' && err !== null ? this.denied.get(err)?.hint : undefined;
  }

  /** Counts and logs one refused request; returns its hint. */
  private report(request: DeniedRequest, err: unknown, context: Record<string, unknown> = {}): string {
    const hint = forbiddenHint(request, this.permissions());
    const resource = request.subresource ? `${request.resource}/${request.subresource}` : request.resource;
    this.metrics.forbiddenRequests.inc({ verb: request.verb, group: request.group, resource });
    this.log.error(
      {
        err,
        verb: request.verb,
        group: request.group,
        resource,
        ...(request.namespace && { namespace: request.namespace }),
        ...(request.name && { resourceName: request.name }),
        ...context,
        hint,
      },
      `forbidden: ${err instanceof Error ? err.message : String(err)}`,
    );
    return hint;
  }

  /**
   * Follows an informer's lifecycle: a 403 of its list or watch makes it forbidden (counted,
   * logged, the gauge at 1) until a stream of it is accepted again; other failures are logged.
   */
  informerEvent(event: InformerLifecycleEvent, informers: readonly Informer<KubeObject>[]): void {
    const informer = informers.find((i) => i.description === event.resource);
    if (event.type === 'connected' || event.type === 'synced') {
      const labels = this.forbidden.get(event.resource);
      if (!labels) return;
      this.forbidden.delete(event.resource);
      this.metrics.forbiddenInformers.set(labels, 0);
      this.log.info({ informer: event.resource }, 'informer allowed again');
      return;
    }
    if (event.type !== 'error') return;
    if (!(event.error instanceof ApiError) || event.error.code !== 403) {
      // A 401 needs a human as much as a 403 does (the informer's default listener warned). Any
      // other failure is logged as client-go's reflector logs it (its backoff, up to 30 s, bounds
      // how often): an error while the informer cannot list (or sync), so that it says why; a
      // warning for a watch that ends once it has synced.
      const fields = { err: event.error, informer: event.resource, verb: event.verb };
      const listing = event.verb === 'list' || !informer?.hasSynced;
      if (event.auth || listing) this.log.error(fields, event.message);
      else this.log.warn(fields, event.message);
      return;
    }
    const api = informer?.resourceApi;
    const d = api?.descriptor;
    const request: DeniedRequest = {
      verb: event.verb,
      group: d?.group ?? event.error.details?.group ?? '',
      resource: event.error.details?.kind ?? d?.plural ?? event.resource,
      ...(api?.namespace && { namespace: api.namespace }),
      kind: d?.kind ?? event.resource,
    };
    const labels = { group: request.group, resource: request.resource, namespace: request.namespace ?? '' };
    this.forbidden.set(event.resource, labels);
    this.metrics.forbiddenInformers.set(labels, 1);
    this.report(request, event.error, { informer: event.resource });
  }

  /** A client whose refused requests (of `api()`, `forObject()` and the object-level verbs) are reported. */
  client(client: Client): Client {
    const wrapApi = <T extends KubeObject>(api: ResourceApi<T>): ResourceApi<T> =>
      new Proxy(api, {
        get: (target, prop, receiver) => {
          const value = Reflect.get(target, prop, receiver) as unknown;
          if (typeof prop !== 'string' || typeof value !== 'function') return value;
          if (prop === 'inNamespace') return (ns: string) => wrapApi(target.inNamespace(ns));
          const method = METHODS[prop];
          if (!method) return value;
          return async (...args: unknown[]) => {
            try {
              return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            } catch (err) {
              if (err instanceof ApiError && err.code === 403) this.deny(target, method, args, err);
              throw err;
            }
          };
        },
      });
    return new Proxy(client, {
      get: (target, prop, receiver) => {
        if (prop === 'api') return (...args: Parameters<Client['api']>) => wrapApi(target.api(...args));
        if (prop === 'forObject') return (obj: KubeObject) => wrapApi(target.forObject(obj));
        // Object-level verbs call `this.forObject`/`this.api`, which this proxy answers.
        return Reflect.get(target, prop, receiver);
      },
    });
  }

  private deny(
    api: ResourceApi<KubeObject>,
    method: { verb: string; subresource?: string },
    args: unknown[],
    err: ApiError,
  ): void {
    const first = args[0];
    const name =
      typeof first === 'string' ? first : (first as KubeObject | undefined)?.metadata?.name || undefined;
    const d = api.descriptor;
    const request: DeniedRequest = {
      verb: method.verb,
      group: d.group,
      resource: err.details?.kind ?? d.plural ?? d.kind.toLowerCase(),
      ...(method.subresource && { subresource: method.subresource }),
      // A cluster-scoped kind's API still carries the client's default namespace: not the request's.
      ...(api.namespace && d.namespaced !== false && { namespace: api.namespace }),
      ...(name && { name }),
      kind: d.kind,
    };
    // Reported once per error object, however many layers rethrow it.
    if (this.denied.has(err)) return;
    this.denied.set(err, { request, hint: this.report(request, err) });
  }
}
