import { type IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  ApiError,
  type FieldSelector,
  fieldError,
  fieldErrors,
  type LabelSelector,
  parseFieldSelector,
  parseLabelSelector,
  type StatusCause,
} from 'kubeloop/api';
import { presentAs } from '../apiextensions/conversion.js';
import { scaleWithManagedFields } from '../apply/hooks.js';
import { applyConfiguration, fieldManagerCauses, managerOrUserAgent } from '../apply/index.js';
import type { Discovery } from '../discovery/discovery.js';
import { cannotBeHandledMessage, strictDecodingMessage } from '../openapi/index.js';
import {
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  patchMetaForDefinition,
} from '../patch/index.js';
import {
  decodeProtobufObject,
  encodeProtobufObject,
  PROTOBUF_CONTENT_TYPE,
  supportsProtobuf,
} from '../protobuf/index.js';
import { listItemJson, listItemObject } from '../registry/list-item.js';
import type { Registry } from '../registry/registry.js';
import type { DeleteParams, ListParams, RestStorage } from '../registry/rest.js';
import { apiVersionOf, type ResourceType, type VirtualContext } from '../registry/types.js';
import type { KubeObject, StoredObject } from '../storage/types.js';
import { isObject, type Obj } from '../util/object.js';
import { parseYamlBounded, toYaml, YamlLimitError, yamlDuplicateKeys } from '../util/yaml.js';
import { bearerToken, TOKEN_WITH_SPACE_WARNING } from './bearer.js';
import { decodeBody, mediaType, nestingExceeds, readBody } from './body.js';
import type { Faults } from './faults.js';
import type { ApiMetrics } from './metrics.js';
import { negotiate, type Representation } from './negotiation.js';
import { queryBool } from './params.js';
import { parseRequestInfo, type RequestInfo } from './request-info.js';
import { type IncludeObject, partialObjectMetadata, table } from './table.js';
import { warningHeaders } from './warnings.js';
import { serveWatch, type WatchParams } from './watch.js';

/** An authenticated caller. */
export interface UserInfo {
  username: string;
  groups: string[];
  /** Set for service accounts: their object's uid. */
  uid?: string;
}

/** The OpenAPI documents and the schema-based checks the HTTP layer needs. */
export interface OpenApiEndpoints {
  /** Serves `/openapi/...`; undefined when the path is not an OpenAPI path. */
  handle(
    path: string,
    query: URLSearchParams,
    headers: { accept?: string; 'if-none-match'?: string },
  ): { status: number; headers: Record<string, string>; body: Buffer | string } | undefined;
  /**
   * Unknown and duplicate fields of a request object (`unknown field "spec.x"` messages); with
   * `prune`, also does {@link pruneUnknown} in the same walk.
   */
  fieldProblems(t: ResourceType, obj: Obj, raw: string | undefined, prune?: boolean): string[];
  /** Drops the fields the schema does not know (what decoding into a typed struct does). */
  pruneUnknown(t: ResourceType, obj: Obj): void;
  /**
   * Decodes a request object of a built-in kind as Go does into its struct: returns the error (a
   * field of the wrong type), or else rewrites its nulls in place as the decode/encode round trip would.
   */
  decode(t: ResourceType, obj: Obj): string | undefined;
}

export interface ApiServerOptions {
  rest: RestStorage;
  registry: Registry;
  discovery: Discovery;
  openapi: OpenApiEndpoints;
  faults: Faults;
  /** Requests fault injection leaves alone (the built-in controllers' own requests). */
  exemptFromFaults?(req: IncomingMessage): boolean;
  authenticate(req: IncomingMessage): UserInfo | undefined;
  /** Answers a TokenRequest for a stored ServiceAccount (`serviceaccounts/<name>/token`). */
  issueServiceAccountToken?(serviceAccount: Obj, request: Obj): Obj;
  /** The user a bearer token authenticates as (TokenReview); undefined for an unknown token. */
  authenticateToken?(token: string): UserInfo | undefined;
  version: Record<string, string>;
  bookmarkIntervalMs: number;
  /** Answers readiness (`/readyz`). */
  ready(): boolean;
  /** Request and storage metrics, served at `/metrics`. */
  metrics?: ApiMetrics;
  log?(level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>): void;
  /** Connect-style subresources served outside the registry, by `resource/subresource` (`pods/exec`). */
  connect?: Record<string, ConnectHandler>;
}

/** A request to a connect-style subresource (`pods/log`, `pods/exec`, `pods/portforward`, ...). */
export interface ConnectRequest {
  req: IncomingMessage;
  /** The response; for an upgrade request it writes on the raw socket (errors before taking it over). */
  res: ServerResponse;
  /** The socket and first bytes of an upgrade request (`Connection: Upgrade`), to take over. */
  upgrade?: { socket: Duplex; head: Buffer };
  namespace: string;
  name: string;
  /** `get` or `create` (GET or POST). */
  verb: string;
  query: URLSearchParams;
}

/** Serves one connect-style subresource; throwing an ApiError before taking over the socket answers it. */
export type ConnectHandler = (r: ConnectRequest) => Promise<void>;

const PATCH_TYPES = new Set([
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
]);
const BODY_TYPES = new Set(['application/json', 'application/yaml', '']);

const NOT_FOUND = () =>
  new ApiError({
    code: 404,
    reason: 'NotFound',
    message: 'the server could not find the requested resource',
    details: {},
  });

/**
 * The Kubernetes HTTP API: request info from the URL, authentication, fault injection,
 * discovery and OpenAPI, then the verbs of each resource, with `Status` errors for every failure.
 */
export class ApiServer {
  /** Responses about custom resources, whose errors have no protobuf encoding either. */
  private readonly withoutProtobuf = new WeakSet<ServerResponse>();

  constructor(private readonly o: ApiServerOptions) {}

  /** The `request` listener of the node:https server. */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    if (this.o.metrics) {
      let target: { path: string; query: URLSearchParams } | undefined;
      try {
        target = splitUrl(req.url ?? '/');
      } catch {
        // A bad URL is answered 400 by handle(); it is no resource request to count.
      }
      const info = target && parseRequestInfo(req.method ?? 'GET', target.path, target.query);
      this.o.metrics.track(req, res, info, target?.query ?? new URLSearchParams());
    }
    this.handle(req, res).catch((err: unknown) => this.fail(res, err));
  };

  private readonly upgrades = new WeakMap<IncomingMessage, { socket: Duplex; head: Buffer }>();

  /**
   * The `upgrade` listener of the node:https server (WebSocket and SPDY requests): the same
   * pipeline as {@link listener}, with a response written on the raw socket, so that errors are
   * `Status` answers; a connect handler may take the socket over instead.
   */
  readonly upgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const res = new ServerResponse(req);
    res.assignSocket(socket as Socket);
    res.shouldKeepAlive = false;
    res.on('finish', () => socket.end());
    socket.on('error', () => socket.destroy());
    this.upgrades.set(req, { socket, head });
    this.handle(req, res).catch((err: unknown) => this.fail(res, err));
  };

  /**
   * The `clientError` listener of the node:https server: requests Node's parser refuses. Go's
   * server takes any method token, and the apiserver answers a method no route takes with a 405
   * `Status`; Node's parser knows a fixed list of methods, so the others are answered here.
   */
  readonly clientError = (err: Error & { code?: string }, socket: Duplex): void => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    if (err.code === 'HPE_INVALID_METHOD') {
      const body = `${JSON.stringify(methodNotAllowed().status)}\n`;
      socket.end(
        'HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json\r\nCache-Control: no-cache, private\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    // What Node (and Go) answer otherwise.
    const status =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? '431 Request Header Fields Too Large'
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? '408 Request Timeout'
          : '400 Bad Request';
    socket.end(
      `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n` +
        `Content-Length: ${status.length}\r\n\r\n${status}`,
    );
  };

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { path, query } = splitUrl(req.url ?? '/');
    const method = req.method ?? 'GET';
    const info = parseRequestInfo(method, path, query);

    const exempt = this.o.exemptFromFaults?.(req) === true;
    const fault = exempt ? undefined : this.o.faults.take(info);
    if (fault) {
      if ('drop' in fault) {
        req.socket.destroy();
        return;
      }
      if ('delayMs' in fault) await new Promise((r) => setTimeout(r, fault.delayMs));
      else {
        const err = new ApiError({
          code: fault.status,
          reason: (fault.reason ?? defaultReason(fault.status)) as ApiError['reason'],
          message: fault.message ?? `injected fault: HTTP ${fault.status}`,
          ...(fault.retryAfterSeconds !== undefined && {
            details: { retryAfterSeconds: fault.retryAfterSeconds },
          }),
        });
        if (fault.retryAfterSeconds !== undefined)
          res.setHeader('Retry-After', String(fault.retryAfterSeconds));
        this.fail(res, err);
        return;
      }
    }

    if (method === 'GET' && this.publicEndpoint(path, res)) return;
    if (!this.o.authenticate(req)) {
      req.resume();
      if (bearerToken(req.headers.authorization).spaceBeforeToken)
        res.appendHeader('Warning', warningHeaders([TOKEN_WITH_SPACE_WARNING]));
      throw ApiError.unauthorized();
    }
    if (path === '/metrics' && this.o.metrics) {
      req.resume();
      if (method !== 'GET') throw methodNotAllowed();
      const { contentType, body } = await this.o.metrics.render();
      res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private' });
      res.end(body);
      return;
    }
    if (path === '/openapi' || path.startsWith('/openapi/')) {
      const out = this.o.openapi.handle(path, query, {
        ...(req.headers.accept !== undefined && { accept: req.headers.accept }),
        ...(req.headers['if-none-match'] !== undefined && { 'if-none-match': req.headers['if-none-match'] }),
      });
      if (!out) throw NOT_FOUND();
      res.writeHead(out.status, out.headers);
      res.end(out.body);
      return;
    }
    if (!info.isResourceRequest) return this.serveDiscovery(req, res, info);
    await this.serveResource(req, res, info, query);
  }

  /** `/healthz`, `/livez`, `/readyz`, `/version`: readable without credentials, like the default `system:public-info-viewer`. */
  private publicEndpoint(path: string, res: ServerResponse): boolean {
    if (
      path === '/healthz' ||
      path === '/livez' ||
      path.startsWith('/healthz/') ||
      path.startsWith('/livez/')
    ) {
      res.writeHead(200, {
        'Content-Type': 'text/plain; charset=utf-8',
        'X-Content-Type-Options': 'nosniff',
      });
      res.end('ok');
      return true;
    }
    if (path === '/readyz' || path.startsWith('/readyz/')) {
      const ready = this.o.ready();
      res.writeHead(ready ? 200 : 500, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(ready ? 'ok' : '[-]storage not ready\nreadyz check failed');
      return true;
    }
    if (path === '/version' || path === '/version/') {
      // WriteRawJSON: indented, and no trailing newline (unlike the serializer's answers).
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
      res.end(JSON.stringify(this.o.version, null, 2));
      return true;
    }
    return false;
  }

  private serveDiscovery(req: IncomingMessage, res: ServerResponse, info: RequestInfo): void {
    if (req.method !== 'GET') {
      req.resume();
      // go-restful answers 405 on the paths it serves; any other path falls through to http.NotFound.
      throw this.o.discovery.document(info.path, false) === undefined
        ? new PageNotFound()
        : methodNotAllowed();
    }
    const isRoot = info.path.replace(/\/+$/, '') === '/api' || info.path.replace(/\/+$/, '') === '/apis';
    const neg = negotiate(req.headers.accept, {
      table: false,
      metadata: false,
      list: false,
      discovery: isRoot,
    });
    if (!neg)
      throw ApiError.notAcceptable(
        'only the following media types are accepted: application/json, application/yaml',
      );
    const aggregated = neg.representation.as === 'APIGroupDiscoveryList';
    const body = this.o.discovery.document(info.path, aggregated);
    if (body === undefined) throw new PageNotFound();
    const contentType = aggregated
      ? `application/json;g=apidiscovery.k8s.io;v=${(neg.representation as { version: string }).version};as=APIGroupDiscoveryList`
      : 'application/json';
    res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private' });
    res.end(body.endsWith('\n') ? body : `${body}\n`);
  }

  private async serveResource(
    req: IncomingMessage,
    res: ServerResponse,
    info: RequestInfo,
    query: URLSearchParams,
  ): Promise<void> {
    const t = this.o.registry.lookup(info.group, info.version, info.resource);
    if (!t) {
      req.resume();
      // A built-in group/version is a go-restful web service, whose unmatched routes answer a
      // Status; any other path (unknown group or version, a deleted CRD's) reaches the end of the
      // handler chain: http.NotFound.
      const builtin = this.o.registry
        .all()
        .some((x) => !x.custom && x.group === info.group && x.version === info.version);
      throw builtin ? NOT_FOUND() : new PageNotFound();
    }
    if (t.custom) this.withoutProtobuf.add(res);
    if (t.custom?.deprecationWarning)
      res.appendHeader('Warning', warningHeaders([t.custom.deprecationWarning]));
    const connect =
      info.subresource && !t.group ? this.o.connect?.[`${t.resource}/${info.subresource}`] : undefined;
    if (connect) {
      if (!info.namespace || !info.name) throw NOT_FOUND();
      if (info.verb !== 'get' && info.verb !== 'create') throw methodNotAllowed();
      const upgrade = this.upgrades.get(req);
      await connect({
        req,
        res,
        ...(upgrade && { upgrade }),
        namespace: info.namespace,
        name: info.name,
        verb: info.verb,
        query,
      });
      return;
    }
    if (
      info.subresource &&
      !(info.subresource === 'status' && t.subresources.status) &&
      !(info.subresource === 'scale' && t.subresources.scale) &&
      !(info.subresource === 'approval' && t.subresources.approval) &&
      !(info.subresource === 'token' && t.subresources.token && this.o.issueServiceAccountToken) &&
      !(info.subresource === 'binding' && t.group === '' && t.resource === 'pods')
    ) {
      req.resume();
      throw NOT_FOUND();
    }
    const namespace = t.namespaced ? info.namespace || undefined : undefined;
    if (
      t.namespaced &&
      !namespace &&
      info.name &&
      !['list', 'watch', 'deletecollection'].includes(info.verb)
    ) {
      // /apis/apps/v1/deployments/name is not a path of a namespaced kind.
      req.resume();
      throw NOT_FOUND();
    }
    if (!t.namespaced && info.namespace && t.resource !== 'namespaces') {
      req.resume();
      throw NOT_FOUND();
    }
    const verb = info.verb;
    const allowed =
      info.subresource === 'binding' || info.subresource === 'token'
        ? ['create']
        : info.subresource
          ? ['get', 'update', 'patch']
          : t.verbs;
    // Routes exist per verb: PUT or PATCH of a collection, POST to an object or a subresource
    // without an object match no route, which go-restful answers with a 405.
    const needsName = ['get', 'update', 'patch', 'delete'].includes(verb) || info.subresource !== '';
    const forbidsName =
      (verb === 'create' && !info.subresource) || verb === 'deletecollection' || verb === 'list';
    if (
      !(allowed as readonly string[]).includes(verb) ||
      (needsName && !info.name) ||
      (forbidsName && info.name)
    ) {
      req.resume();
      throw methodNotAllowed();
    }
    const name = t.resource === 'namespaces' && !t.namespaced ? info.name : info.name;
    const dryRun = parseDryRun(query);
    // The answer's media type is settled before anything is stored, as the apiserver's handlers
    // do: a write is never stored and then refused with 406.
    if (verb !== 'list' && verb !== 'watch') {
      try {
        this.negotiateResource(req, false, protobufKind(t), !!t.custom);
      } catch (err) {
        req.resume();
        throw err;
      }
    }
    if (t.virtual) {
      await this.serveVirtual(req, res, t, namespace, name, verb, dryRun);
      return;
    }

    switch (verb) {
      case 'get':
        this.get(req, res, t, namespace, name, info.subresource);
        return;
      case 'list':
        this.list(req, res, t, namespace, query);
        return;
      case 'watch':
        this.watch(req, res, t, namespace, name, query, info);
        return;
      case 'create': {
        if (info.subresource === 'token') {
          const { obj } = await this.readBody(req);
          const serviceAccount = this.o.rest.get(t, namespace, name).object as Obj;
          this.sendJson(req, res, 201, this.o.issueServiceAccountToken!(serviceAccount, obj));
          return;
        }
        if (info.subresource === 'binding') {
          const { obj } = await this.readBody(req);
          await this.o.rest.bind(t, namespace, name, obj, {
            dryRun,
            fieldManager: writeManager(req, query, 'CreateOptions'),
          });
          this.sendJson(req, res, 201, {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Success',
            code: 201,
          });
          return;
        }
        const { obj, raw, yamlDuplicates } = await this.readObject(req, t);
        const requester = t.behaviour.setRequester && this.o.authenticate(req);
        if (requester) t.behaviour.setRequester?.(obj, requester);
        const fieldManager = writeManager(req, query, 'CreateOptions');
        const warnings = keepManagedFieldsReset(obj, () =>
          this.checkFields(t, obj, raw, query, 'create', undefined, yamlDuplicates),
        );
        const stored = await this.o.rest.create(t, namespace, obj, { dryRun, fieldManager });
        this.respondObject(req, res, 201, t, stored, warnings);
        return;
      }
      case 'update': {
        if (info.subresource === 'scale') {
          const { obj } = await this.readBody(req);
          const fieldManager = writeManager(req, query, 'UpdateOptions');
          const scale = await this.o.rest.updateScale(t, namespace, name, obj, { dryRun, fieldManager });
          this.sendJson(req, res, 200, scale);
          return;
        }
        const { obj, raw, yamlDuplicates } = await this.readObject(req, t);
        const fieldManager = writeManager(req, query, 'UpdateOptions');
        const warnings = keepManagedFieldsReset(obj, () =>
          this.checkFields(t, obj, raw, query, 'update', undefined, yamlDuplicates),
        );
        const stored = await this.o.rest.update(t, namespace, name, obj, statusLike(info.subresource), {
          dryRun,
          fieldManager,
        });
        this.respondObject(req, res, 200, t, stored, warnings);
        return;
      }
      case 'patch':
        await this.patch(req, res, t, namespace, name, info.subresource, query, dryRun);
        return;
      case 'delete': {
        const opts = await this.deleteOptions(req, query);
        const { stored, deleted } = await this.o.rest.delete(t, namespace, name, opts, {
          dryRun: opts.dryRun ?? dryRun,
        });
        if (deleted && !t.returnDeletedObject) {
          const m = stored.object.metadata as Obj;
          this.sendJson(req, res, 200, {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Success',
            details: { name, ...(t.group && { group: t.group }), kind: t.resource, uid: m.uid },
          });
          return;
        }
        // kube-apiserver answers 202 for a deletion left pending when orphanDependents=false was asked.
        this.respondObject(req, res, !deleted && opts.orphanDependents === false ? 202 : 200, t, stored);
        return;
      }
      case 'deletecollection': {
        const opts = await this.deleteOptions(req, query);
        const items = await this.o.rest.deleteCollection(t, namespace, listParams(query), opts, {
          dryRun: opts.dryRun ?? dryRun,
        });
        this.sendJson(req, res, 200, {
          kind: t.listKind,
          apiVersion: apiVersionOf(t),
          metadata: { resourceVersion: String(this.o.rest.store.revision) },
          items: items.map((i) => listItemObject(t, i)),
        });
        return;
      }
      default:
        throw methodNotAllowed();
    }
  }

  /** Kinds without storage (reviews, bindings, component statuses): see `VirtualResource`. */
  private async serveVirtual(
    req: IncomingMessage,
    res: ServerResponse,
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    verb: string,
    dryRun: boolean,
  ): Promise<void> {
    const v = t.virtual!;
    const user = this.o.authenticate(req) ?? {
      username: 'system:anonymous',
      groups: ['system:unauthenticated'],
    };
    const ctx: VirtualContext = {
      user,
      namespace,
      labelSelector: new URL(req.url ?? '/', 'http://x').searchParams.get('labelSelector') ?? undefined,
      dryRun,
      authenticateToken: (token) => this.o.authenticateToken?.(token),
      bind: async (ns, binding, dry) => {
        const pods = this.o.registry.lookup('', 'v1', 'pods')!;
        const podName = isObject(binding.metadata) ? String(binding.metadata.name ?? '') : '';
        await this.o.rest.bind(pods, ns, podName, binding, { dryRun: dry, fieldManager: undefined });
      },
    };
    if (verb === 'create' && v.create) {
      const { obj } = await this.readObject(req, t);
      this.sendJson(req, res, 201, await v.create(obj, ctx));
      return;
    }
    req.resume();
    const items = (v.list?.(ctx) ?? []).map(
      (object): StoredObject => ({
        key: '',
        object: object as KubeObject,
        revision: 0,
        json: JSON.stringify(object),
      }),
    );
    if (verb === 'get') {
      const found = items.find((i) => (i.object.metadata as Obj).name === name);
      if (!found) throw ApiError.notFound({ group: t.group, resource: t.resource }, name);
      this.respondObject(req, res, 200, t, found);
      return;
    }
    const neg = this.negotiateResource(req, true);
    if (neg.representation.as === 'Table') {
      this.sendJson(
        req,
        res,
        200,
        table(t, items, includeObject(new URLSearchParams()), { resourceVersion: '' }),
      );
      return;
    }
    this.sendJson(req, res, 200, {
      kind: t.listKind,
      apiVersion: apiVersionOf(t),
      metadata: {},
      items: items.map((i) => i.object),
    });
  }

  private get(
    req: IncomingMessage,
    res: ServerResponse,
    t: ResourceType,
    ns: string | undefined,
    name: string,
    sub: string,
  ): void {
    if (sub === 'scale') {
      this.sendJson(req, res, 200, this.o.rest.getScale(t, ns, name));
      return;
    }
    const stored = this.o.rest.get(t, ns, name);
    this.respondObject(req, res, 200, t, stored);
  }

  private list(
    req: IncomingMessage,
    res: ServerResponse,
    t: ResourceType,
    ns: string | undefined,
    query: URLSearchParams,
  ): void {
    const neg = this.negotiateResource(req, true, protobufKind(t), !!t.custom);
    const out = this.o.rest.list(t, ns, listParams(query));
    if (t.custom || t.storedAs) out.items = out.items.map((i) => presentAs(t, i));
    const listMeta: Obj = { resourceVersion: out.resourceVersion };
    if (out.continue !== undefined) listMeta.continue = out.continue;
    if (out.remainingItemCount !== undefined) listMeta.remainingItemCount = out.remainingItemCount;

    switch (neg.representation.as) {
      case 'Table':
        this.sendJson(req, res, 200, table(t, out.items, includeObject(query), listMeta));
        return;
      case 'PartialObjectMetadata':
      case 'PartialObjectMetadataList':
        this.sendJson(req, res, 200, {
          kind: 'PartialObjectMetadataList',
          apiVersion: 'meta.k8s.io/v1',
          metadata: listMeta,
          items: out.items.map(partialObjectMetadata),
        });
        return;
      default: {
        if (neg.protobuf) {
          const items = out.items.map((i) => listItemObject(t, i));
          const list = { kind: t.listKind, apiVersion: apiVersionOf(t), metadata: listMeta, items };
          if (this.sendProtobuf(res, 200, list)) return;
        }
        // Items are written from their cached encodings: no re-serialisation of stored objects.
        const head = `{"kind":${JSON.stringify(t.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(t))},"metadata":${JSON.stringify(listMeta)},"items":[`;
        const items = out.items.map((i) => listItemJson(t, i));
        if (neg.yaml) {
          this.sendJson(req, res, 200, JSON.parse(`${head}${items.join(',')}]}`));
          return;
        }
        res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
        writeChunked(res, head, items, ']}\n');
      }
    }
  }

  private watch(
    req: IncomingMessage,
    res: ServerResponse,
    t: ResourceType,
    ns: string | undefined,
    name: string,
    query: URLSearchParams,
    info: RequestInfo,
  ): void {
    const neg = this.negotiateResource(req, false);
    const p: WatchParams = {
      ...listParams(query),
      allowWatchBookmarks: queryBool(query, 'allowWatchBookmarks') === true,
    };
    const timeout = query.get('timeoutSeconds');
    // A negative timeout is read as kube-apiserver reads it: a watch that ends at once.
    if (timeout !== null) p.timeoutSeconds = parseInt64(timeout);
    const sie = queryBool(query, 'sendInitialEvents');
    if (sie !== undefined) p.sendInitialEvents = sie;
    if (name) {
      p.fieldSelector = [...(p.fieldSelector ?? []), { field: 'metadata.name', operator: '=', value: name }];
    }
    serveWatch(this.o.rest, t, ns, p, res, {
      bookmarkIntervalMs: this.o.bookmarkIntervalMs,
      maxBufferedBytes: 64 * 1024 * 1024,
      representation: neg.representation,
      includeObject: includeObject(query),
      track: (close) =>
        this.o.exemptFromFaults?.(req) ? () => undefined : this.o.faults.trackWatch(info, close),
    });
  }

  private async patch(
    req: IncomingMessage,
    res: ServerResponse,
    t: ResourceType,
    ns: string | undefined,
    name: string,
    sub: string,
    query: URLSearchParams,
    dryRun: boolean,
  ): Promise<void> {
    const type = mediaType(req.headers['content-type']);
    if (!PATCH_TYPES.has(type)) {
      req.resume();
      throw ApiError.unsupportedMediaType(type);
    }
    if (type === 'application/apply-patch+yaml') {
      await this.apply(req, res, t, ns, name, sub, query, dryRun);
      return;
    }
    const meta = t.definition ? patchMetaForDefinition(t.definition) : undefined;
    if (type === 'application/strategic-merge-patch+json' && !meta) {
      req.resume();
      throw new ApiError({
        code: 415,
        reason: 'UnsupportedMediaType',
        message: `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
      });
    }
    const raw = await readBody(req);
    const fieldManager = writeManager(req, query, 'PatchOptions', false);
    const patch = decodeBody(raw, 'application/json');
    if (type === 'application/json-patch+json' ? !Array.isArray(patch) : !isObject(patch)) {
      throw ApiError.badRequest(
        type === 'application/json-patch+json'
          ? 'json: cannot unmarshal object into Go value of type jsonpatch.Patch'
          : 'error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}',
      );
    }
    const applyPatch = (current: Obj): Obj => {
      const next =
        type === 'application/json-patch+json'
          ? applyJsonPatch(current, patch)
          : type === 'application/merge-patch+json'
            ? applyMergePatch(current, patch)
            : applyStrategicMergePatch(current, patch, meta);
      if (!isObject(next)) throw ApiError.badRequest('the patch did not produce an object');
      return next;
    };
    let warnings: string[] = [];
    if (sub === 'scale') {
      const current = this.o.rest.getScale(t, ns, name, true);
      const scale = await this.o.rest.updateScale(t, ns, name, applyPatch(current), { dryRun, fieldManager });
      this.sendJson(req, res, 200, scale);
      return;
    }
    const stored = await this.o.rest.patch(
      t,
      ns,
      name,
      statusLike(sub),
      { dryRun, fieldManager },
      (current) => {
        const next = applyPatch(current);
        // In a strict decoding error the patch handler prints a strategic merge patch as Go's
        // `%+v` of the patch map, and a JSON or merge patch as the patched object's JSON.
        const shown = () =>
          type === 'application/strategic-merge-patch+json' ? goSprint(patch) : JSON.stringify(next);
        warnings = keepManagedFieldsReset(next, () =>
          this.checkFields(t, next, undefined, query, 'patch', shown),
        );
        return next;
      },
    );
    this.respondObject(req, res, 200, t, stored, warnings);
  }

  /**
   * Server-side apply (`application/apply-patch+yaml`): merges the configuration into the object
   * (creating it when absent, except through a subresource), with conflicts between managers.
   */
  private async apply(
    req: IncomingMessage,
    res: ServerResponse,
    t: ResourceType,
    ns: string | undefined,
    name: string,
    sub: string,
    query: URLSearchParams,
    dryRun: boolean,
  ): Promise<void> {
    const raw = await readBody(req);
    const manager = writeManager(req, query, 'PatchOptions', true);
    const force = queryBool(query, 'force') === true;
    const config = decodeApplyYaml(raw.toString('utf8'), query.get('fieldValidation') === 'Strict');
    const ctx = { dryRun, fieldManager: manager, applied: true };
    // Types of the configuration are checked by the typed merge; this only normalises the result
    // as decoding into the Go type does (canonical quantities, empty omitempty lists dropped).
    const normalise = (obj: Obj) => {
      this.checkFields(t, obj, undefined, new URLSearchParams({ fieldValidation: 'Ignore' }), 'patch');
      return obj;
    };
    if (sub === 'scale') {
      const parent = this.o.rest.get(t, ns, name);
      const current = scaleWithManagedFields(
        t,
        parent.object as Obj,
        this.o.rest.getScale(t, ns, name, true),
      );
      const next = applyConfiguration(t, current, structuredClone(config), {
        manager,
        force,
        subresource: 'scale',
      });
      const scale = await this.o.rest.updateScale(t, ns, name, next, ctx);
      this.sendJson(req, res, 200, scale);
      return;
    }
    const subresource = statusLike(sub);
    for (let attempt = 0; ; attempt++) {
      try {
        const stored = await this.o.rest.patch(t, ns, name, subresource, ctx, (current) =>
          normalise(applyConfiguration(t, current, structuredClone(config), { manager, force, subresource })),
        );
        this.respondObject(req, res, 200, t, stored);
        return;
      } catch (err) {
        // Apply creates a missing object, except through a subresource.
        if (!(err instanceof ApiError && err.code === 404 && err.reason === 'NotFound') || subresource)
          throw err;
        if (this.o.rest.store.get(this.o.rest.key(t, ns, name))) throw err;
      }
      const created = normalise(
        applyConfiguration(t, undefined, structuredClone(config), { manager, force }),
      );
      const m = isObject(created.metadata) ? created.metadata : {};
      if (typeof m.uid === 'string' && m.uid !== '') {
        throw ApiError.conflict(
          { group: t.group, resource: t.resource },
          name,
          `uid mismatch: the provided object specified uid ${m.uid}, and no existing object was found`,
        );
      }
      // WipeObjectMetaSystemFields, then the patch handler's namespace and name checks.
      for (const f of [
        'creationTimestamp',
        'uid',
        'deletionTimestamp',
        'deletionGracePeriodSeconds',
        'selfLink',
      ])
        delete m[f];
      if (t.namespaced && m.namespace !== undefined && m.namespace !== '' && m.namespace !== ns) {
        throw ApiError.badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      const objName = typeof m.name === 'string' ? m.name : '';
      if (objName !== name) {
        throw ApiError.badRequest(
          `the name of the object (${objName}) does not match the name on the URL (${name})`,
        );
      }
      try {
        const stored = await this.o.rest.create(t, ns, created, ctx);
        this.respondObject(req, res, 201, t, stored);
        return;
      } catch (err) {
        // Created concurrently: apply to it instead.
        if (!(err instanceof ApiError && err.reason === 'AlreadyExists') || attempt >= 3) throw err;
      }
    }
  }

  /** fieldValidation=Strict|Warn|Ignore on a request object; returns Warning texts. */
  private checkFields(
    t: ResourceType,
    obj: Obj,
    raw: string | undefined,
    query: URLSearchParams,
    verb: 'create' | 'update' | 'patch',
    patchShown?: () => string,
    /** go-yaml's strict error of a YAML body (duplicate keys), reported before the fields' own. */
    yamlStrictError?: string,
  ): string[] {
    const mode = query.get('fieldValidation') || 'Warn';
    if (mode !== 'Strict' && mode !== 'Warn' && mode !== 'Ignore') {
      throw ApiError.badRequest(
        `fieldValidation: Unsupported value: "${mode}": supported values: "Ignore", "Strict", "Warn"`,
      );
    }
    // A patch can nest a body deeper than any request did; the server's walks are recursive.
    if (nestingExceeds(obj))
      throw ApiError.badRequest(`couldn't get version/kind; json parse error: exceeded max depth`);
    // Decoding into the Go struct fails before strict field validation looks at anything.
    const typeError = this.o.openapi.decode(t, obj);
    if (typeError !== undefined) {
      if (verb === 'patch') {
        // Like strict errors below: field.Invalid("patch", …) of a kindless, nameless object.
        const cause = fieldError(
          'FieldValueInvalid',
          'patch',
          patchShown?.() ?? JSON.stringify(obj),
          typeError,
        );
        throw new ApiError({
          code: 422,
          reason: 'Invalid',
          message: ` "" is invalid: ${cause.field}: ${cause.message}`,
          details: { causes: [cause] },
        });
      }
      throw ApiError.badRequest(
        `${t.kind} in version ${JSON.stringify(t.version)} cannot be handled as a ${t.kind}: ${typeError}`,
      );
    }
    if (mode === 'Ignore') {
      this.o.openapi.pruneUnknown(t, obj);
      return [];
    }
    // Warn keeps the object whatever its problems: find and prune them in one walk.
    const leading = yamlStrictError === undefined ? [] : [yamlStrictError];
    if (mode === 'Warn') return [...leading, ...this.o.openapi.fieldProblems(t, obj, raw, true)];
    const problems = [...leading, ...this.o.openapi.fieldProblems(t, obj, raw)];
    if (problems.length > 0 && mode === 'Strict') {
      if (verb === 'patch') {
        // patch.go reports them as field.Invalid("patch", …) of a kindless, nameless object: a 422.
        const cause = fieldError(
          'FieldValueInvalid',
          'patch',
          patchShown?.() ?? JSON.stringify(obj),
          strictDecodingMessage(problems),
        );
        throw new ApiError({
          code: 422,
          reason: 'Invalid',
          message: ` "" is invalid: ${cause.field}: ${cause.message}`,
          details: { causes: [cause] },
        });
      }
      throw ApiError.badRequest(cannotBeHandledMessage(t.kind, t.version, problems));
    }
    this.o.openapi.pruneUnknown(t, obj);
    return problems;
  }

  private async readBody(req: IncomingMessage): Promise<{ obj: Obj; raw: string; yamlDuplicates?: string }> {
    const type = mediaType(req.headers['content-type']);
    if (type === PROTOBUF_CONTENT_TYPE) {
      // kubectl's typed clients send built-in objects as protobuf; answers stay JSON.
      return { obj: decodeProtobufObject(await readBody(req)), raw: '' };
    }
    if (!BODY_TYPES.has(type)) {
      req.resume();
      throw ApiError.unsupportedMediaType(type);
    }
    const raw = await readBody(req);
    const obj = decodeBody(raw, type || 'application/json');
    if (!isObject(obj))
      throw ApiError.badRequest(`Object 'Kind' is missing in '${raw.toString('utf8').slice(0, 200)}'`);
    if (type === 'application/yaml') {
      const duplicates = yamlDuplicateKeys(raw.toString('utf8'));
      return { obj, raw: '', ...(duplicates !== undefined && { yamlDuplicates: duplicates }) };
    }
    return { obj, raw: raw.toString('utf8') };
  }

  /** Reads a create/update body and checks its apiVersion and kind against the URL. */
  private async readObject(
    req: IncomingMessage,
    t: ResourceType,
  ): Promise<{ obj: Obj; raw: string | undefined; yamlDuplicates?: string }> {
    const { obj, raw, yamlDuplicates } = await this.readBody(req);
    const expected = apiVersionOf(t);
    const apiVersion = obj.apiVersion;
    const kind = obj.kind;
    if (apiVersion !== undefined && apiVersion !== '' && apiVersion !== expected) {
      if (typeof apiVersion !== 'string')
        throw ApiError.badRequest(`apiVersion: Invalid value: must be a string`);
      throw ApiError.badRequest(
        `the API version in the data (${apiVersion}) does not match the expected API version (${expected})`,
      );
    }
    if (kind !== undefined && kind !== '' && kind !== t.kind) {
      throw ApiError.badRequest(
        `${typeof kind === 'string' ? kind : JSON.stringify(kind)} in version "${t.version}" cannot be handled as a ${t.kind}: the kind in the body does not match the resource of the URL (${t.resource})`,
      );
    }
    obj.apiVersion = expected;
    obj.kind = t.kind;
    return { obj, raw: raw || undefined, ...(yamlDuplicates !== undefined && { yamlDuplicates }) };
  }

  private async deleteOptions(
    req: IncomingMessage,
    query: URLSearchParams,
  ): Promise<DeleteParams & { dryRun?: boolean; orphanDependents?: boolean }> {
    const opts: DeleteParams & { dryRun?: boolean; orphanDependents?: boolean } = {};
    const raw = await readBody(req);
    if (raw.length > 0) {
      const body =
        mediaType(req.headers['content-type']) === PROTOBUF_CONTENT_TYPE
          ? decodeProtobufObject(raw)
          : decodeBody(raw, 'application/json');
      if (!isObject(body)) throw ApiError.badRequest('DeleteOptions must be an object');
      if (body.propagationPolicy !== undefined) opts.propagationPolicy = propagation(body.propagationPolicy);
      if (body.orphanDependents === true) opts.propagationPolicy = 'Orphan';
      if (typeof body.orphanDependents === 'boolean') opts.orphanDependents = body.orphanDependents;
      // `kubectl delete --dry-run=server` asks for the dry run in the body, not the query.
      if (body.dryRun !== undefined && body.dryRun !== null) {
        if (!Array.isArray(body.dryRun) || body.dryRun.some((v) => v !== 'All')) {
          throw ApiError.invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', [
            fieldError('FieldValueNotSupported', 'dryRun', body.dryRun, 'supported values: "All"'),
          ]);
        }
        if (body.dryRun.length > 0) opts.dryRun = true;
      }
      if (typeof body.gracePeriodSeconds === 'number') opts.gracePeriodSeconds = body.gracePeriodSeconds;
      if (isObject(body.preconditions)) {
        opts.preconditions = {
          ...(typeof body.preconditions.uid === 'string' && { uid: body.preconditions.uid }),
          ...(typeof body.preconditions.resourceVersion === 'string' && {
            resourceVersion: body.preconditions.resourceVersion,
          }),
        };
      }
    }
    const qp = query.get('propagationPolicy');
    if (qp !== null) opts.propagationPolicy = propagation(qp);
    const orphan = queryBool(query, 'orphanDependents');
    if (orphan !== undefined) opts.orphanDependents = orphan;
    if (orphan === true) opts.propagationPolicy = 'Orphan';
    const grace = query.get('gracePeriodSeconds');
    if (grace !== null) opts.gracePeriodSeconds = parseNonNegativeInt('gracePeriodSeconds', grace);
    return opts;
  }

  private negotiateResource(
    req: IncomingMessage,
    list: boolean,
    protobuf = false,
    custom = false,
  ): { representation: Representation; yaml: boolean; protobuf?: boolean } {
    const neg = negotiate(req.headers.accept, { table: true, metadata: true, list, protobuf });
    if (!neg) {
      // Custom resources have no protobuf serializer.
      throw ApiError.notAcceptable(
        `only the following media types are accepted: application/json, application/yaml${custom ? '' : ', application/vnd.kubernetes.protobuf'}`,
      );
    }
    return neg;
  }

  private respondObject(
    req: IncomingMessage,
    res: ServerResponse,
    code: number,
    t: ResourceType,
    stored: StoredObject,
    warnings: string[] = [],
  ): void {
    if (warnings.length > 0) res.appendHeader('Warning', warningHeaders(warnings));
    const neg = this.negotiateResource(req, false, protobufKind(t), !!t.custom);
    stored = presentAs(t, stored);
    switch (neg.representation.as) {
      case 'Table':
        this.sendJson(
          req,
          res,
          code,
          table(t, [stored], includeObject(new URLSearchParams()), {
            resourceVersion: String(stored.revision),
          }),
        );
        return;
      case 'PartialObjectMetadata':
      case 'PartialObjectMetadataList':
        this.sendJson(req, res, code, partialObjectMetadata(stored));
        return;
      default:
        if (neg.protobuf && this.sendProtobuf(res, code, stored.object as Obj)) return;
        if (neg.yaml) this.sendJson(req, res, code, stored.object);
        else this.send(res, code, stored.json);
    }
  }

  /**
   * Answers `obj` in Kubernetes' protobuf encoding, as Go's Marshal writes it. Returns false,
   * having written nothing, when the object does not encode (a field the descriptors lack): the
   * caller answers JSON instead, which is better than failing a write already stored.
   */
  private sendProtobuf(res: ServerResponse, code: number, obj: Obj): boolean {
    let body: Buffer;
    try {
      body = encodeProtobufObject(obj, { gogo: true });
    } catch (err) {
      this.o.log?.('warn', 'answering JSON: the object does not encode as protobuf', {
        kind: obj.kind,
        err: err instanceof Error ? err.message : String(err),
      });
      return false;
    }
    res.writeHead(code, { 'Content-Type': PROTOBUF_CONTENT_TYPE, 'Cache-Control': 'no-cache, private' });
    res.end(body);
    return true;
  }

  private sendJson(req: IncomingMessage, res: ServerResponse, code: number, body: unknown): void {
    const neg = negotiate(req.headers.accept, { table: false, metadata: false, list: false, protobuf: true });
    if (
      neg?.protobuf &&
      isObject(body) &&
      typeof body.apiVersion === 'string' &&
      typeof body.kind === 'string' &&
      supportsProtobuf(body.apiVersion, body.kind) &&
      this.sendProtobuf(res, code, body)
    )
      return;
    if (negotiate(req.headers.accept, { table: false, metadata: false, list: false })?.yaml) {
      res.writeHead(code, { 'Content-Type': 'application/yaml', 'Cache-Control': 'no-cache, private' });
      res.end(toYaml(body));
      return;
    }
    this.send(res, code, JSON.stringify(body));
  }

  /** Writes a JSON body as Go's `json.Encoder` does (the apiserver's serializer): newline-terminated. */
  private send(res: ServerResponse, code: number, json: string): void {
    res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    res.end(`${json}\n`);
  }

  private fail(res: ServerResponse, err: unknown): void {
    let apiErr: ApiError;
    if (err instanceof ApiError) apiErr = err;
    else {
      apiErr = ApiError.internal(err instanceof Error ? err.message : String(err));
      this.o.log?.('error', 'request failed', { err: err instanceof Error ? err.stack : String(err) });
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (err instanceof PageNotFound) {
      // Go's http.NotFound.
      res.writeHead(404, {
        'Content-Type': 'text/plain; charset=utf-8',
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'no-cache, private',
      });
      res.end('404 page not found\n');
      return;
    }
    if (apiErr.code === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="kubeloop"');
    if (apiErr.retryAfter !== undefined && !res.hasHeader('Retry-After'))
      res.setHeader('Retry-After', String(apiErr.retryAfter));
    // Errors are negotiated as any answer (ErrorNegotiated): a client that asks for protobuf
    // first gets its Status so (not from custom resources, which have no protobuf serializer),
    // and one whose Accept nothing satisfies gets it as WriteRawJSON writes it: indented.
    const accept = res.req?.headers.accept;
    const neg = negotiate(accept, {
      table: false,
      metadata: false,
      list: false,
      protobuf: !this.withoutProtobuf.has(res),
    });
    if (!neg) {
      res.writeHead(apiErr.code, {
        'Content-Type': 'application/json',
        'Cache-Control': 'no-cache, private',
      });
      res.end(JSON.stringify(apiErr.status, null, 2));
      return;
    }
    if (neg.protobuf && this.sendProtobuf(res, apiErr.code, apiErr.status as unknown as Obj)) return;
    if (neg.yaml) {
      res.writeHead(apiErr.code, {
        'Content-Type': 'application/yaml',
        'Cache-Control': 'no-cache, private',
      });
      res.end(toYaml(apiErr.status));
      return;
    }
    this.send(res, apiErr.code, JSON.stringify(apiErr.status));
  }
}

/** Whether objects and lists of `t` can be answered in protobuf: built-in kinds the descriptors cover. */
function protobufKind(t: ResourceType): boolean {
  if (t.custom) return false;
  const apiVersion = apiVersionOf(t);
  return supportsProtobuf(apiVersion, t.kind) && supportsProtobuf(apiVersion, t.listKind);
}

/** A path no handler serves: answered as Go's `http.NotFound` (plain text), not with a `Status`. */
class PageNotFound extends ApiError {
  constructor() {
    super({ code: 404, reason: 'NotFound', message: '404 page not found' });
  }
}

/**
 * The decoded path and the query of a request target, as Go's `URL.Path` reads them: escapes
 * such as `%3A` are decoded (names in paths are often escaped), and `..` segments stay as they
 * are (a WHATWG URL would resolve them).
 */
function splitUrl(target: string): { path: string; query: URLSearchParams } {
  const q = target.indexOf('?');
  const raw = q >= 0 ? target.slice(0, q) : target;
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    const bad = /%(?![0-9a-fA-F]{2}).{0,2}/.exec(raw)?.[0] ?? raw;
    throw ApiError.badRequest(`invalid URL escape ${JSON.stringify(bad)}`);
  }
  return {
    path: path.startsWith('/') ? path : `/${path}`,
    query: new URLSearchParams(q >= 0 ? target.slice(q + 1) : ''),
  };
}

/** Writes `head`, the items' cached JSON separated by commas, and `tail`, in a few large chunks. */
function writeChunked(res: ServerResponse, head: string, items: string[], tail: string): void {
  let buf = head;
  for (let i = 0; i < items.length; i++) {
    buf += i === 0 ? items[i]! : `,${items[i]!}`;
    if (buf.length > 256 * 1024) {
      res.write(buf);
      buf = '';
    }
  }
  res.end(buf + tail);
}

function listParams(query: URLSearchParams): ListParams {
  const p: ListParams = {};
  const ls = query.get('labelSelector');
  if (ls) p.labelSelector = parseLabelSelector(ls) as LabelSelector;
  const fs = query.get('fieldSelector');
  if (fs) p.fieldSelector = parseFieldSelector(fs) as FieldSelector;
  const limit = query.get('limit');
  if (limit !== null && limit !== '') p.limit = parseNonNegativeInt('limit', limit);
  const cont = query.get('continue');
  if (cont) p.continue = cont;
  const rv = query.get('resourceVersion');
  if (rv !== null) p.resourceVersion = rv;
  const rvm = query.get('resourceVersionMatch');
  if (rvm) p.resourceVersionMatch = rvm;
  return p;
}

function includeObject(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject');
  if (v === null || v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw ApiError.badRequest(
    `includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`,
  );
}

/** Go's `%v` of a value decoded from JSON into `interface{}`: `map[k:v …]` (sorted keys), `[a b]`, `<nil>`. */
function goSprint(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goSprint).join(' ')}]`;
  if (isObject(v))
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${goSprint(v[k])}`)
      .join(' ')}]`;
  if (typeof v === 'number' && !Number.isInteger(v)) {
    // float64 with the shortest digits; %e notation below 1e-4 and from 1e6, exponent of 2+ digits.
    const [mantissa, exp] = v.toExponential().split('e') as [string, string];
    const e = Number(exp);
    if (e >= -4 && e < 6) return String(v);
    return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  return String(v);
}

/** `fieldValidation` values of the write options (empty: the default, `Warn`). */
const FIELD_VALIDATION_VALUES = ['', 'Ignore', 'Strict', 'Warn'];

/**
 * The manager a write is recorded under (`fieldManager`, else the User-Agent prefix), after the
 * checks of `ValidateCreateOptions`/`ValidateUpdateOptions`/`ValidatePatchOptions`.
 */
function writeManager(
  req: IncomingMessage,
  query: URLSearchParams,
  options: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions',
  isApply = false,
): string {
  const fieldManager = query.get('fieldManager') ?? '';
  const causes: StatusCause[] = [];
  if (options === 'PatchOptions') {
    if (!isApply) {
      if (query.has('force'))
        causes.push(fieldErrors.forbidden('force', 'may not be specified for non-apply patch'));
    } else if (!fieldManager) {
      causes.push(fieldErrors.required('fieldManager', 'is required for apply patch'));
    }
  }
  causes.push(...fieldManagerCauses(fieldManager));
  const validation = query.get('fieldValidation');
  if (validation !== null && !FIELD_VALIDATION_VALUES.includes(validation))
    causes.push(fieldErrors.notSupported('fieldValidation', validation, FIELD_VALIDATION_VALUES));
  if (causes.length > 0) throw ApiError.invalid({ group: 'meta.k8s.io', kind: options }, '', causes);
  return managerOrUserAgent(fieldManager, req.headers['user-agent']);
}

/**
 * `managedFields: []` (or one empty entry) asks the field manager to drop every entry. Decoding
 * into the Go type keeps that empty list, though its JSON encoding would omit it: keep it through
 * the normalisation of `checkFields`.
 */
function keepManagedFieldsReset<T>(obj: Obj, check: () => T): T {
  const mf = isObject(obj.metadata) ? obj.metadata.managedFields : undefined;
  const reset =
    Array.isArray(mf) &&
    (mf.length === 0 || (mf.length === 1 && isObject(mf[0]) && Object.keys(mf[0]).length === 0));
  const out = check();
  if (reset && isObject(obj.metadata)) obj.metadata.managedFields = [];
  return out;
}

/**
 * An apply configuration: YAML (JSON is YAML) into a map, as `sigs.k8s.io/yaml` decodes it;
 * with `strict`, duplicate keys are an error (`error strict decoding YAML`).
 */
function decodeApplyYaml(text: string, strict: boolean): Obj {
  let value: unknown;
  try {
    value = parseYamlBounded(text, { version: '1.1', uniqueKeys: false, maxAliasCount: 100 });
  } catch (err) {
    if (err instanceof YamlLimitError)
      throw ApiError.badRequest(`error decoding YAML: error converting YAML to JSON: ${err.message}`);
    throw ApiError.badRequest(`error decoding YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (value === null || value === undefined) value = {};
  if (!isObject(value)) {
    throw ApiError.badRequest(
      `error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${Array.isArray(value) ? 'array' : typeof value === 'string' ? 'string' : typeof value === 'boolean' ? 'bool' : 'number'} into Go value of type map[string]interface {}`,
    );
  }
  if (strict) {
    try {
      parseYamlBounded(text, { version: '1.1', uniqueKeys: true, maxAliasCount: 100 });
    } catch (err) {
      throw ApiError.badRequest(
        `error strict decoding YAML: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  return value;
}

function parseDryRun(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  for (const v of values) {
    if (v !== 'All') throw ApiError.badRequest(`dryRun: Unsupported value: "${v}": supported values: "All"`);
  }
  return values.length > 0;
}

/**
 * An int64 query parameter, read as the parameter codec reads it (Go's `strconv.ParseInt`): a sign
 * and decimal digits within int64's range; anything else is a 400 with strconv's own message.
 */
function parseInt64(v: string): number {
  const quoted = JSON.stringify(v);
  if (!/^[+-]?\d+$/.test(v)) throw ApiError.badRequest(`strconv.ParseInt: parsing ${quoted}: invalid syntax`);
  const n = BigInt(v);
  if (n > 9223372036854775807n || n < -9223372036854775808n)
    throw ApiError.badRequest(`strconv.ParseInt: parsing ${quoted}: value out of range`);
  return Number(n);
}

function parseNonNegativeInt(name: string, v: string): number {
  const n = parseInt64(v);
  if (n < 0) throw ApiError.badRequest(`${name}: Invalid value: "${v}": must be a non-negative integer`);
  return n;
}

function propagation(v: unknown): NonNullable<DeleteParams['propagationPolicy']> {
  if (v === 'Orphan' || v === 'Background' || v === 'Foreground') return v;
  // ValidateDeleteOptions: a field error of the DeleteOptions, so a 422 like any invalid object.
  throw ApiError.invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', [
    fieldError(
      'FieldValueNotSupported',
      'propagationPolicy',
      v,
      'supported values: "Foreground", "Background", "Orphan"',
    ),
  ]);
}

/** go-restful's answer to a method no route of the path accepts (`NewGenericServerResponse(405)`). */
function methodNotAllowed(): ApiError {
  return new ApiError({
    code: 405,
    reason: 'MethodNotAllowed',
    message: `the server does not allow this method on the requested resource`,
    details: {},
  });
}

function defaultReason(code: number): string {
  switch (code) {
    case 400:
      return 'BadRequest';
    case 404:
      return 'NotFound';
    case 409:
      return 'Conflict';
    case 410:
      return 'Expired';
    case 429:
      return 'TooManyRequests';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return 'InternalError';
  }
}

/**
 * The status strategy serves `status` and a CertificateSigningRequest's `approval`: both write
 * only the object's status (approval its conditions, which is all a client sends through it).
 */
function statusLike(sub: string): 'status' | undefined {
  return sub === 'status' || sub === 'approval' ? 'status' : undefined;
}
