/**
 * The storage object in-use protection controllers of kube-controller-manager
 * (`pkg/controller/volume/pvcprotection`, `pvprotection`): the finalizers the
 * StorageObjectInUseProtection admission plugin puts on every claim and volume are removed once
 * the object is being deleted and nothing uses it any more — a claim no scheduled pod mounts, a
 * volume no claim is bound to — so a claim in use stays `Terminating` until its pods are gone.
 */
import {
  isConflict,
  isNotFound,
  type KubeObject,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  type ResourceDescriptor,
} from 'kubeloop/client';
import { type ControllerDefinition, controller, type ReconcileContext } from 'kubeloop/runtime';

/** The finalizer of a claim a pod may use. */
export const PVC_PROTECTION = 'kubernetes.io/pvc-protection';
/** The finalizer of a volume a claim may be bound to. */
export const PV_PROTECTION = 'kubernetes.io/pv-protection';

/** The claims a pod names, its generic ephemeral volumes' claims (`<pod>-<volume>`) included. */
function claimsOf(pod: Pod): string[] {
  const name = pod.metadata?.name ?? '';
  return (pod.spec?.volumes ?? []).flatMap((v) => {
    if (v.persistentVolumeClaim?.claimName) return [v.persistentVolumeClaim.claimName];
    if (v.ephemeral) return [`${name}-${v.name}`];
    return [];
  });
}

const shutDown = (p: Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

/**
 * Whether a pod uses the claim (`podUsesPVC`): only scheduled pods count (the kubelet starts no
 * pod with a terminating claim); a pod mounting it counts even once it ended, an ephemeral
 * volume's claim only while its pod runs.
 */
function podUses(pod: Pod, claim: string): boolean {
  if (!pod.spec?.nodeName) return false;
  const name = pod.metadata?.name ?? '';
  return (pod.spec.volumes ?? []).some(
    (v) =>
      v.persistentVolumeClaim?.claimName === claim ||
      (v.ephemeral && !shutDown(pod) && `${name}-${v.name}` === claim),
  );
}

/** Takes `finalizer` off `obj` with an update (what the controllers' roles allow); a race retries. */
async function release<T extends KubeObject>(
  kind: ResourceDescriptor<T>,
  obj: T,
  finalizer: string,
  { client }: ReconcileContext,
): Promise<{ requeue: true } | undefined> {
  const next = {
    ...obj,
    metadata: { ...obj.metadata, finalizers: obj.metadata?.finalizers?.filter((f) => f !== finalizer) },
  };
  try {
    await client.api(kind, obj.metadata?.namespace).update(next as T);
  } catch (err) {
    if (isConflict(err)) return { requeue: true };
    if (!isNotFound(err)) throw err;
  }
  return undefined;
}

const deleting = (o: KubeObject, finalizer: string) =>
  !!o.metadata?.deletionTimestamp && (o.metadata.finalizers ?? []).includes(finalizer);

/** `pvc-protection`: a terminating claim loses its finalizer once no scheduled pod uses it. */
export function pvcProtectionController(): ControllerDefinition<PersistentVolumeClaim> {
  return (
    controller(PersistentVolumeClaim)
      .named('pvc-protection')
      .withPredicates({
        create: (c) => deleting(c, PVC_PROTECTION),
        update: (_o, c) => deleting(c, PVC_PROTECTION),
        delete: () => false,
      })
      // A pod that goes (or ends) may free the claims it named.
      .watches(Pod, (p) => claimsOf(p).map((name) => ({ namespace: p.metadata?.namespace ?? '', name })))
      .reconcile(async (claim, ctx) => {
        if (!deleting(claim, PVC_PROTECTION)) return undefined;
        const name = claim.metadata?.name ?? '';
        const pods = await ctx.cache.list(Pod, { namespace: claim.metadata?.namespace ?? '' });
        if (pods.some((p) => podUses(p, name))) return undefined;
        return release(PersistentVolumeClaim, claim, PVC_PROTECTION, ctx);
      })
  );
}

/** `pv-protection`: a terminating volume loses its finalizer once it is not bound. */
export function pvProtectionController(): ControllerDefinition<PersistentVolume> {
  return controller(PersistentVolume)
    .named('pv-protection')
    .withPredicates({
      create: (v) => deleting(v, PV_PROTECTION),
      update: (_o, v) => deleting(v, PV_PROTECTION),
      delete: () => false,
    })
    .reconcile(async (volume, ctx) => {
      if (!deleting(volume, PV_PROTECTION) || volume.status?.phase === 'Bound') return undefined;
      return release(PersistentVolume, volume, PV_PROTECTION, ctx);
    });
}
