/**
 * Writing answers: objects in the negotiated representation (object, Table, metadata; JSON,
 * YAML or protobuf), other bodies through the negotiated serializer, and errors as `Status`.
 */
import type { ServerResponse } from 'node:http';
import { ApiError } from 'kubeloop/api';
import { present } from '../apiextensions/conversion.js';
import { auditResponseStatus } from '../audit/context.js';
import { encodeProtobufObject, PROTOBUF_CONTENT_TYPE, supportsProtobuf } from '../protobuf/index.js';
import { apiVersionOf, type ResourceType } from '../registry/types.js';
import type { StoredObject } from '../storage/types.js';
import { isObject, type Obj } from '../util/object.js';
import { toYaml } from '../util/yaml.js';

import { JSON_HEADERS } from './api-response.js';
import { type RequestContext, serializerOf } from './context.js';
import { PageNotFound } from './errors.js';
import { type Negotiated, negotiate } from './negotiation.js';
import { includeObject } from './params.js';
import { partialObjectMetadata, table } from './table.js';
import { warningHeaders } from './warnings.js';

/** YAML as the apiserver writes it (sigs.k8s.io/yaml over JSON): keys sorted, sequences not indented, no anchors (an object shared twice is written twice). */
const GO_YAML = { sortMapEntries: true, indentSeq: false, aliasDuplicateObjects: false } as const;

/** Where the HTTP layer logs what a client does not see. */
export type Log = (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

/** Whether objects and lists of `t` can be answered in protobuf: built-in kinds the descriptors cover. */
export function protobufKind(t: ResourceType): boolean {
  if (t.custom) return false;
  // Asked on every request of the type (negotiation): a built-in type's answer never changes.
  let known = protobufKinds.get(t);
  if (known === undefined) {
    const apiVersion = apiVersionOf(t);
    known = supportsProtobuf(apiVersion, t.kind) && supportsProtobuf(apiVersion, t.listKind);
    protobufKinds.set(t, known);
  }
  return known;
}

const protobufKinds = new WeakMap<ResourceType, boolean>();

/** Writes the answers of one server. */
export class Responder {
  /** Responses about custom resources, whose errors have no protobuf encoding either. */
  private readonly withoutProtobuf = new WeakSet<ServerResponse>();

  constructor(private readonly log?: Log) {}

  /** Errors on `res` are not answered in protobuf (a custom resource's request). */
  withoutProtobufErrors(res: ServerResponse): void {
    this.withoutProtobuf.add(res);
  }

  /**
   * Answers one object of `t` in the representation negotiated for the request. Returns a
   * promise only when the object goes through a conversion webhook first.
   */
  object(
    ctx: RequestContext & { media: Negotiated },
    code: number,
    t: ResourceType,
    stored: StoredObject,
    warnings: string[] = [],
  ): void | Promise<void> {
    if (warnings.length > 0) ctx.res.appendHeader('Warning', warningHeaders(warnings));
    const view = present(t, stored);
    if (view instanceof Promise) return view.then((v) => this.presented(ctx, code, t, v));
    this.presented(ctx, code, t, view);
  }

  /** Writes an object already read through `t`'s version. */
  private presented(
    ctx: RequestContext & { media: Negotiated },
    code: number,
    t: ResourceType,
    stored: StoredObject,
  ): void {
    const { res } = ctx;
    switch (ctx.media.representation.as) {
      case 'Table':
        this.json(
          ctx,
          code,
          table(t, [stored], includeObject(new URLSearchParams()), {
            resourceVersion: String(stored.revision),
          }),
        );
        return;
      case 'PartialObjectMetadata':
      case 'PartialObjectMetadataList':
        this.json(ctx, code, partialObjectMetadata(stored));
        return;
      default:
        if (ctx.media.protobuf && this.protobuf(res, code, stored.object as Obj)) return;
        if (ctx.media.yaml) this.json(ctx, code, stored.object);
        else this.send(res, code, stored.json);
    }
  }

  /**
   * Answers `obj` in Kubernetes' protobuf encoding, as Go's Marshal writes it. Returns false,
   * having written nothing, when the object does not encode (a field the descriptors lack): the
   * caller answers JSON instead, which is better than failing a write already stored.
   */
  protobuf(res: ServerResponse, code: number, obj: Obj): boolean {
    let body: Buffer;
    try {
      body = encodeProtobufObject(obj, { gogo: true });
    } catch (err) {
      this.log?.('warn', 'answering JSON: the object does not encode as protobuf', {
        kind: obj.kind,
        err: err instanceof Error ? err.message : String(err),
      });
      return false;
    }
    res.writeHead(code, { 'Content-Type': PROTOBUF_CONTENT_TYPE, 'Cache-Control': 'no-cache, private' });
    res.end(body);
    return true;
  }

  /** Answers a body through the request's serializer: protobuf, YAML or JSON; with admission's warnings as `Warning` headers. */
  json(
    ctx: Pick<RequestContext, 'req' | 'res' | 'serializer'>,
    code: number,
    body: unknown,
    warnings: readonly string[] = [],
  ): void {
    if (warnings.length > 0) ctx.res.appendHeader('Warning', warningHeaders([...warnings]));
    auditResponseStatus(ctx.res, body);
    const serializer = serializerOf(ctx);
    if (
      serializer.protobuf &&
      isObject(body) &&
      typeof body.apiVersion === 'string' &&
      typeof body.kind === 'string' &&
      supportsProtobuf(body.apiVersion, body.kind) &&
      this.protobuf(ctx.res, code, body)
    )
      return;
    if (serializer.yaml) {
      ctx.res.writeHead(code, { 'Content-Type': 'application/yaml', 'Cache-Control': 'no-cache, private' });
      ctx.res.end(toYaml(body, GO_YAML));
      return;
    }
    this.send(ctx.res, code, JSON.stringify(body));
  }

  /** Writes a JSON body as Go's `json.Encoder` does (the apiserver's serializer): newline-terminated. */
  send(res: ServerResponse, code: number, json: string): void {
    res.writeHead(code, JSON_HEADERS);
    res.end(`${json}\n`);
  }

  /** Answers an error: an ApiError as its `Status`, anything else as a 500 (and logged). */
  fail(res: ServerResponse, err: unknown): void {
    let apiErr: ApiError;
    if (err instanceof ApiError) apiErr = err;
    else {
      apiErr = ApiError.internal(err instanceof Error ? err.message : String(err));
      this.log?.('error', 'request failed', { err: err instanceof Error ? err.stack : String(err) });
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
    auditResponseStatus(res, apiErr.status, err instanceof ApiError ? undefined : err);
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
    if (neg.protobuf && this.protobuf(res, apiErr.code, apiErr.status as unknown as Obj)) return;
    if (neg.yaml) {
      res.writeHead(apiErr.code, {
        'Content-Type': 'application/yaml',
        'Cache-Control': 'no-cache, private',
      });
      res.end(toYaml(apiErr.status, GO_YAML));
      return;
    }
    this.send(res, apiErr.code, JSON.stringify(apiErr.status));
  }
}
