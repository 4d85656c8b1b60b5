/**
 * Serves `/openapi/v2`, `/openapi/v3` and `/openapi/v3/<group-version>` the way kube-openapi's
 * handlers do, and hands out the schemas used by strict field validation.
 *
 * The documents are built from the resources the server serves, once, on first request after
 * construction or {@link OpenApiService.invalidate} (CRDs come and go), and kept as pre-encoded
 * buffers with their SHA-512 ETags. Caching follows kube-openapi:
 * - every document carries `ETag: "<SHA-512 hex>"`; `If-None-Match` with it answers 304;
 * - `/openapi/v3` lists each group-version as `/openapi/v3/apis/apps/v1?hash=<ETag>`; a request
 *   carrying the current `hash` is marked `Cache-Control: public, immutable` (clients such as
 *   kubectl keep it on disk), a stale `hash` is redirected (301) to the current URL.
 * - content negotiation by `Accept`: JSON, or the OpenAPI v2 protobuf encoding that client-go's
 *   `OpenAPISchema()` asks for; anything else is 406.
 *
 * @example
 * ```ts
 * const openapi = new OpenApiService(() => registry.openApiResources());
 * const answer = openapi.handle(url.pathname, url.searchParams, req.headers);
 * if (answer) { res.writeHead(answer.status, answer.headers); res.end(answer.body); }
 * ```
 */
import { createHash } from 'node:crypto';
import { builtinSpec, gvkKey, type Obj } from './builtin.js';
import { type BuiltDocuments, buildDocuments, buildSwaggerV2, type DocumentOptions } from './documents.js';
import type { OpenApiResource } from './paths.js';
import { encodeSwaggerV2Protobuf } from './protobuf.js';
import { SchemaCompiler, type SchemaView } from './schema-view.js';

/** An HTTP answer for the HTTP layer to write as is. */
export interface OpenApiResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer | string;
}

/** Request headers the OpenAPI handlers look at. */
export interface OpenApiRequestHeaders {
  accept?: string;
  'if-none-match'?: string;
}

/** Options of {@link OpenApiService}. */
export interface OpenApiServiceOptions {
  /** The Kubernetes version put in the documents' `info.version`; `v1.32.0` by default. */
  version?: string;
}

const JSON_TYPE = 'application/json';
const V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const V2_PROTOBUF_DEPRECATED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const V3_PROTOBUF = 'application/com.github.proto-openapi.spec.v3.v1.0+protobuf';
const V3_PROTOBUF_DEPRECATED = 'application/com.github.proto-openapi.spec.v3@v1.0+protobuf';

interface Encoded {
  body: Buffer;
  /** SHA-512 of the JSON encoding, upper-case hex, unquoted (kube-openapi's computeETag). */
  hash: string;
}

interface State {
  resources: readonly OpenApiResource[];
  /** When the documents of this snapshot were built, for `Last-Modified`. */
  built: Date;
  docs?: BuiltDocuments;
  v3?: Map<string, Encoded>;
  discovery?: Encoded;
  v2Doc?: Obj;
  v2?: Encoded;
  v2Protobuf?: Buffer;
  views: Map<string, SchemaView | null>;
}

function encode(doc: unknown): Encoded {
  const body = Buffer.from(JSON.stringify(doc));
  return { body, hash: createHash('sha512').update(body).digest('hex').toUpperCase() };
}

/** Media ranges of an `Accept` header, best first (goautoneg's order: q, then specificity). */
export function parseAccept(header: string | undefined): { type: string; subtype: string }[] {
  const clauses: { type: string; subtype: string; q: number; order: number }[] = [];
  const parts = (header && header.trim() !== '' ? header : '*/*').split(',');
  parts.forEach((part, order) => {
    const [range = '', ...params] = part.split(';');
    const [type = '', subtype = '*'] = range.trim().toLowerCase().split('/');
    if (type === '') return;
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split('=');
      if (name?.trim() === 'q' && value !== undefined) q = Number.parseFloat(value.trim());
    }
    if (!(q > 0)) return;
    clauses.push({ type, subtype: subtype.trim(), q, order });
  });
  const specificity = (c: { type: string; subtype: string }) =>
    c.type === '*' ? 0 : c.subtype === '*' ? 1 : 2;
  clauses.sort((a, b) => b.q - a.q || specificity(b) - specificity(a) || a.order - b.order);
  return clauses.map(({ type, subtype }) => ({ type, subtype }));
}

/** The first of `offered` (full media types) that the `Accept` header accepts. */
function negotiate(accept: string | undefined, offered: readonly string[]): string | undefined {
  for (const clause of parseAccept(accept)) {
    for (const media of offered) {
      const [type, subtype] = media.split('/');
      if (clause.type !== '*' && clause.type !== type) continue;
      if (clause.subtype !== '*' && clause.subtype !== subtype) continue;
      return media;
    }
  }
  return undefined;
}

/** Whether an `If-None-Match` header matches the (unquoted) hash, as Go's net/http compares. */
function matchesEtag(ifNoneMatch: string | undefined, hash: string): boolean {
  if (!ifNoneMatch) return false;
  for (const raw of ifNoneMatch.split(',')) {
    const tag = raw.trim();
    if (tag === '*') return true;
    const bare = tag.startsWith('W/') ? tag.slice(2) : tag;
    if (bare === `"${hash}"`) return true;
  }
  return false;
}

const NOT_ACCEPTABLE: OpenApiResponse = { status: 406, headers: { Vary: 'Accept' }, body: '' };

/**
 * The OpenAPI documents of the local API server, and the schemas of the kinds it serves.
 * The HTTP layer routes `GET /openapi/...` to {@link handle} and calls {@link invalidate}
 * whenever the set of served resources changes.
 */
export class OpenApiService {
  private readonly resources: () => readonly OpenApiResource[];
  private readonly options: DocumentOptions;
  private readonly compiler = new SchemaCompiler();
  private state: State | undefined;

  constructor(resources: () => readonly OpenApiResource[], options: OpenApiServiceOptions = {}) {
    this.resources = resources;
    this.options = { version: options.version ?? 'v1.32.0' };
  }

  /** Forgets the built documents and schemas; they are rebuilt from `resources()` when next needed. */
  invalidate(): void {
    this.state = undefined;
  }

  /**
   * Answers `GET /openapi/v2`, `/openapi/v3` and `/openapi/v3/<api/v1|apis/group/version|…>`;
   * `undefined` for any other path.
   */
  handle(path: string, query: URLSearchParams, headers: OpenApiRequestHeaders): OpenApiResponse | undefined {
    if (path === '/openapi/v2') return this.handleV2(headers);
    if (path === '/openapi/v3') return this.handleDiscovery(headers);
    if (path.startsWith('/openapi/v3/'))
      return this.handleGroupVersion(path.slice('/openapi/v3/'.length), query, headers);
    return undefined;
  }

  /**
   * The schema of a kind, for strict field validation: the served resource's (built-in
   * definition or custom resource schema), else any built-in definition declaring that GVK
   * (`autoscaling/v1 Scale` for `/scale` writes).
   */
  schemaFor(group: string, version: string, kind: string): SchemaView | undefined {
    const state = this.current();
    const key = gvkKey(group, version, kind);
    const cached = state.views.get(key);
    if (cached !== undefined) return cached ?? undefined;
    let view: SchemaView | undefined;
    const res = state.resources.find((r) => r.group === group && r.version === version && r.kind === kind);
    if (res?.definition !== undefined) view = this.compiler.definition(res.definition);
    else if (res?.schema !== undefined) view = this.compiler.customResource(res.schema);
    if (!view) {
      const definition = builtinSpec().byGvk.get(key);
      if (definition) view = this.compiler.definition(definition);
    }
    state.views.set(key, view ?? null);
    return view;
  }

  /** The documents as objects (built if needed), for tests and tools. */
  documents(): BuiltDocuments {
    return this.docs(this.current());
  }

  private current(): State {
    this.state ??= { resources: this.resources(), built: new Date(), views: new Map() };
    return this.state;
  }

  private docs(state: State): BuiltDocuments {
    state.docs ??= buildDocuments(state.resources, this.options);
    return state.docs;
  }

  private v3(state: State): Map<string, Encoded> {
    if (!state.v3) {
      const encoded = new Map<string, Encoded>();
      for (const [key, doc] of this.docs(state).v3) encoded.set(key, encode(doc));
      state.v3 = encoded;
    }
    return state.v3;
  }

  private ok(
    state: State,
    hash: string,
    contentType: string,
    body: Buffer,
    extra: Record<string, string> = {},
  ) {
    return {
      status: 200,
      headers: {
        'Content-Type': contentType,
        ETag: `"${hash}"`,
        'Last-Modified': state.built.toUTCString(),
        ...extra,
      },
      body,
    };
  }

  private notModified(hash: string, extra: Record<string, string> = {}): OpenApiResponse {
    return { status: 304, headers: { ETag: `"${hash}"`, ...extra }, body: '' };
  }

  private handleV2(headers: OpenApiRequestHeaders): OpenApiResponse {
    const media = negotiate(headers.accept, [JSON_TYPE, V2_PROTOBUF_DEPRECATED, V2_PROTOBUF]);
    if (!media) return NOT_ACCEPTABLE;
    const state = this.current();
    state.v2Doc ??= buildSwaggerV2(this.docs(state), this.options);
    state.v2 ??= encode(state.v2Doc);
    const { hash } = state.v2;
    if (matchesEtag(headers['if-none-match'], hash)) return this.notModified(hash, { Vary: 'Accept' });
    if (media === JSON_TYPE) return this.ok(state, hash, JSON_TYPE, state.v2.body, { Vary: 'Accept' });
    state.v2Protobuf ??= encodeSwaggerV2Protobuf(state.v2Doc);
    return this.ok(state, hash, V2_PROTOBUF, state.v2Protobuf, { Vary: 'Accept' });
  }

  private handleDiscovery(headers: OpenApiRequestHeaders): OpenApiResponse {
    const state = this.current();
    if (!state.discovery) {
      const paths: Obj = {};
      const v3 = this.v3(state);
      for (const key of [...v3.keys()].sort()) {
        const hash = v3.get(key)?.hash ?? '';
        paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
      }
      state.discovery = encode({ paths });
    }
    const { hash, body } = state.discovery;
    if (matchesEtag(headers['if-none-match'], hash)) return this.notModified(hash);
    return this.ok(state, hash, JSON_TYPE, body);
  }

  private handleGroupVersion(
    key: string,
    query: URLSearchParams,
    headers: OpenApiRequestHeaders,
  ): OpenApiResponse {
    const media = negotiate(headers.accept, [JSON_TYPE, V3_PROTOBUF, V3_PROTOBUF_DEPRECATED]);
    if (!media) return NOT_ACCEPTABLE;
    const state = this.current();
    const doc = this.v3(state).get(key);
    if (!doc) {
      return {
        status: 404,
        headers: { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' },
        body: '404 page not found\n',
      };
    }
    // The v3 protobuf encoding is not implemented: kubectl and client-go ask for JSON.
    if (media !== JSON_TYPE) return NOT_ACCEPTABLE;
    const extra: Record<string, string> = { Vary: 'Accept' };
    const hash = query.get('hash');
    if (hash) {
      if (hash !== doc.hash) {
        const location = `/openapi/v3/${key}?hash=${doc.hash}`;
        return {
          status: 301,
          headers: { Location: location, 'Content-Type': 'text/html; charset=utf-8', ...extra },
          body: `<a href="${location}">Moved Permanently</a>.\n\n`,
        };
      }
      extra['Cache-Control'] = 'public, immutable';
      extra.Expires = new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString();
    }
    if (matchesEtag(headers['if-none-match'], doc.hash)) return this.notModified(doc.hash, extra);
    return this.ok(state, doc.hash, JSON_TYPE, doc.body, extra);
  }
}
