/**
 * The routes of resource requests, as k8s.io/apiserver's installer lays them out: which
 * resource, subresource and verb a path and method reach (404 and 405 otherwise), the answer's
 * media type negotiated once, then the verb's handler.
 */
import type { Duplex } from 'node:stream';
import { ApiError } from 'kubeloop/api';
import type { UserInfo } from '../../auth/authentication/user.js';
import { internalPackage, type ResourceType } from '../../registry/types.js';
import type { RequestContext } from '../context.js';
import { methodNotAllowed, notFound, PageNotFound } from '../errors.js';
import { type Negotiated, negotiateResource } from '../negotiation.js';
import { parseDryRun } from '../params.js';
import { protobufKind } from '../responses.js';
import { warningHeaders } from '../warnings.js';
import { connect, connectHandler } from './connect.js';
import { create } from './create.js';
import { deleteCollection, deleteObject } from './delete.js';
import { get } from './get.js';
import { list } from './list.js';
import { patch } from './patch.js';
import type { HandlerScope, ResourceRequest } from './scope.js';
import { update } from './update.js';
import { serveVirtual } from './virtual.js';
import { watch } from './watch.js';

// The verb lists of the route checks, made once (not as array literals on every request).
const COLLECTION_VERBS: readonly string[] = ['list', 'watch', 'deletecollection'];
const NAMED_VERBS: readonly string[] = ['get', 'update', 'patch', 'delete'];
const CREATE_ONLY: readonly string[] = ['create'];
const UPDATE_ONLY: readonly string[] = ['update'];
const SUBRESOURCE_VERBS: readonly string[] = ['get', 'update', 'patch'];

/** The handler of each verb. */
const HANDLERS: Record<string, (s: HandlerScope, r: ResourceRequest) => void | Promise<void>> = {
  get,
  list,
  watch,
  create,
  update,
  patch,
  delete: deleteObject,
  deletecollection: deleteCollection,
};

/**
 * Serves a resource request of an authenticated, authorized user. Not itself async: it hands
 * back the verb handler's promise (a refused route throws), so that a request does not wait an
 * extra tick, nor allocate an extra promise, for a function that only dispatches.
 */
export function serveResource(
  s: HandlerScope,
  ctx: RequestContext & { user: UserInfo },
  upgrade: { socket: Duplex; head: Buffer } | undefined,
): void | Promise<void> {
  const { req, res, info, query } = ctx;
  const t = s.registry.lookup(info.group, info.version, info.resource);
  if (!t) {
    req.resume();
    // A built-in group/version is a go-restful web service, whose unmatched routes answer a
    // Status; any other path (unknown group or version, a deleted CRD's) reaches the end of the
    // handler chain: http.NotFound.
    const builtin = s.registry
      .all()
      .some((x) => !x.custom && x.group === info.group && x.version === info.version);
    throw builtin ? notFound() : new PageNotFound();
  }
  if (t.custom) s.out.withoutProtobufErrors(res);
  if (t.custom?.deprecationWarning)
    res.appendHeader('Warning', warningHeaders([t.custom.deprecationWarning]));
  const handler = connectHandler(s.connect, t, info.subresource);
  if (handler) return connect(handler, ctx, upgrade);
  const sub = info.subresource;
  // A subresource with a create of its own (`pods/binding`) or a ServiceAccount's `token`: POST only.
  const createOnly =
    !!t.behaviour.storage?.postSubresources?.[sub] ||
    (sub === 'token' && !!t.subresources.token) ||
    (sub === 'eviction' && !!t.subresources.eviction);
  if (
    sub &&
    !(sub === 'status' && t.subresources.status) &&
    !(sub === 'scale' && t.subresources.scale) &&
    !(sub === 'approval' && t.subresources.approval) &&
    !(sub === 'finalize' && t.subresources.finalize) &&
    !(sub === 'ephemeralcontainers' && t.subresources.ephemeralContainers) &&
    !(sub === 'token' && t.subresources.token && s.issueServiceAccountToken) &&
    !(sub === 'eviction' && t.subresources.eviction) &&
    !t.behaviour.storage?.postSubresources?.[sub]
  ) {
    req.resume();
    // The CRD handler answers a subresource it does not serve as a missing object.
    throw t.custom ? ApiError.notFound({ group: t.group, resource: t.resource }, info.name) : notFound();
  }
  const namespace = t.namespaced ? info.namespace || undefined : undefined;
  if (t.namespaced && !namespace && info.name && !COLLECTION_VERBS.includes(info.verb)) {
    // /apis/apps/v1/deployments/name is not a path of a namespaced kind.
    req.resume();
    throw notFound();
  }
  // A cluster-scoped resource has no path under a namespace; `/api/v1/namespaces/<name>` itself
  // is read as in the namespace `<name>` too (the URL grammar's `namespaces` segment).
  if (!t.namespaced && info.namespace && info.resource !== 'namespaces') {
    req.resume();
    throw notFound();
  }
  const verb = info.verb;
  // A Namespace's `finalize` is served for PUT only (FinalizeREST is an Updater, no Getter).
  const allowed = createOnly
    ? CREATE_ONLY
    : sub === 'finalize'
      ? UPDATE_ONLY
      : sub
        ? SUBRESOURCE_VERBS
        : t.verbs;
  // Routes exist per verb: PUT or PATCH of a collection, POST to an object or a subresource
  // without an object match no route, which go-restful answers with a 405.
  const needsName = NAMED_VERBS.includes(verb) || sub !== '';
  const forbidsName = (verb === 'create' && !sub) || verb === 'deletecollection' || verb === 'list';
  // Across all namespaces a namespaced kind's collection is only listed and watched: kube has
  // no route to create in it or delete it whole (go-restful's 405).
  const allNamespaces = t.namespaced && !info.namespace && (verb === 'create' || verb === 'deletecollection');
  if (
    !(allowed as readonly string[]).includes(verb) ||
    (needsName && !info.name) ||
    (forbidsName && info.name) ||
    allNamespaces
  ) {
    req.resume();
    throw methodNotAllowed();
  }
  const dryRun = parseDryRun(query, verb);
  // The answer's media type is settled before anything is stored, as the apiserver's handlers
  // do: a write is never stored and then refused with 406.
  let media: Negotiated;
  try {
    media = negotiate(req.headers.accept, t, verb);
  } catch (err) {
    req.resume();
    throw err;
  }
  // Every field named, the context's too: an object literal that starts with a spread and adds
  // properties after it costs V8 (Node 20) about a microsecond per added property, here ~8 µs of
  // every request.
  const r: ResourceRequest = {
    req,
    res,
    path: ctx.path,
    query,
    info,
    user: ctx.user,
    // A Table or metadata view asked for in YAML is answered in YAML (its bodies go through the
    // serializer, which alone would not take `as=` parameters it does not offer).
    serializer: media.representation.as === 'object' ? ctx.serializer : { protobuf: false, yaml: media.yaml },
    t,
    namespace,
    name: info.name,
    subresource: sub,
    verb,
    dryRun,
    media,
    upgrade: upgrade && verb === 'watch' ? upgrade : undefined,
  };
  if (t.virtual) return serveVirtual(s, r);
  const serve = HANDLERS[verb];
  if (!serve) throw methodNotAllowed();
  return serve(s, r);
}

/** What each verb offers: lists their list forms, watch events no protobuf, virtual lists neither. */
function negotiate(accept: string | undefined, t: ResourceType, verb: string): Negotiated {
  if (verb === 'watch') return negotiateResource(accept, false);
  const list = verb === 'list';
  const media = t.virtual
    ? negotiateResource(accept, list)
    : negotiateResource(accept, list, protobufKind(t), !!t.custom);
  // The handlers' transform: a metadata view of the other shape than the answer is a 406.
  const as = media.representation.as;
  const goType = t.custom ? '*unstructured.Unstructured' : `*${internalPackage(t.group)}.${t.kind}`;
  if (list && as === 'PartialObjectMetadata')
    throw ApiError.notAcceptable(
      `you requested PartialObjectMetadata, but the requested object is a list (${goType}List)`,
    );
  if (!list && as === 'PartialObjectMetadataList')
    throw ApiError.notAcceptable(
      `you requested PartialObjectMetadataList, but the requested object is not a list (${goType})`,
    );
  return media;
}
