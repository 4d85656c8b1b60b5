/**
 * Requests that address no resource: health and version (readable without credentials),
 * `/metrics`, the OpenAPI documents and discovery.
 */
import type { ServerResponse } from 'node:http';
import { ApiError } from 'kubeloop/api';
import type { Discovery } from '../discovery/discovery.js';
import type { RequestContext } from './context.js';
import { methodNotAllowed, notFound, PageNotFound } from './errors.js';
import type { OpenApiEndpoints } from './handlers/scope.js';
import type { ApiMetrics } from './metrics.js';
import { negotiate } from './negotiation.js';

/** `/healthz`, `/livez`, `/readyz`, `/version`: readable without credentials, like the default `system:public-info-viewer`. */
export function servePublic(
  path: string,
  res: ServerResponse,
  o: { ready(): boolean; version: Record<string, string> },
): boolean {
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
    const ready = o.ready();
    res.writeHead(ready ? 200 : 500, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(ready ? 'ok' : '[-]storage not ready\nreadyz check failed');
    return true;
  }
  if (path === '/version' || path === '/version/') {
    // WriteRawJSON: indented, and no trailing newline (unlike the serializer's answers).
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    res.end(JSON.stringify(o.version, null, 2));
    return true;
  }
  return false;
}

/** `/metrics` in the Prometheus text format. */
export async function serveMetrics(ctx: RequestContext, metrics: ApiMetrics): Promise<void> {
  ctx.req.resume();
  if (ctx.req.method !== 'GET') throw methodNotAllowed();
  const { contentType, body } = await metrics.render();
  ctx.res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private' });
  ctx.res.end(body);
}

/** `/openapi/v2` and `/openapi/v3/...`. */
export function serveOpenApi(ctx: RequestContext, openapi: OpenApiEndpoints): void {
  const { req, res } = ctx;
  const out = openapi.handle(ctx.path, ctx.query, {
    ...(req.headers.accept !== undefined && { accept: req.headers.accept }),
    ...(req.headers['if-none-match'] !== undefined && { 'if-none-match': req.headers['if-none-match'] }),
  });
  if (!out) throw notFound();
  res.writeHead(out.status, out.headers);
  res.end(out.body);
}

/** `/api`, `/apis` (aggregated or not) and the documents of each group and version. */
export function serveDiscovery(ctx: RequestContext, discovery: Discovery): void {
  const { req, res, info } = ctx;
  if (req.method !== 'GET') {
    req.resume();
    // go-restful answers 405 on the paths it serves; any other path falls through to http.NotFound.
    throw discovery.document(info.path, false) === undefined ? new PageNotFound() : methodNotAllowed();
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
  const body = discovery.document(info.path, aggregated);
  if (body === undefined) throw new PageNotFound();
  const contentType = aggregated
    ? `application/json;g=apidiscovery.k8s.io;v=${(neg.representation as { version: string }).version};as=APIGroupDiscoveryList`
    : 'application/json';
  res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private' });
  res.end(body.endsWith('\n') ? body : `${body}\n`);
}

/** The service account issuer's OIDC discovery documents (kube-apiserver's `openidmetadata.go`). */
export interface IssuerDiscovery {
  /** `/.well-known/openid-configuration`: the JSON document. */
  configuration(): Promise<string>;
  /** `/openid/v1/jwks`: the JSON Web Key Set of the signing keys. */
  jwks(): Promise<string>;
}

/** The paths of the service account issuer's discovery documents. */
export function isIssuerDiscoveryPath(path: string): boolean {
  return path === '/openid/v1/jwks' || path === '/.well-known/openid-configuration';
}

/**
 * `/.well-known/openid-configuration` and `/openid/v1/jwks`, served after authentication and
 * authorization (the `system:service-account-issuer-discovery` role grants them), whatever the
 * method, with kube's content types and an hour of public caching. False for other paths.
 */
export async function serveIssuerDiscovery(ctx: RequestContext, docs: IssuerDiscovery): Promise<boolean> {
  const { path, req, res } = ctx;
  const jwks = path === '/openid/v1/jwks';
  if (!isIssuerDiscoveryPath(path)) return false;
  req.resume();
  const body = jwks ? await docs.jwks() : await docs.configuration();
  res.writeHead(200, {
    'Content-Type': jwks ? 'application/jwk-set+json' : 'application/json',
    'Cache-Control': 'public, max-age=3600',
  });
  res.end(body);
  return true;
}
