/**
 * The ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount, 1.32): a pod created
 * without `serviceAccountName` runs as `default`; its ServiceAccount must exist; unless the pod
 * or the ServiceAccount opts out with `automountServiceAccountToken: false`, the pod gets the
 * projected `kube-api-access-<5 chars>` volume (a bound token, the cluster CA, the namespace)
 * mounted read-only at `/var/run/secrets/kubernetes.io/serviceaccount` in every container and
 * init container; the ServiceAccount's `imagePullSecrets` when the pod names none. Mirror pods
 * (static pods of a kubelet) are left as they are and may not reference service accounts.
 */
import { randomInt } from 'node:crypto';
import { ApiError } from 'kubeloop/api';
import type { ResourceType } from '../registry/types.js';
import { collectionPrefix, objectKey, type Store } from '../storage/store.js';
import type { StoredObject } from '../storage/types.js';
import type { Obj } from '../util/object.js';
import { actsOn, isCore } from './plugin-kinds.js';

type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

/** Where the token, CA and namespace are mounted (`DefaultAPITokenMountPath`). */
export const SERVICE_ACCOUNT_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const VOLUME_PREFIX = 'kube-api-access-';
const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
/** `names.SimpleNameGenerator`'s alphabet (utilrand: no vowels, no confusable digits). */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
/**
 * How long a pod waits for its namespace's `default` ServiceAccount. kube's plugin looks it up
 * again up to 10 times, 100–200 ms apart, since the service account controller creates it just
 * after the namespace; here the wait ends as soon as the object is stored.
 */
const DEFAULT_SA_WAIT_MS = 2000;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objs = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** `TokenVolumeSource()`: the projection every pod's API access volume has. */
function tokenVolumeSource(): Obj {
  return {
    defaultMode: 420,
    sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
      { configMap: { items: [{ key: 'ca.crt', path: 'ca.crt' }], name: 'kube-root-ca.crt' } },
      {
        downwardAPI: {
          items: [{ fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' }, path: 'namespace' }],
        },
      },
    ],
  };
}

/** The ServiceAccount admission plugin over `store`. */
export function serviceAccountAdmission(store: Store) {
  // Only pod creates wait (for the ServiceAccount); other requests pass the chain synchronously.
  return actsOn(
    (_op, t) => isCore(t, 'pods'),
    (op: AdmissionOperation, t: ResourceType, obj: Obj): Promise<void> | undefined =>
      op === 'CREATE' && t.group === '' && t.resource === 'pods' ? admitPod(store, obj) : undefined,
  );
}

async function admitPod(store: Store, obj: Obj): Promise<void> {
  {
    const meta = isObj(obj.metadata) ? obj.metadata : {};
    if (!isObj(obj.spec)) obj.spec = {};
    const spec = obj.spec as Obj;
    const forbidden = (why: string): ApiError =>
      // `extractResourceName`: before the name is generated, a generateName create goes by its prefix.
      ApiError.forbidden(
        { group: '', resource: 'pods' },
        str(meta.name) || str(meta.generateName) || 'Unknown',
        why,
      );
    if (isObj(meta.annotations) && meta.annotations[MIRROR_POD_ANNOTATION] !== undefined) {
      validateMirrorPod(spec, forbidden);
      return;
    }
    if (!str(spec.serviceAccountName)) spec.serviceAccountName = 'default';
    // The v1 form keeps the deprecated `serviceAccount` equal to `serviceAccountName`.
    spec.serviceAccount = spec.serviceAccountName;
    const namespace = str(meta.namespace);
    const name = str(spec.serviceAccountName);
    const sa = await lookup(store, namespace, name);
    if (!sa)
      throw forbidden(
        `error looking up service account ${namespace}/${name}: serviceaccount "${name}" not found`,
      );
    if (shouldAutomount(sa, spec)) mountToken(spec);
    const pullSecrets = objs(sa.imagePullSecrets);
    if (objs(spec.imagePullSecrets).length === 0 && pullSecrets.length > 0)
      spec.imagePullSecrets = pullSecrets.map((s) => ({ name: str(s.name) }));
  }
}

/** The ServiceAccount, waiting a moment for a namespace's `default` one to be made. */
async function lookup(store: Store, namespace: string, name: string): Promise<Obj | undefined> {
  const key = objectKey('', 'serviceaccounts', namespace, name);
  const found = store.get(key);
  if (found || name !== 'default') return found?.object as Obj | undefined;
  const stored = await new Promise<StoredObject | undefined>((resolve) => {
    let done = false;
    let unsubscribe: (() => void) | undefined;
    const finish = (v: StoredObject | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unsubscribe?.();
      resolve(v);
    };
    const timer = setTimeout(() => finish(store.get(key)), DEFAULT_SA_WAIT_MS);
    timer.unref();
    unsubscribe = store.watch(collectionPrefix('', 'serviceaccounts', namespace), store.revision, (ev) => {
      if (ev.key === key && ev.type !== 'DELETED') finish(ev.object);
    });
    if (done) unsubscribe();
  });
  return stored?.object as Obj | undefined;
}

/** `shouldAutomount`: the pod's choice, else the ServiceAccount's, else yes. */
function shouldAutomount(sa: Obj, spec: Obj): boolean {
  if (typeof spec.automountServiceAccountToken === 'boolean') return spec.automountServiceAccountToken;
  if (typeof sa.automountServiceAccountToken === 'boolean') return sa.automountServiceAccountToken;
  return true;
}

/**
 * `mountServiceAccountToken`: the existing `kube-api-access-*` volume or a new one, mounted in
 * each container and init container that has nothing mounted at the token path yet.
 */
function mountToken(spec: Obj): void {
  const volumes = objs(spec.volumes);
  const existing = volumes.find((v) => str(v.name).startsWith(VOLUME_PREFIX));
  const name =
    existing !== undefined
      ? str(existing.name)
      : VOLUME_PREFIX + Array.from({ length: 5 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
  let needed = false;
  for (const list of ['initContainers', 'containers'] as const) {
    for (const c of objs(spec[list])) {
      const mounts = objs(c.volumeMounts);
      if (mounts.some((m) => m.mountPath === SERVICE_ACCOUNT_MOUNT_PATH)) continue;
      c.volumeMounts = [...mounts, { name, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT_PATH }];
      needed = true;
    }
  }
  if (!existing && needed) spec.volumes = [...volumes, { name, projected: tokenVolumeSource() }];
}

/** `Validate` for mirror pods: no service account, no secrets, no token projections. */
function validateMirrorPod(spec: Obj, forbidden: (why: string) => ApiError): void {
  if (str(spec.serviceAccountName)) throw forbidden('a mirror pod may not reference service accounts');
  const volumes = objs(spec.volumes);
  const containers = ['initContainers', 'containers', 'ephemeralContainers'].flatMap((l) => objs(spec[l]));
  const refsSecret =
    objs(spec.imagePullSecrets).length > 0 ||
    volumes.some(
      (v) =>
        isObj(v.secret) ||
        objs(isObj(v.projected) ? v.projected.sources : undefined).some((s) => isObj(s.secret)) ||
        ['azureFile', 'cephfs', 'cinder', 'flexVolume', 'iscsi', 'rbd', 'scaleIO', 'storageos', 'csi'].some(
          (k) => isObj(v[k]) && (isObj(v[k].secretRef) || str(v[k].secretName) !== ''),
        ),
    ) ||
    containers.some(
      (c) =>
        objs(c.envFrom).some((e) => isObj(e.secretRef)) ||
        objs(c.env).some((e) => isObj(e.valueFrom) && isObj(e.valueFrom.secretKeyRef)),
    );
  if (refsSecret) throw forbidden('a mirror pod may not reference secrets');
  for (const v of volumes) {
    const sources = objs(isObj(v.projected) ? v.projected.sources : undefined);
    if (sources.some((s) => isObj(s.serviceAccountToken)))
      throw forbidden('a mirror pod may not use ServiceAccountToken volume projections');
  }
}
