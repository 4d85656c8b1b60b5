/**
 * One request's audit (kube's `AuditContext`): the policy's decision for it, the event it fills
 * as the request goes through the stages, and the writes of that event at each stage — as
 * k8s.io/apiserver's `filters/audit.go` decorates the response writer: `RequestReceived` once
 * authenticated, `ResponseStarted` when a long-running request (watch, exec, logs) sends its
 * headers, `ResponseComplete` when it ends, `Panic` instead for an unexpected failure.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserInfo } from '../auth/authentication/user.js';
import { decodeProtobufObject, PROTOBUF_CONTENT_TYPE } from '../protobuf/index.js';
import { parseYamlBounded } from '../util/yaml.js';
import type { AuditHooks } from './context.js';
import {
  type AuditEvent,
  encodeEvent,
  eventUser,
  isRecord,
  microTime,
  nowMicros,
  type ResponseStatus,
  sourceIPs,
  userAgentOf,
  withoutManagedFields,
} from './event.js';
import type { AuditAttributes, AuditStage, PolicyEvaluator, RequestAuditConfig } from './policy.js';
import { levelRank } from './policy.js';

/** What a request's audit needs of the server: the policy and where events go. */
export interface AuditBackend {
  readonly evaluator: PolicyEvaluator;
  write(line: string): void;
}

/** The request attributes of the event, as `RequestInfo` has them. */
export interface AuditRequestInfo {
  isResourceRequest: boolean;
  path: string;
  verb: string;
  group: string;
  version: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

/** Admission's annotations kept only at `Request` level and above (`AddAnnotationWithLevel`). */
const REQUEST_LEVEL_ANNOTATION = 'patch.webhook.admission.k8s.io/';

/** `BasicLongRunningRequestCheck(["watch", "proxy"], ["attach", "exec", "proxy", "log", "portforward"])`. */
function longRunning(info: AuditRequestInfo): boolean {
  return (
    info.verb === 'watch' ||
    info.verb === 'proxy' ||
    (info.isResourceRequest && ['attach', 'exec', 'proxy', 'log', 'portforward'].includes(info.subresource))
  );
}

/** One request's audit, from the moment it was received. */
export class RequestAudit implements AuditHooks {
  /** `requestReceivedTimestamp`. */
  readonly received = nowMicros();
  /** What admission, authorization and pod security note; kept in the event at the end. */
  readonly annotations: Record<string, string> = {};
  private config: RequestAuditConfig | undefined;
  private event: AuditEvent | undefined;
  private requestBody: { body: Buffer; type: string } | undefined;
  private responseChunks: Buffer[] | undefined;
  private status: ResponseStatus | undefined;
  private panic: string | undefined;
  private started = false;

  constructor(
    private readonly backend: AuditBackend,
    readonly id: string,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {}

  /**
   * The request is authenticated as `user`: the policy decides its level, and unless `None`
   * its event is written at `RequestReceived` and followed to the end of the response.
   */
  authenticated(user: UserInfo, info: AuditRequestInfo): void {
    if (!this.begin(info, user)) return;
    this.emit('RequestReceived');
    const long = longRunning(info);
    const res = this.res;
    const writeHead = res.writeHead;
    // The response writer's decoration: the first status code starts the response.
    res.writeHead = ((...args: Parameters<ServerResponse['writeHead']>) => {
      this.responseStarted(args[0], long);
      return writeHead.apply(res, args);
    }) as ServerResponse['writeHead'];
    if (levelRank(this.config!.level) >= levelRank('RequestResponse') && !long) this.captureResponse();
    res.once('close', () => this.complete(long));
  }

  /**
   * The request failed authentication (`WithFailedAuthenticationAudit`): one event, at
   * `ResponseStarted`, without a user and with the methods tried.
   */
  unauthenticated(info: AuditRequestInfo): void {
    if (!this.begin(info, undefined)) return;
    this.status = { metadata: {}, message: authMethods(this.req) };
    const res = this.res;
    const writeHead = res.writeHead;
    res.writeHead = ((...args: Parameters<ServerResponse['writeHead']>) => {
      this.responseStarted(args[0], true);
      return writeHead.apply(res, args);
    }) as ServerResponse['writeHead'];
  }

  /** `LogImpersonatedUser`. */
  impersonated(user: UserInfo): void {
    if (this.event) this.event.impersonatedUser = eventUser(user);
  }

  /** The request's body, decoded for the event when it ends (`LogRequestObject`, `LogRequestPatch`). */
  requestRead(body: Buffer, contentType: string | undefined): void {
    if (this.event)
      this.requestBody = { body, type: (contentType ?? '').split(';')[0]!.trim().toLowerCase() };
  }

  /** A `Status` answered (`LogResponseObject` keeps its bounded fields); `unexpected` is an error that is no API error (kube's panic). */
  responded(status: Record<string, unknown>, unexpected?: unknown): void {
    if (!this.event) return;
    if (unexpected !== undefined) {
      this.panic = `APIServer panic'd: ${unexpected instanceof Error ? unexpected.message : String(unexpected)}`;
      return;
    }
    this.status = {
      metadata: {},
      ...(typeof status.status === 'string' && { status: status.status }),
      ...(typeof status.message === 'string' && { message: status.message }),
      ...(typeof status.reason === 'string' && { reason: status.reason }),
      ...(status.details !== undefined && { details: status.details }),
      ...(typeof status.code === 'number' && { code: status.code }),
    };
  }

  /** Evaluates the policy; false (and nothing recorded) at level `None`. */
  private begin(info: AuditRequestInfo, user: UserInfo | undefined): boolean {
    const attrs: AuditAttributes = {
      ...(user && { user }),
      verb: info.verb,
      isResourceRequest: info.isResourceRequest,
      namespace: info.namespace,
      apiGroup: info.group,
      resource: info.resource,
      subresource: info.subresource,
      name: info.name,
      path: info.path,
    };
    this.config = this.backend.evaluator.evaluate(attrs);
    if (this.config.level === 'None') return false;
    const req = this.req;
    const ua = userAgentOf(req.headers['user-agent']);
    this.event = {
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: this.config.level,
      auditID: this.id,
      stage: 'RequestReceived',
      requestURI: req.url ?? '/',
      verb: info.verb,
      user: user ? eventUser(user) : {},
      sourceIPs: sourceIPs(req.headers, req.socket.remoteAddress),
      ...(ua && { userAgent: ua }),
      ...(info.isResourceRequest && {
        objectRef: {
          resource: info.resource,
          namespace: info.namespace,
          name: info.name,
          apiGroup: info.group,
          apiVersion: info.version,
          subresource: info.subresource,
        },
      }),
      requestReceivedTimestamp: microTime(this.received),
      stageTimestamp: '',
    };
    return true;
  }

  private responseStarted(code: unknown, emit: boolean): void {
    if (this.started || !this.event) return;
    this.started = true;
    this.status = { ...(this.status ?? { metadata: {} }), code: typeof code === 'number' ? code : 200 };
    if (emit) this.emit('ResponseStarted');
  }

  /** At `RequestResponse`, the body as sent, decoded at the end (`LogResponseObject`). */
  private captureResponse(): void {
    const res = this.res;
    const chunks: Buffer[] = [];
    this.responseChunks = chunks;
    const keep = (chunk: unknown, encoding: unknown) => {
      if (typeof chunk === 'string')
        chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
      else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    };
    const write = res.write;
    const end = res.end;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      keep(chunk, rest[0]);
      return (write as (...a: unknown[]) => boolean).call(res, chunk, ...rest);
    }) as ServerResponse['write'];
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (chunk !== undefined && typeof chunk !== 'function') keep(chunk, rest[0]);
      return (end as (...a: unknown[]) => ServerResponse).call(res, chunk, ...rest);
    }) as ServerResponse['end'];
  }

  /** The handler is done: `ResponseComplete` (or `Panic`), with what the request and response carried. */
  private complete(long: boolean): void {
    const ev = this.event!;
    if (this.panic) {
      this.status = {
        metadata: {},
        status: 'Failure',
        message: this.panic,
        reason: 'InternalError',
        code: 500,
      };
      this.finish();
      this.emit('Panic');
      return;
    }
    if (!this.started && long) {
      // A hijacked connection (exec, a WebSocket watch) switched protocols; one closed before
      // any answer is faked a success.
      this.started = true;
      this.status = this.req.headers.upgrade
        ? { metadata: {}, code: 101 }
        : { metadata: {}, status: 'Success', message: 'Connection closed early', code: 200 };
      this.emit('ResponseStarted');
    }
    if (!this.status)
      this.status = { metadata: {}, status: 'Success', message: 'Connection closed early', code: 200 };
    else if (this.status.code === undefined) this.status.code = this.res.statusCode;
    this.finish();
    ev.stage = 'ResponseComplete';
    this.emit('ResponseComplete');
  }

  /** The request and response objects and the annotations, as the level keeps them. */
  private finish(): void {
    const ev = this.event!;
    const config = this.config!;
    const rank = levelRank(config.level);
    const request = this.requestBody ? decode(this.requestBody.body, this.requestBody.type) : undefined;
    // `LogRequestObject` completes the objectRef from a written object's metadata.
    if (
      request !== undefined &&
      ev.objectRef &&
      (ev.verb === 'create' || ev.verb === 'update') &&
      isRecord(request)
    ) {
      const m = isRecord(request.metadata) ? request.metadata : {};
      const ref = ev.objectRef;
      if (!ref.namespace && typeof m.namespace === 'string') ref.namespace = m.namespace;
      if (!ref.name && typeof m.name === 'string') ref.name = m.name;
      if (!ref.uid && typeof m.uid === 'string') ref.uid = m.uid;
      if (!ref.resourceVersion && typeof m.resourceVersion === 'string')
        ref.resourceVersion = m.resourceVersion;
    }
    if (request !== undefined && rank >= levelRank('Request'))
      ev.requestObject =
        config.omitManagedFields && ev.verb !== 'patch' ? withoutManagedFields(request) : request;
    if (this.responseChunks && this.responseChunks.length > 0) {
      const type = String(this.res.getHeader('content-type') ?? '')
        .split(';')[0]!
        .trim();
      const response = decode(Buffer.concat(this.responseChunks), type);
      if (response !== undefined)
        ev.responseObject = config.omitManagedFields ? withoutManagedFields(response) : response;
    }
  }

  private emit(stage: AuditStage): void {
    const ev = this.event!;
    const config = this.config!;
    if (config.omitStages.includes(stage)) return;
    ev.stage = stage;
    // `processAuditEvent`: the first stage is stamped with the time the request was received.
    const now = stage === 'RequestReceived' ? this.received : nowMicros();
    ev.stageTimestamp = microTime(now);
    // `writeLatencyToAnnotation`: a request slower than 500 ms notes its latency (kube adds its
    // layers' too, which this server does not track).
    if (stage === 'ResponseComplete' && now - this.received > 500_000)
      this.annotations['apiserver.latency.k8s.io/total'] = goDuration(now - this.received);
    if (this.status) ev.responseStatus = this.status;
    const annotations: Record<string, string> = {};
    const keepRequestLevel = levelRank(config.level) >= levelRank('Request');
    for (const [k, v] of Object.entries(this.annotations)) {
      if (keepRequestLevel || !k.startsWith(REQUEST_LEVEL_ANNOTATION)) annotations[k] = v;
    }
    ev.annotations = annotations;
    this.backend.write(encodeEvent(ev));
  }
}

/** A body as the event holds it: JSON (or YAML, or protobuf) decoded; undefined when it is none of these. */
function decode(body: Buffer, type: string): unknown {
  try {
    if (type === PROTOBUF_CONTENT_TYPE) return decodeProtobufObject(body);
    const text = body.toString('utf8');
    if (type === 'application/yaml' || type === 'application/apply-patch+yaml')
      return parseYamlBounded(text, {});
    if (text.trim() === '') return undefined;
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Go's `time.Duration.String()` of a whole number of microseconds (`512.3ms`, `1.5s`, `2m3.000001s`). */
export function goDuration(micros: number): string {
  const trim = (whole: number, frac: number, digits: number) => {
    const f = String(frac).padStart(digits, '0').replace(/0+$/, '');
    return f ? `${whole}.${f}` : String(whole);
  };
  if (micros < 1000) return `${micros}µs`;
  if (micros < 1_000_000) return `${trim(Math.floor(micros / 1000), micros % 1000, 3)}ms`;
  const h = Math.floor(micros / 3_600_000_000);
  const m = Math.floor((micros % 3_600_000_000) / 60_000_000);
  const us = micros % 60_000_000;
  const sec = `${trim(Math.floor(us / 1_000_000), us % 1_000_000, 6)}s`;
  return h > 0 ? `${h}h${m}m${sec}` : m > 0 ? `${m}m${sec}` : sec;
}

/** `getAuthMethods`: what a request that failed authentication tried. */
function authMethods(req: IncomingMessage): string {
  const methods: string[] = [];
  const auth = (req.headers.authorization ?? '').trim();
  if (/^basic /i.test(auth)) methods.push('basic');
  const parts = auth.split(' ');
  if (parts.length > 1 && parts[0]!.toLowerCase() === 'bearer') methods.push('bearer');
  const q = (req.url ?? '').indexOf('?');
  if (q >= 0 && (new URLSearchParams(req.url!.slice(q + 1)).get('access_token') ?? '').trim() !== '')
    methods.push('access_token');
  const socket = req.socket as { getPeerCertificate?: () => { raw?: Buffer } };
  if (socket.getPeerCertificate?.()?.raw) methods.push('x509');
  return methods.length > 0
    ? `Authentication failed, attempted: ${methods.join(', ')}`
    : 'Authentication failed, no credentials provided';
}
