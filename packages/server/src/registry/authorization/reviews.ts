/**
 * Kinds kube-apiserver serves without storing them: the review kinds of authentication.k8s.io
 * and authorization.k8s.io (create-only, answered from the request), `bindings` (create-only, binds
 * a pod) and `componentstatuses` (get/list, the health of the control plane's components).
 */
import { ApiError, type StatusCause } from 'kubeloop/api';
import type { Authorizer } from '../../auth/authorization/types.js';
import { defineKind } from '../shared/define.js';
import { GoValue, goQuote, invalid, isObj, type Obj, str, strs } from '../shared/util.js';
import type { ResourceType, VirtualContext, VirtualResource } from '../types.js';

/** `ObjectMeta` a review may carry: only managedFields (and, for local reviews, the namespace). */
function metaIsEmpty(meta: unknown, allowNamespace: boolean): boolean {
  if (!isObj(meta)) return true;
  return Object.entries(meta).every(
    ([k, v]) =>
      v === undefined ||
      v === null ||
      k === 'managedFields' ||
      (allowNamespace && k === 'namespace') ||
      (typeof v === 'string' && v === '') ||
      (isObj(v) && Object.keys(v).length === 0) ||
      (Array.isArray(v) && v.length === 0),
  );
}

/** An attributes struct as field.Error prints a pointer to it: the struct's `%#v`. */
function attributesValue(v: unknown): unknown {
  if (!isObj(v)) return 'null';
  const fields = (names: string[]) =>
    names.map((f) => `${f[0]!.toUpperCase()}${f.slice(1)}:${goQuote(str(v[f]))}`);
  if ('path' in v)
    return new GoValue(`authorization.NonResourceAttributes{${fields(['path', 'verb']).join(', ')}}`);
  const named = fields(['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name']);
  // The selectors are pointers: an address when set.
  const selector = (f: string, type: string) =>
    `${f[0]!.toUpperCase()}${f.slice(1)}:(*authorization.${type})(${isObj(v[f]) ? '0xc000000000' : 'nil'})`;
  return new GoValue(
    `authorization.ResourceAttributes{${[...named, selector('fieldSelector', 'FieldSelectorAttributes'), selector('labelSelector', 'LabelSelectorAttributes')].join(', ')}}`,
  );
}

/** `ValidateSubjectAccessReviewSpec` (`self`: the SelfSubjectAccessReview variant, without user). */
function validateAccessSpec(spec: Obj, self: boolean): StatusCause[] {
  const out: StatusCause[] = [];
  const resource = spec.resourceAttributes;
  const nonResource = spec.nonResourceAttributes;
  if (isObj(resource) && isObj(nonResource)) {
    out.push(
      invalid(
        'spec.nonResourceAttributes',
        attributesValue(nonResource),
        'cannot be specified in combination with resourceAttributes',
      ),
    );
  }
  if (!isObj(resource) && !isObj(nonResource)) {
    out.push(
      invalid(
        'spec.resourceAttributes',
        // A nil pointer: field.Error prints the string "null".
        'null',
        'exactly one of nonResourceAttributes or resourceAttributes must be specified',
      ),
    );
  }
  if (!self && !str(spec.user) && strs(spec.groups).length === 0) {
    out.push(invalid('spec.user', str(spec.user), 'at least one of user or group must be specified'));
  }
  return out;
}

/** What a server without an authorizer answers: nothing is allowed. */
const denyAll: Authorizer = {
  authorize: () => ({ allowed: false }),
  rulesFor: () => ({ resourceRules: [], nonResourceRules: [], incomplete: false }),
};

/** The SubjectAccessReviewStatus the authorizer gives for `spec` asked as `user`/`groups`. */
function accessStatus(ctx: VirtualContext, spec: Obj, user: string, groups: readonly string[]): Obj {
  const r = isObj(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
  const nr = isObj(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined;
  const decision = (ctx.authorizer ?? denyAll).authorize({
    user,
    groups,
    ...(r && {
      resource: {
        namespace: str(r.namespace),
        verb: str(r.verb),
        group: str(r.group),
        version: str(r.version),
        resource: str(r.resource),
        subresource: str(r.subresource),
        name: str(r.name),
      },
    }),
    ...(nr && { nonResource: { path: str(nr.path), verb: str(nr.verb) } }),
  });
  return {
    allowed: decision.allowed,
    ...(decision.denied && { denied: true }),
    ...(decision.reason && { reason: decision.reason }),
    ...(decision.evaluationError && { evaluationError: decision.evaluationError }),
  };
}

/**
 * A review's 422. kube names the kind from the decoded object's TypeMeta, which decoding has
 * emptied: the message reads `.authorization.k8s.io "" is invalid`.
 */
const invalidReview = (_kind: string, group: string, causes: StatusCause[]): ApiError =>
  ApiError.invalid({ group, kind: '' }, '', causes);

/** The answer: the request echoed with its status, metadata reduced to what the server keeps. */
function answer(obj: Obj, status: Obj, keepNamespace = false): Obj {
  const meta = isObj(obj.metadata) ? obj.metadata : {};
  return {
    kind: obj.kind,
    apiVersion: obj.apiVersion,
    metadata: {
      ...(keepNamespace && meta.namespace !== undefined && { namespace: meta.namespace }),
      creationTimestamp: null,
      ...(Array.isArray(meta.managedFields) &&
        meta.managedFields.length > 0 && { managedFields: meta.managedFields }),
    },
    ...(obj.spec !== undefined && { spec: obj.spec }),
    status,
  };
}

const userInfo = (u: VirtualContext['user']): Obj => ({
  username: u.username,
  ...(u.uid && { uid: u.uid }),
  ...(u.groups.length > 0 && { groups: [...u.groups] }),
  ...(u.extra && Object.keys(u.extra).length > 0 && { extra: u.extra }),
});

type ReviewHandler = (obj: Obj, ctx: VirtualContext) => Promise<Obj>;

const reviewHandlers: Record<string, ReviewHandler> = {
  // authentication.k8s.io: who the caller is; whether a token authenticates.
  async SelfSubjectReview(obj, ctx) {
    return answer(obj, { userInfo: userInfo(ctx.user) });
  },
  async TokenReview(obj, ctx) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const token = str(spec.token);
    // pkg/registry/authentication/tokenreview: an empty token is a bad request, not an
    // unauthenticated answer.
    if (!token) throw ApiError.badRequest('token is required for TokenReview in authentication');
    // The token checked for the review's audiences (default: the API audiences); the status
    // lists those it was accepted for.
    const { user, audiences, error } = ctx.authenticateToken(token, strs(spec.audiences));
    return answer(
      obj,
      user
        ? {
            authenticated: true,
            user: userInfo(user),
            ...(audiences && audiences.length > 0 && { audiences }),
          }
        : { user: {}, error: error ?? '[invalid bearer token, token lookup failed]' },
    );
  },
  // authorization.k8s.io: what the authorizer decides.
  async SubjectAccessReview(obj, ctx) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const causes = validateAccessSpec(spec, false);
    if (!metaIsEmpty(obj.metadata, false))
      causes.push(invalid('metadata', new GoValue('v1.ObjectMeta{…}'), 'must be empty'));
    if (causes.length > 0) throw invalidReview('SubjectAccessReview', 'authorization.k8s.io', causes);
    return answer(obj, accessStatus(ctx, spec, str(spec.user), strs(spec.groups)));
  },
  async LocalSubjectAccessReview(obj, ctx) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const meta = isObj(obj.metadata) ? obj.metadata : {};
    const namespace = str(meta.namespace) || ctx.namespace || '';
    if (ctx.namespace && str(meta.namespace) && str(meta.namespace) !== ctx.namespace) {
      throw ApiError.badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    const causes = validateAccessSpec(spec, false);
    if (!metaIsEmpty(meta, true))
      causes.push(invalid('metadata', new GoValue('v1.ObjectMeta{…}'), 'must be empty except for namespace'));
    const r = spec.resourceAttributes;
    if (isObj(r) && str(r.namespace) !== namespace)
      causes.push(
        invalid('spec.resourceAttributes.namespace', str(r.namespace), 'must match metadata.namespace'),
      );
    if (isObj(spec.nonResourceAttributes)) {
      causes.push(
        invalid(
          'spec.nonResourceAttributes',
          attributesValue(spec.nonResourceAttributes),
          'disallowed on this kind of request',
        ),
      );
    }
    if (causes.length > 0) throw invalidReview('LocalSubjectAccessReview', 'authorization.k8s.io', causes);
    return answer(
      { ...obj, metadata: { ...meta, namespace } },
      accessStatus(ctx, spec, str(spec.user), strs(spec.groups)),
      true,
    );
  },
  async SelfSubjectAccessReview(obj, ctx) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const causes = validateAccessSpec(spec, true);
    if (!metaIsEmpty(obj.metadata, false))
      causes.push(invalid('metadata', new GoValue('v1.ObjectMeta{…}'), 'must be empty'));
    if (causes.length > 0) throw invalidReview('SelfSubjectAccessReview', 'authorization.k8s.io', causes);
    return answer(obj, accessStatus(ctx, spec, ctx.user.username, ctx.user.groups));
  },
  async SelfSubjectRulesReview(obj, ctx) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const namespace = str(spec.namespace);
    if (!namespace) throw ApiError.badRequest('no namespace on request');
    const rules = (ctx.authorizer ?? denyAll).rulesFor(ctx.user.username, ctx.user.groups, namespace);
    return answer(obj, {
      resourceRules: rules.resourceRules,
      nonResourceRules: rules.nonResourceRules,
      incomplete: rules.incomplete,
      ...(rules.evaluationError && { evaluationError: rules.evaluationError }),
    });
  },
};

/** The review kind `kind` (create-only): validated, answered, never stored. */
function review(kind: string): VirtualResource {
  const handler = reviewHandlers[kind];
  if (!handler) throw new Error(`no review handler for ${kind}`);
  return { create: (obj, ctx) => handler(obj, ctx) };
}

/** A create-only review kind: answered from the request, never stored. */
export function reviewKind(
  group: string,
  resource: string,
  kindName: string,
  namespaced: boolean,
): ResourceType {
  return defineKind({
    group,
    version: 'v1',
    defPackage: `io.k8s.api.${group.split('.')[0]}.v1`,
    resource,
    kind: kindName,
    namespaced,
    verbs: ['create'],
    virtual: review(kindName),
  });
}

/** `SubjectAccessReview` (authorization.k8s.io/v1 `subjectaccessreviews`): how the registry serves, validates and prints it. */
export const subjectAccessReviewKind: ResourceType = reviewKind(
  'authorization.k8s.io',
  'subjectaccessreviews',
  'SubjectAccessReview',
  false,
);

/** `SelfSubjectAccessReview` (authorization.k8s.io/v1 `selfsubjectaccessreviews`): how the registry serves, validates and prints it. */
export const selfSubjectAccessReviewKind: ResourceType = reviewKind(
  'authorization.k8s.io',
  'selfsubjectaccessreviews',
  'SelfSubjectAccessReview',
  false,
);

/** `LocalSubjectAccessReview` (authorization.k8s.io/v1 `localsubjectaccessreviews`): how the registry serves, validates and prints it. */
export const localSubjectAccessReviewKind: ResourceType = reviewKind(
  'authorization.k8s.io',
  'localsubjectaccessreviews',
  'LocalSubjectAccessReview',
  true,
);

/** `SelfSubjectRulesReview` (authorization.k8s.io/v1 `selfsubjectrulesreviews`): how the registry serves, validates and prints it. */
export const selfSubjectRulesReviewKind: ResourceType = reviewKind(
  'authorization.k8s.io',
  'selfsubjectrulesreviews',
  'SelfSubjectRulesReview',
  false,
);
