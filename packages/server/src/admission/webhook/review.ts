/**
 * The AdmissionReview a webhook receives and how its answer is checked, as
 * k8s.io/apiserver's `webhook/request` builds and verifies them (v1, and v1beta1 for a webhook
 * that accepts only that).
 */
import { isObject, type Obj } from '../../util/object.js';
import type { AdmissionAttributes, RuleMatch } from '../matching.js';

/** The review versions kube knows to send. */
export type ReviewVersion = 'v1' | 'v1beta1';

/** The first version of the webhook's `admissionReviewVersions` kube knows, if any. */
export function reviewVersion(versions: readonly string[] | undefined): ReviewVersion | undefined {
  return (versions ?? []).find((v): v is ReviewVersion => v === 'v1' || v === 'v1beta1');
}

/**
 * The AdmissionReview request of one call. `object`/`oldObject` are what this phase sends (a
 * mutating DELETE sends neither, as kube's delete handler admits it before reading the object).
 */
export function admissionReview(
  version: ReviewVersion,
  uid: string,
  attrs: AdmissionAttributes,
  match: RuleMatch,
  object: Obj | undefined,
  oldObject: Obj | undefined,
): Obj {
  const u = attrs.userInfo;
  return {
    kind: 'AdmissionReview',
    apiVersion: `admission.k8s.io/${version}`,
    request: {
      uid,
      kind: match.kind,
      resource: match.resource,
      ...(match.subresource && { subResource: match.subresource }),
      requestKind: attrs.kind,
      requestResource: attrs.resource,
      ...(attrs.subresource && { requestSubResource: attrs.subresource }),
      ...(attrs.name && { name: attrs.name }),
      ...(attrs.namespace && { namespace: attrs.namespace }),
      operation: attrs.operation,
      userInfo: {
        ...(u.username && { username: u.username }),
        ...(u.uid && { uid: u.uid }),
        ...(u.groups && u.groups.length > 0 && { groups: u.groups }),
        ...(u.extra && Object.keys(u.extra).length > 0 && { extra: u.extra }),
      },
      object: object ?? null,
      oldObject: oldObject ?? null,
      dryRun: attrs.dryRun,
      options: attrs.options ?? null,
    },
  };
}

/** What a webhook answered, once checked. */
export interface AdmissionResult {
  allowed: boolean;
  /** The patch (base64, as sent), for a mutating webhook that sent one; see {@link decodePatch}. */
  patch?: string;
  patchType?: string;
  status?: Obj;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** A response kube refuses (`received invalid webhook response: <message>`). */
export class InvalidResponse extends Error {}

/** A response kube cannot even decode (`failed to call webhook: <message>`). */
export class UndecodableResponse extends Error {}

/** A patch kube cannot decode (`received undecodable patch in webhook response: <message>`). */
export class UndecodablePatch extends Error {}

/**
 * Checks a webhook's answer (`VerifyAdmissionResponse`, after client-go decoded it into the
 * review type of the request's version).
 */
export function verifyAdmissionResponse(
  version: ReviewVersion,
  uid: string,
  mutating: boolean,
  body: unknown,
): AdmissionResult {
  if (!isObject(body)) {
    throw new UndecodableResponse(
      `json: cannot unmarshal ${Array.isArray(body) ? 'array' : body === null ? 'null' : typeof body} into Go value of type ${version}.AdmissionReview`,
    );
  }
  const apiVersion = typeof body.apiVersion === 'string' ? body.apiVersion : '';
  const kind = typeof body.kind === 'string' ? body.kind : '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  if (group === 'admission.k8s.io' && kind !== '' && kind !== 'AdmissionReview') {
    throw new UndecodableResponse(
      `no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/runtime/scheme.go:100"`,
    );
  }
  // An answer of the other review version decodes into an object of that type, which leaves
  // the requested one without a response.
  const otherVersion = apiVersion === `admission.k8s.io/${version === 'v1' ? 'v1beta1' : 'v1'}`;
  const response = !otherVersion && isObject(body.response) ? body.response : undefined;
  if (!response) throw new InvalidResponse('webhook response was absent');
  const patchB64 = typeof response.patch === 'string' ? response.patch : '';
  const hasPatchType = response.patchType !== undefined && response.patchType !== null;
  let patchType = hasPatchType ? String(response.patchType) : '';
  if (version === 'v1') {
    if (response.uid !== uid) {
      throw new InvalidResponse(
        `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(typeof response.uid === 'string' ? response.uid : '')}`,
      );
    }
    if (apiVersion !== 'admission.k8s.io/v1' || kind !== 'AdmissionReview') {
      const [g, v] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
      throw new InvalidResponse(
        `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${g}/${v}, Kind=${kind}`,
      );
    }
    if (mutating) {
      if (patchB64 && !hasPatchType)
        throw new InvalidResponse('webhook returned response.patch but not response.patchType');
      if (!patchB64 && hasPatchType)
        throw new InvalidResponse('webhook returned response.patchType but not response.patch');
      if (hasPatchType && patchType === '')
        throw new InvalidResponse(`webhook returned invalid response.patchType of ""`);
    } else {
      if (patchB64) throw new InvalidResponse('validating webhook may not return response.patch');
      if (hasPatchType) throw new InvalidResponse('validating webhook may not return response.patchType');
    }
  } else if (mutating && patchB64) {
    // v1beta1 never checked the patch type: the one supported type is assumed.
    patchType = 'JSONPatch';
  }
  const result: AdmissionResult = {
    allowed: response.allowed === true,
    warnings: Array.isArray(response.warnings) ? response.warnings.filter((w) => typeof w === 'string') : [],
    auditAnnotations: isObject(response.auditAnnotations)
      ? Object.fromEntries(
          Object.entries(response.auditAnnotations).filter(
            (e): e is [string, string] => typeof e[1] === 'string',
          ),
        )
      : {},
    ...(isObject(response.status) && { status: response.status }),
  };
  if (mutating && patchB64) {
    result.patchType = patchType;
    result.patch = patchB64;
  }
  return result;
}

/** The `[]byte` patch (base64 in JSON) as evanphx/json-patch's DecodePatch reads it. */
export function decodePatch(b64: string): unknown {
  const text = Buffer.from(b64, 'base64').toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UndecodablePatch(
      `invalid character '${text.trimStart()[0] ?? ''}' looking for beginning of value`,
    );
  }
  if (!Array.isArray(parsed)) {
    const what = parsed === null ? 'null' : typeof parsed === 'object' ? 'object' : typeof parsed;
    throw new UndecodablePatch(`json: cannot unmarshal ${what} into Go value of type jsonpatch.Patch`);
  }
  return parsed;
}
