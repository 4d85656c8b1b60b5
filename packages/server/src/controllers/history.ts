/**
 * ControllerRevisions, the history of DaemonSets and StatefulSets (Kubernetes'
 * pkg/controller/history and the `getPatch` of both controllers): one revision per distinct pod
 * template, whose `data` is the strategic merge patch that brings the template back — exactly
 * what `kubectl rollout history` prints and `kubectl rollout undo` sends.
 */
import type { Client, KubeObject, ResourceApi, ResourceDescriptor } from 'kubeloop/client';
import { isAlreadyExists, isNotFound } from 'kubeloop/client';

/** An apps/v1 ControllerRevision: an immutable snapshot (`data`) and its place in the history (`revision`). */
export interface ControllerRevision extends KubeObject {
  data?: unknown;
  revision?: number;
}

/** The descriptor of apps/v1 ControllerRevisions (not in the SDK's table of built-in kinds). */
export const ControllerRevision: ResourceDescriptor<ControllerRevision> = Object.freeze({
  group: 'apps',
  version: 'v1',
  kind: 'ControllerRevision',
  plural: 'controllerrevisions',
  namespaced: true,
});

/** The label on revisions and pods naming the revision (`apps.DefaultDaemonSetUniqueLabelKey`, `ControllerRevisionHashLabelKey`). */
export const REVISION_HASH_LABEL = 'controller-revision-hash';
/** The hash of a StatefulSet revision's data (`history.ControllerRevisionHashLabel`). */
export const DATA_HASH_LABEL = 'controller.kubernetes.io/hash';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A deep copy whose object keys are sorted, as Go's `json.Marshal` writes a `map[string]interface{}`. */
function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const k of Object.keys(v).sort()) if (v[k] !== undefined) out[k] = sortedKeys(v[k]);
  return out;
}

/**
 * The `data` of a revision of `template` (`getPatch`): `{"spec":{"template":{…,"$patch":"replace"}}}`
 * with every key sorted, so that its JSON is byte for byte what kube-controller-manager stores and
 * what kubectl compares with (`daemonSetMatch`, `statefulsetMatch`) before an undo.
 */
export function templatePatch(template: unknown): Obj {
  const t = isObj(template) ? template : {};
  return sortedKeys({ spec: { template: { ...t, $patch: 'replace' } } }) as Obj;
}

/** The pod template a revision restores (`ApplyRevision` of a patch that replaces the template). */
export function revisionTemplate(revision: ControllerRevision): Obj | undefined {
  const spec = isObj(revision.data) ? revision.data.spec : undefined;
  const t = isObj(spec) ? spec.template : undefined;
  if (!isObj(t)) return undefined;
  const { $patch: _, ...template } = t;
  return structuredClone(template);
}

/** Go's `json.Marshal` text of a value with sorted keys: `<`, `>`, `&`, U+2028 and U+2029 escaped. */
export function goJson(v: unknown): string {
  return JSON.stringify(sortedKeys(v)).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Kubernetes' `rand.SafeEncodeString`: each character to one of an alphabet without vowels (no bad words). */
export function safeEncodeString(s: string): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let out = '';
  for (const ch of s) out += alphabet[(ch.codePointAt(0) ?? 0) % alphabet.length];
  return out;
}

/** FNV-1 of 32 bits (Go's `fnv.New32`, not the `a` variant), continued from `h`. */
export function fnv1(bytes: Uint8Array, h = 0x811c9dc5): number {
  let out = h;
  for (const b of bytes) out = (Math.imul(out, 0x01000193) ^ b) >>> 0;
  return out;
}

/** `HashControllerRevision`: FNV-1 of the data's JSON, then of the collision count, safely encoded. */
export function hashControllerRevision(data: unknown, collisionCount?: number): string {
  let h = fnv1(Buffer.from(goJson(data)));
  if (collisionCount !== undefined) h = fnv1(Buffer.from(String(collisionCount)), h);
  return safeEncodeString(String(h));
}

/** `ControllerRevisionName`: the owner's name (cut to 223 characters) and the hash. */
export function controllerRevisionName(prefix: string, hash: string): string {
  return `${prefix.slice(0, 223)}-${hash}`;
}

const created = (o: KubeObject) => Date.parse(o.metadata?.creationTimestamp ?? '') || 0;

/** `SortControllerRevisions`: by revision, then creation, then name (oldest first). */
export function sortRevisions(list: readonly ControllerRevision[]): ControllerRevision[] {
  return [...list].sort(
    (a, b) =>
      (a.revision ?? 0) - (b.revision ?? 0) ||
      created(a) - created(b) ||
      (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  );
}

/** Whether two revisions hold the same data (`EqualRevision`: hash labels first, when both have one). */
export function equalRevision(a: ControllerRevision, b: ControllerRevision): boolean {
  const ha = a.metadata?.labels?.[DATA_HASH_LABEL];
  const hb = b.metadata?.labels?.[DATA_HASH_LABEL];
  if (ha !== undefined && hb !== undefined && ha !== hb) return false;
  return goJson(a.data) === goJson(b.data);
}

/** Whether a revision's data is `data` (the controllers' `Match`, on the JSON Kubernetes compares). */
export const revisionHolds = (revision: ControllerRevision, data: unknown): boolean =>
  goJson(revision.data) === goJson(data);

/** The revision after the last of a sorted history (`nextRevision`). */
export const nextRevision = (sorted: readonly ControllerRevision[]): number =>
  (sorted.at(-1)?.revision ?? 0) + 1;

/** The highest revision of a history (`maxRevision`), 0 when empty. */
export const maxRevision = (list: readonly ControllerRevision[]): number =>
  list.reduce((m, r) => Math.max(m, r.revision ?? 0), 0);

/** The revision API of a namespace. */
export const revisionsApi = (client: Client, namespace: string): ResourceApi<ControllerRevision> =>
  client.api(ControllerRevision, namespace);

/** `UpdateControllerRevision`: moves a revision to `revision` (a rollback brings an old one to the front). */
export async function setRevisionNumber(
  api: ResourceApi<ControllerRevision>,
  cr: ControllerRevision,
  revision: number,
): Promise<ControllerRevision> {
  if (cr.revision === revision) return cr;
  return api.patch(cr.metadata?.name ?? '', { revision });
}

/** Deletes a revision; one already gone is not an error. */
export async function deleteRevision(
  api: ResourceApi<ControllerRevision>,
  cr: ControllerRevision,
): Promise<void> {
  try {
    await api.delete(cr.metadata?.name ?? '', { preconditions: { uid: cr.metadata?.uid ?? '' } });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/**
 * `CreateControllerRevision`: creates `cr` named after its owner and the hash of its data with
 * `collisionCount`; an existing revision of that name with the same data is the answer, one with
 * other data is a collision: the count goes up and the next name is tried. Returns the revision
 * and the collision count it took.
 */
export async function createRevision(
  api: ResourceApi<ControllerRevision>,
  ownerName: string,
  cr: ControllerRevision,
  collisionCount: number,
): Promise<{ revision: ControllerRevision; collisionCount: number }> {
  let count = collisionCount;
  for (let attempt = 0; attempt < 100; attempt++) {
    const hash = hashControllerRevision(cr.data, count);
    const name = controllerRevisionName(ownerName, hash);
    const body: ControllerRevision = {
      ...cr,
      metadata: { ...cr.metadata, name, labels: { ...cr.metadata?.labels, [DATA_HASH_LABEL]: hash } },
    };
    try {
      return { revision: await api.create(body), collisionCount: count };
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    const exists = await api.get(name);
    if (revisionHolds(exists, cr.data)) return { revision: exists, collisionCount: count };
    count += 1;
  }
  throw new Error(`too many ControllerRevision name collisions for ${ownerName}`);
}
