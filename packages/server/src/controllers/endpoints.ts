/**
 * The Endpoints and EndpointSlice controllers of kube-controller-manager: for every Service with
 * a selector, an Endpoints object of the same name listing the IPs of the matching pods — ready
 * ones in `addresses`, others in `notReadyAddresses` — with the Service's ports resolved against
 * each pod; and `discovery.k8s.io/v1` EndpointSlices (`<service>-xxxxx`, labelled
 * `kubernetes.io/service-name`) with one endpoint per pod and its ready / serving / terminating
 * conditions. Both are written by one controller of Services on the manager's shared cache.
 */
import type { Client, KubeObject, ResourceDescriptor } from 'kubeloop/client';
import { Endpoints, isAlreadyExists, isConflict, isNotFound, Node, Pod, Service } from 'kubeloop/client';
import {
  type CacheReader,
  type ControllerDefinition,
  controller,
  defaultControllerRateLimiter,
  type ReconcileContext,
} from 'kubeloop/runtime';
import { controllerRefTo } from './claim.js';

type Subset = NonNullable<Endpoints['subsets']>[number];
type Address = NonNullable<Subset['addresses']>[number];
type EndpointPort = NonNullable<Subset['ports']>[number];
type ServicePort = NonNullable<NonNullable<Service['spec']>['ports']>[number];

const ready = (p: Pod): boolean =>
  (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** `ShouldPodBeInEndpoints`: a pod with an IP, not being deleted, and not finished for good. */
function shouldBeInEndpoints(p: Pod): boolean {
  if (p.metadata?.deletionTimestamp || !p.status?.podIP) return false;
  const phase = p.status.phase;
  switch (p.spec?.restartPolicy) {
    case 'Never':
      return phase !== 'Failed' && phase !== 'Succeeded';
    case 'OnFailure':
      return phase !== 'Succeeded';
    default:
      return true;
  }
}

const selects = (selector: Record<string, string>, labels: Record<string, string> | undefined) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** `FindPort`: a named target port is looked up among the pod's container ports. */
function resolvePort(pod: Pod, sp: ServicePort): number | undefined {
  const target = sp.targetPort ?? sp.port;
  if (typeof target === 'number') return target;
  const asNumber = Number(target);
  if (target !== '' && Number.isInteger(asNumber)) return asNumber;
  for (const c of pod.spec?.containers ?? [])
    for (const p of c.ports ?? [])
      if (p.name === target && (p.protocol ?? 'TCP') === (sp.protocol ?? 'TCP')) return p.containerPort;
  return undefined;
}

const portKey = (p: EndpointPort) => `${p.name ?? ''}/${p.port}/${p.protocol ?? 'TCP'}`;

/** A port of an EndpointSlice (`discovery.k8s.io/v1` EndpointPort). */
export interface SlicePort {
  name: string;
  port: number;
  protocol: string;
  appProtocol?: string;
}

/** An endpoint of an EndpointSlice. */
export interface SliceEndpoint {
  addresses: string[];
  conditions: { ready: boolean; serving: boolean; terminating: boolean };
  hostname?: string;
  nodeName?: string;
  zone?: string;
  targetRef: { kind: 'Pod'; namespace: string; name: string; uid: string };
}

/** A `discovery.k8s.io/v1` EndpointSlice. */
export interface EndpointSlice extends KubeObject {
  addressType: string;
  endpoints?: SliceEndpoint[] | null;
  ports?: SlicePort[] | null;
}

/** The descriptor of EndpointSlices (the SDK's client has none yet). */
export const EndpointSliceKind: ResourceDescriptor<EndpointSlice> = Object.freeze({
  group: 'discovery.k8s.io',
  version: 'v1',
  kind: 'EndpointSlice',
  plural: 'endpointslices',
  namespaced: true,
});

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const SLICE_CONTROLLER = 'endpointslice-controller.k8s.io';
const HEADLESS_LABEL = 'service.kubernetes.io/headless';
/** `--max-endpoints-per-slice` default of kube-controller-manager. */
const MAX_ENDPOINTS_PER_SLICE = 100;

/**
 * The contents of a Service's EndpointSlices (`reconciler.reconcile`): pods grouped by the ports
 * they resolve, at most 100 endpoints a slice; one empty placeholder slice when there are none.
 * Terminating pods are listed (not ready, serving while still Ready, terminating).
 */
export function sliceContents(
  service: Service,
  pods: readonly Pod[],
  zoneOf: (node: string) => string | undefined = () => undefined,
): Array<{ ports: SlicePort[]; endpoints: SliceEndpoint[] }> {
  const spec = service.spec ?? {};
  const name = service.metadata?.name ?? '';
  const groups = new Map<string, { ports: SlicePort[]; endpoints: SliceEndpoint[] }>();
  for (const pod of pods) {
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed' || !pod.status?.podIP) continue;
    const ports: SlicePort[] = [];
    for (const sp of spec.ports ?? []) {
      const port = resolvePort(pod, sp);
      if (port === undefined) continue;
      ports.push({
        name: sp.name ?? '',
        port,
        protocol: sp.protocol ?? 'TCP',
        ...(sp.appProtocol && { appProtocol: sp.appProtocol }),
      });
    }
    const serving = ready(pod);
    const terminating = Boolean(pod.metadata?.deletionTimestamp);
    const zone = pod.spec?.nodeName ? zoneOf(pod.spec.nodeName) : undefined;
    const endpoint: SliceEndpoint = {
      addresses: [pod.status.podIP],
      conditions: {
        ready: spec.publishNotReadyAddresses === true || (serving && !terminating),
        serving,
        terminating,
      },
      ...(pod.spec?.hostname && pod.spec.subdomain === name && { hostname: pod.spec.hostname }),
      ...(pod.spec?.nodeName && { nodeName: pod.spec.nodeName }),
      ...(zone && { zone }),
      targetRef: {
        kind: 'Pod',
        namespace: pod.metadata?.namespace ?? '',
        name: pod.metadata?.name ?? '',
        uid: pod.metadata?.uid ?? '',
      },
    };
    const key = JSON.stringify(ports);
    const g = groups.get(key) ?? { ports, endpoints: [] };
    groups.set(key, g);
    g.endpoints.push(endpoint);
  }
  const out: Array<{ ports: SlicePort[]; endpoints: SliceEndpoint[] }> = [];
  for (const [, g] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    g.endpoints.sort(
      (a, b) =>
        (a.addresses[0] ?? '').localeCompare(b.addresses[0] ?? '') ||
        a.targetRef.name.localeCompare(b.targetRef.name),
    );
    for (let i = 0; i < g.endpoints.length; i += MAX_ENDPOINTS_PER_SLICE)
      out.push({ ports: g.ports, endpoints: g.endpoints.slice(i, i + MAX_ENDPOINTS_PER_SLICE) });
  }
  if (out.length === 0) out.push({ ports: [], endpoints: [] });
  return out;
}

/** The labels of a Service's slices (`setEndpointSliceLabels`): the Service's, plus the reserved ones. */
function sliceLabels(service: Service): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(service.metadata?.labels ?? {}))
    if (k !== SERVICE_NAME_LABEL && k !== MANAGED_BY_LABEL && k !== HEADLESS_LABEL) labels[k] = v;
  if (!service.spec?.clusterIP || service.spec.clusterIP === 'None') labels[HEADLESS_LABEL] = '';
  labels[SERVICE_NAME_LABEL] = service.metadata?.name ?? '';
  labels[MANAGED_BY_LABEL] = SLICE_CONTROLLER;
  return labels;
}

/**
 * The subsets of a Service's Endpoints, packed as `RepackSubsets` does: addresses that expose
 * the same ports share a subset; addresses sorted by IP, ports by name.
 */
export function endpointSubsets(service: Service, pods: readonly Pod[]): Subset[] {
  const spec = service.spec ?? {};
  const publishNotReady = spec.publishNotReadyAddresses === true;
  const name = service.metadata?.name ?? '';
  const groups = new Map<string, { ports: EndpointPort[]; ready: Address[]; notReady: Address[] }>();
  for (const pod of pods) {
    if (!shouldBeInEndpoints(pod)) continue;
    const address: Address = {
      ip: pod.status?.podIP ?? '',
      ...(pod.spec?.hostname && pod.spec.subdomain === name && { hostname: pod.spec.hostname }),
      ...(pod.spec?.nodeName && { nodeName: pod.spec.nodeName }),
      targetRef: {
        kind: 'Pod',
        namespace: pod.metadata?.namespace ?? '',
        name: pod.metadata?.name ?? '',
        uid: pod.metadata?.uid ?? '',
      },
    };
    const ports: EndpointPort[] = [];
    for (const sp of spec.ports ?? []) {
      const port = resolvePort(pod, sp);
      if (port === undefined) continue;
      ports.push({
        ...(sp.name && { name: sp.name }),
        port,
        protocol: sp.protocol ?? 'TCP',
        ...(sp.appProtocol && { appProtocol: sp.appProtocol }),
      });
    }
    // A pod that resolves none of several ports serves nothing; a Service without ports (headless) lists it anyway.
    if (ports.length === 0 && (spec.ports ?? []).length > 0) continue;
    ports.sort((a, b) => portKey(a).localeCompare(portKey(b)));
    const key = ports.map(portKey).join(',');
    const g = groups.get(key) ?? { ports, ready: [], notReady: [] };
    groups.set(key, g);
    // A pod being terminated is filtered above; a running pod that is not Ready is listed apart
    // unless the Service publishes not-ready addresses.
    if (publishNotReady || ready(pod)) g.ready.push(address);
    else g.notReady.push(address);
  }
  const byIp = (a: Address, b: Address) =>
    a.ip.localeCompare(b.ip) || (a.targetRef?.name ?? '').localeCompare(b.targetRef?.name ?? '');
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, g]) => ({
      ...(g.ready.length > 0 && { addresses: g.ready.sort(byIp) }),
      ...(g.notReady.length > 0 && { notReadyAddresses: g.notReady.sort(byIp) }),
      ...(g.ports.length > 0 && { ports: g.ports }),
    }));
}

/** A node's zone label (`topology.kubernetes.io/zone`), as EndpointSlices carry it. */
const zoneOfNode = (n: Node): string | undefined => n.metadata?.labels?.['topology.kubernetes.io/zone'];

/** A failure the next attempt resolves (a write raced another): retried without a log line. */
const quiet = (err: unknown) => isConflict(err) || isAlreadyExists(err);

/**
 * The Endpoints controller, as a kubeloop controller of Services on the manager's shared cache:
 * a Service is reconciled when it changes, when a pod it selects (before or after the change)
 * changes, when someone else changes or deletes its Endpoints or EndpointSlices (they are put
 * back as they should be), and when the zone label of a node its pods run on changes (nodes
 * are watched through their metadata only).
 */
export function endpointsController(
  options: {
    /**
     * The client the EndpointSlices are written with (default: the reconcile's): kube's
     * EndpointSlice controller is another controller, under its own ServiceAccount.
     */
    slices?: Client;
  } = {},
): ControllerDefinition<Service> {
  const noCreate = { create: () => false };
  const requestOf = (svc: Service) => ({
    namespace: svc.metadata?.namespace ?? '',
    name: svc.metadata?.name ?? '',
  });
  return (
    controller(Service)
      .named('endpoints')
      // A pod change concerns the Services that select it before or after the change (the map
      // sees both states of an update).
      .watches(Pod, (p, cache) =>
        cache
          .list(Service, { namespace: p.metadata?.namespace ?? '' })
          .filter((svc) => svc.spec?.selector && selects(svc.spec.selector, p.metadata?.labels))
          .map(requestOf),
      )
      // Someone else changed or deleted an Endpoints object (or a slice): put it back.
      .watches(Endpoints, (e) => [{ namespace: e.metadata?.namespace ?? '', name: e.metadata?.name ?? '' }], {
        predicates: [noCreate],
      })
      .watches(
        EndpointSliceKind,
        (es) => {
          const service = es.metadata?.labels?.[SERVICE_NAME_LABEL];
          return service && es.metadata?.labels?.[MANAGED_BY_LABEL] === SLICE_CONTROLLER
            ? [{ namespace: es.metadata?.namespace ?? '', name: service }]
            : [];
        },
        { predicates: [noCreate] },
      )
      // A node's zone is in the slices of every Service with a pod there: the Services of the
      // namespaces with a pod on the node are looked at again. The whole Nodes, as kube's
      // controller reads them: the scheduler and the DaemonSet controller cache them anyway (one
      // watch of Nodes, not a second one of their metadata).
      .watches(
        Node,
        (n, cache) => {
          const node = n.metadata?.name ?? '';
          const namespaces = new Set(
            cache
              .list(Pod)
              .filter((p) => p.spec?.nodeName === node)
              .map((p) => p.metadata?.namespace ?? ''),
          );
          return cache
            .list(Service)
            .filter((svc) => namespaces.has(svc.metadata?.namespace ?? ''))
            .map(requestOf);
        },
        { predicates: [{ update: (o, n) => zoneOfNode(o) !== zoneOfNode(n) }] },
      )
      .withOptions({
        maxConcurrentReconciles: 2,
        rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
      })
      // Services without a selector own no Endpoints, but once the Service is gone its Endpoints go too.
      .onGone(async ({ namespace, name }, { client, cache }) => {
        const current = await cache.get(Endpoints, name, namespace);
        if (!current) return;
        try {
          await client
            .api(Endpoints, namespace)
            .delete(name, { preconditions: { uid: current.metadata?.uid ?? '' } });
        } catch (err) {
          if (!isNotFound(err) && !isConflict(err)) throw err;
        }
      })
      .reconcile(async (svc, ctx) => {
        try {
          await reconcileService(svc, ctx, options.slices ?? ctx.client);
        } catch (err) {
          if (quiet(err)) return { requeue: true };
          throw err;
        }
        return undefined;
      })
  );
}

/** One Service: writes its EndpointSlices and Endpoints. */
async function reconcileService(
  svc: Service,
  { client, cache }: ReconcileContext,
  slicesClient: Client,
): Promise<void> {
  const namespace = svc.metadata?.namespace ?? '';
  const name = svc.metadata?.name ?? '';
  const selector = svc.spec?.selector;
  // Without a selector the user manages the Endpoints; ExternalName Services have none.
  if (!selector || svc.spec?.type === 'ExternalName') return;
  const pods = (await cache.list(Pod, { namespace })).filter((p) => selects(selector, p.metadata?.labels));
  const nodes = new Set(pods.flatMap((p) => (p.spec?.nodeName ? [p.spec.nodeName] : [])));
  const zones = new Map<string, string | undefined>();
  for (const node of nodes) {
    const n = await cache.get(Node, node);
    zones.set(node, n ? zoneOfNode(n) : undefined);
  }
  await syncSlices(slicesClient, cache, svc, pods, (node) => zones.get(node));
  const api = client.api(Endpoints, namespace);
  const current = await cache.get(Endpoints, name, namespace);
  const subsets = endpointSubsets(svc, pods);
  const labels: Record<string, string> = { ...svc.metadata?.labels };
  if (svc.spec?.clusterIP === 'None') labels['service.kubernetes.io/headless'] = '';
  else delete labels['service.kubernetes.io/headless'];

  if (
    current &&
    JSON.stringify(current.subsets ?? []) === JSON.stringify(subsets) &&
    JSON.stringify(current.metadata?.labels ?? {}) === JSON.stringify(labels)
  )
    return;
  const body: Endpoints = {
    metadata: {
      name,
      namespace,
      ...(Object.keys(labels).length > 0 && { labels }),
      ...(current?.metadata?.annotations && { annotations: current.metadata.annotations }),
      ...(current?.metadata?.resourceVersion && { resourceVersion: current.metadata.resourceVersion }),
    },
    ...(subsets.length > 0 && { subsets }),
  };
  if (current) await api.update(body);
  else await api.create(body);
}

/**
 * Brings a Service's EndpointSlices to {@link sliceContents}: existing slices of the same ports
 * are reused (fewest writes), missing ones created, surplus ones deleted.
 */
async function syncSlices(
  client: Client,
  cache: CacheReader,
  svc: Service,
  pods: readonly Pod[],
  zoneOf: (node: string) => string | undefined,
): Promise<void> {
  const namespace = svc.metadata?.namespace ?? '';
  const name = svc.metadata?.name ?? '';
  const api = client.api(EndpointSliceKind, namespace);
  const labels = sliceLabels(svc);
  const existing = (
    await cache.list(EndpointSliceKind, {
      namespace,
      labelSelector: { [SERVICE_NAME_LABEL]: name, [MANAGED_BY_LABEL]: SLICE_CONTROLLER },
    })
  ).sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  const unused = new Set(existing);
  const ownerReferences = [controllerRefTo(svc, 'Service', 'v1')];
  const writes: Promise<unknown>[] = [];
  for (const want of sliceContents(svc, pods, zoneOf)) {
    const key = JSON.stringify(want.ports);
    const same = [...unused].find((es) => JSON.stringify(es.ports ?? []) === key);
    if (same) {
      unused.delete(same);
      if (
        JSON.stringify(same.endpoints ?? []) === JSON.stringify(want.endpoints) &&
        JSON.stringify(same.metadata?.labels ?? {}) === JSON.stringify(labels)
      )
        continue;
      writes.push(
        api.update({
          ...same,
          metadata: { ...same.metadata, labels, ownerReferences },
          addressType: same.addressType,
          ports: want.ports,
          endpoints: want.endpoints,
        }),
      );
      continue;
    }
    writes.push(
      api.create({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { generateName: `${name}-`, labels, ownerReferences },
        addressType: svc.spec?.ipFamilies?.[0] ?? 'IPv4',
        ports: want.ports,
        endpoints: want.endpoints,
      }),
    );
  }
  for (const es of unused)
    writes.push(
      api.delete(es.metadata?.name ?? '', { preconditions: { uid: es.metadata?.uid ?? '' } }).catch((err) => {
        if (!isNotFound(err) && !isConflict(err)) throw err;
      }),
    );
  const results = await Promise.allSettled(writes);
  const failure = results.find((r) => r.status === 'rejected');
  if (failure) throw (failure as PromiseRejectedResult).reason;
}
