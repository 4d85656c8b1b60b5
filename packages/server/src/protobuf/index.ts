/**
 * `application/vnd.kubernetes.protobuf` request bodies.
 *
 * kubectl (and any client-go typed client configured for protobuf) sends built-in objects in Kubernetes'
 * protobuf encoding: the magic `k8s\0` followed by a `runtime.Unknown` envelope whose `raw` holds the
 * gogo-protobuf encoding of the object. The server works in JSON, so the body is turned into exactly the JSON
 * that the same client would have sent with `Content-Type: application/json`, and everything after that
 * (validation, defaulting, storage) is unchanged. Responses stay JSON, which these clients accept.
 *
 * @example
 * ```ts
 * if (mediaType(req.headers['content-type']) === PROTOBUF_CONTENT_TYPE) {
 *   const obj = decodeProtobufObject(await readBody(req), { apiVersion: 'apps/v1', kind: 'Deployment' });
 * }
 * ```
 */
import { ApiError } from 'kubeloop/api';
import { DecodeContext, decodeEnvelope, readUnknown, UnsupportedType } from './decode.js';
import { K8S_PROTO } from './table.js';
import { ProtoWireError } from './wire.js';

export { type EncodeOptions, encodeMessage, encodeProtobufObject } from './encode.js';

/** The media type of Kubernetes' protobuf encoding. */
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';

/** The type the endpoint expects; fills in a body whose envelope leaves apiVersion or kind empty. */
export interface ExpectedType {
  apiVersion?: string;
  kind?: string;
}

/** True when the built-in `apiVersion`/`kind` can be decoded from protobuf by {@link decodeProtobufObject}. */
export function supportsProtobuf(apiVersion: string, kind: string): boolean {
  return K8S_PROTO.kinds.has(`${apiVersion}/${kind}`) || K8S_PROTO.kinds.has(`*/${kind}`);
}

/**
 * Decodes a Kubernetes protobuf body (magic `k8s\0` + `runtime.Unknown` envelope) into the object's JSON form:
 * exactly what the JSON encoding of the same Go object would be, with `kind` and `apiVersion` from the envelope.
 *
 * Throws `ApiError.badRequest` (400) for a malformed body, a type this server has no descriptor for, or a
 * value Go could not render as JSON. Work is bounded by the body size (nesting depth and output size are
 * capped), so hostile input fails fast.
 */
export function decodeProtobufObject(body: Buffer, expected?: ExpectedType): Record<string, unknown> {
  // Each decoded value costs at least a byte or two on the wire, except the zero values Go's JSON adds for
  // absent fields; the budget leaves room for those and stops amplification by crafted bodies.
  const ctx = new DecodeContext(K8S_PROTO, body.length + 100_000);
  try {
    return decodeEnvelope(ctx, body, 0, expected);
  } catch (err) {
    if (err instanceof UnsupportedType) throw ApiError.badRequest(err.message);
    if (err instanceof ProtoWireError) throw ApiError.badRequest(describe(body, expected, err.message));
    throw err;
  }
}

/** The apiserver's wording for a body it could not decode (`transformDecodeError`). */
function describe(body: Buffer, expected: ExpectedType | undefined, message: string): string {
  let kind = '';
  let apiVersion = '';
  try {
    if (body.length > 4) {
      ({ kind, apiVersion } = readUnknown(body.subarray(4)));
    }
  } catch {
    // The envelope itself is broken: no type to name.
  }
  kind ||= expected?.kind ?? '';
  apiVersion ||= expected?.apiVersion ?? '';
  if (kind) {
    const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
    return `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${expected?.kind || kind}: ${message}`;
  }
  return `the object provided is unrecognized: ${message}`;
}
