/**
 * What a process-backed container's `securityContext` can honestly mean on this machine.
 *
 * - `runAsNonRoot` is checked as the kubelet checks it (pkg/kubelet/kuberuntime,
 *   verifyRunAsNonRoot) against the user the container would run as in a cluster: the effective
 *   `runAsUser` (the container's, else the pod's), else the image's `USER` ({@link LocalImage}'s
 *   `user`; an image without one runs as root). A violation keeps the container waiting with
 *   `CreateContainerConfigError` and kube's message, so a manifest a cluster would refuse is
 *   refused here too. `kubeloop build` declares `65532:65532`, as kubebuilder's Dockerfile.
 * - The process itself runs as the control plane's user: `runAsUser`, `runAsGroup`,
 *   `fsGroup`, capabilities, seccomp and `readOnlyRootFilesystem` are not applied (switching
 *   users needs root, and the switched-to user could not read the image store nor the pod's
 *   files; the others need a container runtime).
 */
import type { LocalImage } from './images.js';

// biome-ignore lint/suspicious/noExplicitAny: pods are read loosely, as the JSON they are
type Obj = Record<string, any>;

/** The `runAsNonRoot` violation of a container, in kube's words; undefined when there is none. */
export function runAsNonRootError(pod: Obj, spec: Obj, image: Pick<LocalImage, 'user'>): string | undefined {
  const podSc = pod.spec?.securityContext ?? {};
  const sc = spec.securityContext ?? {};
  if ((sc.runAsNonRoot ?? podSc.runAsNonRoot) !== true) return undefined;
  const m = pod.metadata ?? {};
  const where = `(pod: ${JSON.stringify(`${m.name}_${m.namespace}(${m.uid})`)}, container: ${spec.name})`;
  const runAsUser = sc.runAsUser ?? podSc.runAsUser;
  if (runAsUser !== undefined && runAsUser !== null)
    return Number(runAsUser) === 0 ? `container's runAsUser breaks non-root policy ${where}` : undefined;
  const user = (image.user ?? '').split(':')[0] ?? '';
  if (user !== '' && !/^\d+$/.test(user))
    return `container has runAsNonRoot and image has non-numeric user (${user}), cannot verify user is non-root ${where}`;
  // No USER: the image runs as root.
  if (user === '' || Number(user) === 0)
    return `container has runAsNonRoot and image will run as root ${where}`;
  return undefined;
}
