/**
 * The server's responses (`ServerResponse` option of its HTTP servers): the `Audit-Id` header
 * every response carries is held until the first header is set or the head is written, then put
 * first, as if set when the request arrived.
 *
 * Why: once any header is set, Node's `writeHead(code, headers)` takes its slow path (each header
 * set one by one into the response's header map, then the map walked); set ahead of everything,
 * the `Audit-Id` put every answer on it, about 2–4 µs of each request (measured on the creates
 * bench). Written with the head, the headers and their order are the same bytes.
 */
import {
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
  ServerResponse,
} from 'node:http';

const AUDIT_ID = 'Audit-Id';

/**
 * The headers of a JSON answer (`writeHead(code, JSON_HEADERS)`). Given these, a response with
 * its `Audit-Id` pending writes one literal with the three headers in the same order, not a copy
 * of them made key by key (most answers are JSON).
 */
export const JSON_HEADERS: Readonly<OutgoingHttpHeaders> = Object.freeze({
  'Content-Type': 'application/json',
  'Cache-Control': 'no-cache, private',
});

/** A response whose `Audit-Id` header is written with the first headers. */
export class ApiResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** The `Audit-Id` not yet among the headers. */
  private pendingAuditId: string | undefined = undefined;

  /** Gives the response its `Audit-Id` header, ahead of every other header. */
  setAuditId(id: string): void {
    this.flushAuditId();
    this.pendingAuditId = id;
  }

  /** Puts the pending `Audit-Id` among the headers (first, as nothing was set before it). */
  private flushAuditId(): void {
    const id = this.pendingAuditId;
    if (id === undefined) return;
    this.pendingAuditId = undefined;
    super.setHeader(AUDIT_ID, id);
  }

  // Everything that reads or changes the headers sees the `Audit-Id` as set.
  override setHeader(name: string, value: number | string | readonly string[]): this {
    this.flushAuditId();
    return super.setHeader(name, value);
  }
  override appendHeader(name: string, value: string | readonly string[]): this {
    this.flushAuditId();
    return super.appendHeader(name, value);
  }
  override getHeader(name: string): number | string | string[] | undefined {
    this.flushAuditId();
    return super.getHeader(name);
  }
  override getHeaders(): OutgoingHttpHeaders {
    this.flushAuditId();
    return super.getHeaders();
  }
  override getHeaderNames(): string[] {
    this.flushAuditId();
    return super.getHeaderNames();
  }
  override hasHeader(name: string): boolean {
    this.flushAuditId();
    return super.hasHeader(name);
  }
  override removeHeader(name: string): void {
    this.flushAuditId();
    super.removeHeader(name);
  }

  override writeHead(
    statusCode: number,
    reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    const id = this.pendingAuditId;
    if (id === undefined) return super.writeHead(statusCode, reason as string, headers);
    this.pendingAuditId = undefined;
    const given = typeof reason === 'string' ? headers : reason;
    const merged = withAuditId(id, given);
    if (merged === undefined) {
      // As before: set ahead, then the head's headers merged in by Node.
      super.setHeader(AUDIT_ID, id);
      return super.writeHead(statusCode, reason as string, headers);
    }
    return typeof reason === 'string'
      ? super.writeHead(statusCode, reason, merged)
      : super.writeHead(statusCode, merged);
  }
}

/**
 * `headers` of `writeHead` with the `Audit-Id` first (no header was set before it: it would have
 * been flushed); undefined when they are an array (Node merges those into headers set before
 * by rules of its own) or hold an `Audit-Id` of their own: the header is then set as before.
 */
function withAuditId(
  id: string,
  headers: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined,
): OutgoingHttpHeaders | undefined {
  if (headers === undefined || headers === null) return { 'Audit-Id': id };
  if (headers === JSON_HEADERS)
    return { 'Audit-Id': id, 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' };
  if (Array.isArray(headers)) return undefined;
  const out: OutgoingHttpHeaders = { 'Audit-Id': id };
  for (const name in headers) {
    if (!Object.hasOwn(headers, name)) continue;
    if (isAuditId(name)) return undefined;
    out[name] = headers[name];
  }
  return out;
}

const isAuditId = (name: string): boolean => name.length === 8 && name.toLowerCase() === 'audit-id';
