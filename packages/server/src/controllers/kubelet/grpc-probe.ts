/**
 * The kubelet's gRPC probe (pkg/probe/grpc): `grpc.health.v1.Health/Check` over plaintext
 * HTTP/2 (credentials are not supported, as in kube) to the pod's address, with the probe's
 * timeout as its deadline, worded as kube words each outcome. As grpc-go's blocking dial, a
 * refused connection is tried again until the deadline, so nothing listening fails only then.
 */
import { type ClientHttp2Session, connect, constants } from 'node:http2';
import { goDuration } from './backoff.js';

/** The outcome of one probe, and why it failed. */
interface Outcome {
  ok: boolean;
  message?: string;
}

/** grpc-go's names of the status codes, as `rpc error: code = … desc = …` prints them. */
const CODES = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];
/** HealthCheckResponse.ServingStatus. */
const SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

/** A gRPC message: the 5-byte prefix (not compressed, big-endian length), then the protobuf. */
function frame(message: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

/** HealthCheckRequest { string service = 1; }. */
function healthCheckRequest(service: string): Buffer {
  const bytes = Buffer.from(service, 'utf8');
  if (bytes.length === 0) return Buffer.alloc(0);
  const len: number[] = [];
  for (let n = bytes.length; ; n >>>= 7) {
    if (n < 0x80) {
      len.push(n);
      break;
    }
    len.push((n & 0x7f) | 0x80);
  }
  return Buffer.concat([Buffer.from([0x0a, ...len]), bytes]);
}

/** HealthCheckResponse { ServingStatus status = 1; }: the status (0, UNKNOWN, when absent). */
function servingStatus(message: Buffer): number {
  let status = 0;
  for (let i = 0; i < message.length; ) {
    const key = message[i++] ?? 0;
    let value = 0;
    for (let shift = 0; i < message.length; shift += 7) {
      const b = message[i++] ?? 0;
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) break;
    }
    if (key === 0x08) status = value;
    else if ((key & 7) === 2) i += value; // another length-delimited field: skipped
  }
  return status;
}

function connectOnce(authority: string, ms: number): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connect(authority);
    const timer = setTimeout(() => {
      session.destroy();
      reject(new Error('deadline'));
    }, ms);
    session.once('connect', () => {
      clearTimeout(timer);
      resolve(session);
    });
    session.once('error', (err) => {
      clearTimeout(timer);
      session.destroy();
      reject(err);
    });
  });
}

/** Probes `grpc.health.v1.Health/Check` of `service` at `host:port` within `timeoutMs`. */
export async function grpcProbe(
  host: string,
  port: number,
  service: string,
  timeoutMs: number,
): Promise<Outcome> {
  const addr = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const within = goDuration(timeoutMs);
  const deadline = Date.now() + timeoutMs;
  let session: ClientHttp2Session | undefined;
  while (!session) {
    const left = deadline - Date.now();
    if (left <= 0)
      return {
        ok: false,
        message: `timeout: failed to connect service "${addr}" within ${within}: context deadline exceeded`,
      };
    try {
      session = await connectOnce(`http://${addr}`, left);
    } catch {
      // grpc-go waits for the connection (WithBlock), retrying, until the deadline.
      await new Promise((r) => setTimeout(r, Math.min(100, Math.max(0, deadline - Date.now()))));
    }
  }
  const s = session;
  try {
    return await new Promise<Outcome>((resolve) => {
      const left = Math.max(1, deadline - Date.now());
      const req = s.request({
        [constants.HTTP2_HEADER_METHOD]: 'POST',
        [constants.HTTP2_HEADER_PATH]: '/grpc.health.v1.Health/Check',
        'content-type': 'application/grpc',
        te: 'trailers',
        'user-agent': 'kube-probe/1.32',
        'grpc-timeout': `${left}m`,
      });
      const timer = setTimeout(() => {
        req.close(constants.NGHTTP2_CANCEL);
        resolve({ ok: false, message: `timeout: health rpc did not complete within ${within}` });
      }, left);
      const chunks: Buffer[] = [];
      let head: Record<string, unknown> = {};
      req.on('response', (h) => {
        head = h;
      });
      req.on('data', (d: Buffer) => chunks.push(d));
      const finish = (trailers: Record<string, unknown>) => {
        clearTimeout(timer);
        // A trailers-only answer carries its status in the headers.
        const code = Number(trailers['grpc-status'] ?? head['grpc-status'] ?? 2);
        const desc = decodeURIComponent(String(trailers['grpc-message'] ?? head['grpc-message'] ?? ''));
        if (code === 12)
          return resolve({
            ok: false,
            message: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${desc}`,
          });
        if (code === 4)
          return resolve({ ok: false, message: `timeout: health rpc did not complete within ${within}` });
        if (code !== 0)
          return resolve({
            ok: false,
            message: `error: health rpc probe failed: rpc error: code = ${CODES[code] ?? `Code(${code})`} desc = ${desc}`,
          });
        const body = Buffer.concat(chunks);
        const status = servingStatus(body.subarray(5, 5 + (body.length >= 5 ? body.readUInt32BE(1) : 0)));
        resolve(
          status === 1
            ? { ok: true }
            : {
                ok: false,
                message: `service unhealthy (responded with "${SERVING_STATUS[status] ?? String(status)}")`,
              },
        );
      };
      let trailers: Record<string, unknown> | undefined;
      req.on('trailers', (t) => {
        trailers = t;
      });
      req.on('end', () => finish(trailers ?? {}));
      req.on('error', (err) => {
        clearTimeout(timer);
        resolve({
          ok: false,
          message: `error: health rpc probe failed: rpc error: code = Unavailable desc = ${err.message}`,
        });
      });
      req.end(frame(healthCheckRequest(service)));
    });
  } finally {
    s.close();
  }
}
