/**
 * The Kubernetes HTTP API: the composition of the request's path through the server, in
 * kube-apiserver's order — request info (`context.ts`), authentication (`auth/authentication`),
 * audit (`audit/`), impersonation (`auth/impersonation`), authorization (`auth/authorization`),
 * then the route of the request: non-resource endpoints (`non-resource.ts`) or the verb's
 * handler (`handlers/`), whose writes pass admission (`admission/`) in the registry on their way
 * to storage, and whose watches read its fan-out. Every failure is answered as a `Status`.
 */
import { type IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ApiError } from 'kubeloop/api';
import {
  type AuditListeners,
  type Auditor,
  auditImpersonation,
  auditInit,
  auditRequestReceived,
  auditUnauthenticated,
} from '../audit/index.js';
import { type Authenticator, TOKEN_WITH_SPACE_WARNING, type UserInfo } from '../auth/authentication/index.js';
import { type Authorizer, authorizeRequest } from '../auth/authorization/index.js';
import { impersonate } from '../auth/impersonation/index.js';
import type { Discovery } from '../discovery/discovery.js';
import type { Registry } from '../registry/registry.js';
import type { RestStorage } from '../registry/rest.js';
import type { Obj } from '../util/object.js';
import { ApiResponse } from './api-response.js';
import { type RequestContext, requestContext } from './context.js';
import { defaultReason, methodNotAllowed } from './errors.js';
import type { FaultAction, Faults } from './faults.js';
import type { ConnectHandler } from './handlers/connect.js';
import { serveResource } from './handlers/route.js';
import type { HandlerScope, OpenApiEndpoints } from './handlers/scope.js';
import type { ApiMetrics } from './metrics.js';
import {
  type IssuerDiscovery,
  isIssuerDiscoveryPath,
  serveDiscovery,
  serveIssuerDiscovery,
  serveMetrics,
  serveOpenApi,
  servePublic,
} from './non-resource.js';
import { type Log, Responder } from './responses.js';
import { warningHeaders } from './warnings.js';

export interface ApiServerOptions {
  rest: RestStorage;
  registry: Registry;
  discovery: Discovery;
  openapi: OpenApiEndpoints;
  faults: Faults;
  /** Requests fault injection leaves alone (the built-in controllers' own requests). */
  exemptFromFaults?(req: IncomingMessage): boolean;
  /** Who a request comes from (client certificates, bearer tokens); also answers TokenReviews. */
  authenticator: Pick<Authenticator, 'authenticate' | 'review'>;
  /** Decides every request (after impersonation) and answers the access reviews. */
  authorizer: Authorizer;
  /** Answers a TokenRequest for a stored ServiceAccount (`serviceaccounts/<name>/token`). */
  issueServiceAccountToken?(serviceAccount: Obj, request: Obj): Obj | Promise<Obj>;
  /** The OIDC discovery documents of the service account issuer (`/.well-known/openid-configuration`, `/openid/v1/jwks`). */
  serviceAccountIssuerDiscovery?: IssuerDiscovery;
  version: Record<string, string>;
  bookmarkIntervalMs: number;
  /** Answers readiness (`/readyz`). */
  ready(): boolean;
  /** Request and storage metrics, served at `/metrics`. */
  metrics?: ApiMetrics;
  log?: Log;
  /** Connect-style subresources served outside the registry, by `resource/subresource` (`pods/exec`). */
  connect?: Record<string, ConnectHandler>;
  /** Admission of a subresource's own object (a `pods/eviction` Eviction): the webhooks'. */
  admitSubresource?: HandlerScope['admitSubresource'];
  /** Who hears of every authenticated request (tests recording what a client did). */
  audit?: AuditListeners;
  /** The audit policy and log (`--audit-policy-file`, `--audit-log-path`); unset, no events are built. */
  auditor?: Auditor;
}

/** The node:https listeners of the API. */
export class ApiServer {
  /** The `ServerResponse` of the servers: writes each response's Audit-Id with its first headers. */
  static readonly Response = ApiResponse;

  private readonly out: Responder;
  private readonly scope: HandlerScope;
  private readonly upgrades = new WeakMap<IncomingMessage, { socket: Duplex; head: Buffer }>();

  constructor(private readonly o: ApiServerOptions) {
    this.out = new Responder(o.log);
    this.scope = {
      rest: o.rest,
      registry: o.registry,
      openapi: o.openapi,
      out: this.out,
      faults: o.faults,
      bookmarkIntervalMs: o.bookmarkIntervalMs,
      authenticateToken: (token, audiences) => o.authenticator.review(token, audiences),
      authorizer: o.authorizer,
      ...(o.exemptFromFaults && { exemptFromFaults: o.exemptFromFaults }),
      ...(o.connect && { connect: o.connect }),
      ...(o.admitSubresource && { admitSubresource: o.admitSubresource }),
      ...(o.issueServiceAccountToken && { issueServiceAccountToken: o.issueServiceAccountToken }),
    };
  }

  /** The `request` listener of the node:https server. */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    const audit = auditInit(req, res, this.o.auditor);
    let ctx: RequestContext | undefined;
    let bad: unknown;
    try {
      ctx = requestContext(req, res);
    } catch (err) {
      // A bad URL is answered 400; it is no resource request to count.
      bad = err;
    }
    this.o.metrics?.track(req, res, ctx?.info, ctx?.query ?? new URLSearchParams());
    if (!ctx) {
      this.out.fail(res, bad);
      return;
    }
    const c = ctx;
    (audit ? audit.run(() => this.handle(c)) : this.handle(c)).catch((err: unknown) =>
      this.out.fail(res, err),
    );
  };

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
    const audit = auditInit(req, res, this.o.auditor);
    let ctx: RequestContext;
    try {
      ctx = requestContext(req, res);
    } catch (err) {
      this.out.fail(res, err);
      return;
    }
    (audit ? audit.run(() => this.handle(ctx)) : this.handle(ctx)).catch((err: unknown) =>
      this.out.fail(res, err),
    );
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
      lingeringClose(socket);
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
    lingeringClose(socket);
  };

  /** The request's path through the stages. */
  private async handle(ctx: RequestContext): Promise<void> {
    const { req, res, path, info } = ctx;
    // Checked without awaiting: a request without a fault goes on in the same tick. With no rule
    // left, the exemption (a map lookup of the Authorization header) is not asked.
    const fault =
      !this.o.faults.armed || this.o.exemptFromFaults?.(req) === true ? undefined : this.o.faults.take(info);
    if (fault && (await this.injectFault(ctx, fault))) return;

    // Authentication: once per request; every later stage reads the context's user. A request
    // without credentials is `system:anonymous`, left to authorization.
    const { user, spaceBeforeToken } = this.o.authenticator.authenticate(req);
    if (spaceBeforeToken) res.appendHeader('Warning', warningHeaders([TOKEN_WITH_SPACE_WARNING]));
    if (!user) {
      auditUnauthenticated(req, info);
      req.resume();
      throw ApiError.unauthorized();
    }
    auditRequestReceived({ user, info, userAgent: req.headers['user-agent'] }, this.o.audit, req);
    const impersonation = impersonate(req, user, this.o.authorizer);
    if ('internalError' in impersonation) {
      req.resume();
      // responsewriters.InternalError: plain text, the request URI and the error.
      res.writeHead(500, {
        'Content-Type': 'text/plain; charset=utf-8',
        'X-Content-Type-Options': 'nosniff',
      });
      res.end(`Internal Server Error: ${JSON.stringify(req.url ?? '')}: ${impersonation.internalError}\n`);
      return;
    }
    const served = impersonation.user;
    ctx.user = served;
    auditImpersonation(req, user, served);
    // /healthz, /livez, /readyz and /version are public only as RBAC allows them to everyone
    // (the bootstrap binding `system:public-info-viewer`), as in kube-apiserver.
    authorizeRequest(served, info, this.o.authorizer);
    if (req.method === 'GET' && servePublic(path, res, this.o)) return;

    if (path === '/metrics' && this.o.metrics) return serveMetrics(ctx, this.o.metrics);
    if (path === '/openapi' || path.startsWith('/openapi/')) return serveOpenApi(ctx, this.o.openapi);
    // Looked at only on its two paths: an await on every request would cost each a tick.
    if (this.o.serviceAccountIssuerDiscovery && isIssuerDiscoveryPath(path)) {
      await serveIssuerDiscovery(ctx, this.o.serviceAccountIssuerDiscovery);
      return;
    }
    if (!info.isResourceRequest) return serveDiscovery(ctx, this.o.discovery);
    // The context itself (its user set above), not a copy of it.
    await serveResource(this.scope, ctx as RequestContext & { user: UserInfo }, this.upgrades.get(req));
  }

  /**
   * Fault injection (the reliability tests' seam, ahead of everything): drops the connection,
   * delays the request, or answers an error. True when the request was answered.
   */
  private async injectFault(ctx: RequestContext, fault: FaultAction): Promise<boolean> {
    const { req, res } = ctx;
    if ('drop' in fault) {
      req.socket.destroy();
      return true;
    }
    if ('delayMs' in fault) {
      await new Promise((r) => setTimeout(r, fault.delayMs));
      return false;
    }
    const err = new ApiError({
      code: fault.status,
      reason: (fault.reason ?? defaultReason(fault.status)) as ApiError['reason'],
      message: fault.message ?? `injected fault: HTTP ${fault.status}`,
      ...(fault.retryAfterSeconds !== undefined && {
        details: { retryAfterSeconds: fault.retryAfterSeconds },
      }),
    });
    if (fault.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(fault.retryAfterSeconds));
    this.out.fail(res, err);
    return true;
  }
}

/**
 * After answering a request it refuses mid-way (a header too large, say), the server reads and
 * drops what the client is still sending for a while before the connection closes, as Go's
 * server does (`closeWriteAndWait`, 500 ms): closed with unread bytes, the connection is reset,
 * and the reset can discard the answer before the client has read it.
 */
function lingeringClose(socket: Duplex): void {
  socket.resume();
  setTimeout(() => socket.destroy(), 500).unref();
}
