/**
 * What kube-apiserver checks before it hands a `pods/log`, `pods/exec` or `pods/attach` request to
 * the pod's kubelet (`pkg/registry/core/pod/strategy.go`): the pod, its container (defaulted when
 * the pod has only one), its node.
 */
import { ApiError } from 'kubeloop/api';
import type { Registry } from '../../registry/registry.js';
import type { RestStorage } from '../../registry/rest.js';

// biome-ignore lint/suspicious/noExplicitAny: a pod is read loosely, as the JSON it is
export type PodObject = Record<string, any>;

/** The pod named by a request (a frozen copy of the stored object); NotFound like a GET. */
export function getPod(rest: RestStorage, registry: Registry, namespace: string, name: string): PodObject {
  const t = registry.lookup('', 'v1', 'pods');
  if (!t) throw ApiError.internal('pods are not served');
  return rest.get(t, namespace, name).object as PodObject;
}

/** Every container name of a pod: init, regular and ephemeral (as `podutil.VisitContainers`). */
function allContainerNames(pod: PodObject): string[] {
  const names = (list: PodObject[] | undefined) => (list ?? []).map((c) => String(c.name));
  return [
    ...names(pod.spec?.initContainers),
    ...names(pod.spec?.containers),
    ...names(pod.spec?.ephemeralContainers),
  ];
}

/**
 * The container a request is for: the one named, which must exist, or the only container of the
 * pod. The errors are kube-apiserver's `validateContainer`.
 */
export function validateContainer(pod: PodObject, container: string): string {
  const name = String(pod.metadata?.name ?? '');
  if (container === '') {
    const containers: PodObject[] = pod.spec?.containers ?? [];
    if (containers.length === 1) return String(containers[0]!.name);
    if (containers.length === 0)
      throw ApiError.badRequest(`a container name must be specified for pod ${name}`);
    throw ApiError.badRequest(
      `a container name must be specified for pod ${name}, choose one of: [${allContainerNames(pod).join(' ')}]`,
    );
  }
  if (!allContainerNames(pod).includes(container))
    throw ApiError.badRequest(`container ${container} is not valid for pod ${name}`);
  return container;
}

/** The status of one container of a pod, if the kubelet wrote one. */
export function containerStatus(pod: PodObject, container: string): PodObject | undefined {
  const all: PodObject[] = [
    ...(pod.status?.containerStatuses ?? []),
    ...(pod.status?.initContainerStatuses ?? []),
    ...(pod.status?.ephemeralContainerStatuses ?? []),
  ];
  return all.find((s) => s.name === container);
}

/** A boolean query parameter as Go's `strconv.ParseBool` reads it (`1`, `t`, `true`, ...). */
export function boolParam(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  return v !== null && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v);
}
