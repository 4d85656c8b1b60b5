/**
 * A body's apiVersion and kind decoded as the scheme decodes them: another version of the kind
 * converts, another known kind does not (`unknown conversion`), an unknown one is not registered.
 * For subresource bodies (TokenRequest, Scale) and for the result of a JSON or merge patch.
 */
import { ApiError, fieldErrors } from 'kubeloop/api';
import { internalPackage, type ResourceType } from '../../registry/types.js';
import type { Obj } from '../../util/object.js';
import type { HandlerScope } from './scope.js';

/** Kinds the scheme knows that no resource of the registry serves: the subresources' own. */
const SUBRESOURCE_KINDS = new Set([
  'policy/v1 Eviction',
  'autoscaling/v1 Scale',
  'v1 Binding',
  // Still registered in kube-apiserver's scheme (pkg/apis/apps/install), no longer served.
  'apps/v1beta1 Scale',
  'apps/v1beta2 Scale',
]);

/** The group, version and kind a body must decode into. */
interface Want {
  group: string;
  version: string;
  kind: string;
}

const SCALE: Want = { group: 'autoscaling', version: 'v1', kind: 'Scale' };

/** The body's apiVersion and kind, the wanted ones where they are missing or empty. */
function typeOf(obj: Obj, want: Want): { apiVersion: string; kind: string; group: string; version: string } {
  const own = want.group ? `${want.group}/${want.version}` : want.version;
  const kind = typeof obj.kind === 'string' && obj.kind !== '' ? obj.kind : want.kind;
  const apiVersion = typeof obj.apiVersion === 'string' && obj.apiVersion !== '' ? obj.apiVersion : own;
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
  return { apiVersion, kind, group: group!, version: version! };
}

/** Whether kube-apiserver's scheme has `apiVersion kind`. */
function registered(s: HandlerScope, group: string, version: string, kind: string): boolean {
  const apiVersion = group ? `${group}/${version}` : version;
  return (
    s.registry.byKind(group, version, kind) !== undefined || SUBRESOURCE_KINDS.has(`${apiVersion} ${kind}`)
  );
}

/** Why a body of `kind` in `apiVersion` does not decode into `want`. */
function mismatch(s: HandlerScope, b: ReturnType<typeof typeOf>, want: Want): string {
  return registered(s, b.group, b.version, b.kind)
    ? `converting (${b.version}.${b.kind}) to (${internalPackage(want.group)}.${want.kind}): unknown conversion`
    : `no kind "${b.kind}" is registered for version "${b.apiVersion}" in scheme "pkg/runtime/scheme.go:100"`;
}

/** A subresource body decoded into the kind it must be (400 otherwise, in the decoder's words). */
export function checkBodyKind(s: HandlerScope, obj: Obj, want: Want): void {
  const b = typeOf(obj, want);
  if (b.kind === want.kind && b.group === want.group && b.version === want.version) return;
  throw ApiError.badRequest(
    `${b.kind} in version "${b.version}" cannot be handled as a ${want.kind}: ${mismatch(s, b, want)}`,
  );
}

/**
 * A PUT body of `…/scale`. Built-in resources decode it with the apiserver's scheme: an old
 * apps Scale converts but is not the version of the URL; a custom resource's scale decodes it
 * with client-go's scale scheme, which refuses any other kind in its own words.
 */
export function checkScaleBody(s: HandlerScope, t: ResourceType, obj: Obj): void {
  const b = typeOf(obj, SCALE);
  if (b.kind === 'Scale' && b.apiVersion === 'autoscaling/v1') return;
  if (t.custom)
    throw ApiError.badRequest(
      'no kind is registered for the type v1.Scale in scheme "pkg/runtime/scheme.go:100"',
    );
  if (b.kind === 'Scale' && b.group === 'apps' && registered(s, b.group, b.version, b.kind))
    throw ApiError.badRequest(
      `the API version in the data (${b.apiVersion}) does not match the expected API version (autoscaling/v1)`,
    );
  checkBodyKind(s, obj, SCALE);
}

/**
 * A JSON or merge patch's result decoded by its own apiVersion and kind, as the patch handler
 * decodes it: another version of the same kind converts, anything else is kube's 422 on `patch`
 * (`converting (v1.StatefulSet) to (apps.Deployment): unknown conversion`, or `no kind "X" is
 * registered for version "g/v"`). A scale's result must be a Scale; a custom resource's scale
 * knows no other kind.
 */
export function checkPatchedKind(s: HandlerScope, t: ResourceType, next: Obj, scale = false): void {
  const want = scale ? SCALE : t;
  const b = typeOf(next, want);
  if (b.kind === want.kind && b.group === want.group) {
    if (b.version === want.version) return;
    if (!scale && /^v\d+((alpha|beta)\d+)?$/.test(b.version)) return;
  }
  if (scale && b.kind === 'Scale' && b.group === 'apps' && registered(s, b.group, b.version, b.kind)) {
    // An old apps Scale converts, once its selector (a map there) decodes.
    const status = next.status as Obj | undefined;
    if (typeof status?.selector !== 'string') return;
    throw invalidPatch(
      next,
      'json: cannot unmarshal string into Go struct field ScaleStatus.status.selector of type map[string]string',
    );
  }
  const reason =
    scale && t.custom
      ? `no kind "${b.kind}" is registered for version "${b.apiVersion}" in scheme "pkg/runtime/scheme.go:100"`
      : mismatch(s, b, want);
  throw invalidPatch(next, reason);
}

/** The patch handler's 422 for a patched object that does not decode. */
function invalidPatch(next: Obj, reason: string): ApiError {
  return ApiError.invalid({ group: '', kind: '' }, '', [
    fieldErrors.invalid('patch', JSON.stringify(next), reason),
  ]);
}
