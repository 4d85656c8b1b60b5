/** What the verb handlers share: the server's parts, and the request they serve. */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AdmissionOptions } from '../../admission/options.js';
import type { UserInfo } from '../../auth/authentication/user.js';
import type { Authorizer } from '../../auth/authorization/types.js';
import type { Registry } from '../../registry/registry.js';
import type { RestStorage } from '../../registry/rest.js';
import type { ResourceType } from '../../registry/types.js';
import type { Obj } from '../../util/object.js';
import type { RequestContext } from '../context.js';
import type { Faults } from '../faults.js';
import type { Negotiated } from '../negotiation.js';
import type { Responder } from '../responses.js';
import type { ConnectHandler } from './connect.js';

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

/** The server's parts the handlers use. */
export interface HandlerScope {
  rest: RestStorage;
  registry: Registry;
  openapi: OpenApiEndpoints;
  out: Responder;
  faults: Faults;
  /** Requests fault injection leaves alone (the built-in controllers' own requests). */
  exemptFromFaults?(req: IncomingMessage): boolean;
  bookmarkIntervalMs: number;
  /** Connect-style subresources served outside the registry, by `resource/subresource` (`pods/exec`). */
  connect?: Record<string, ConnectHandler>;
  /** Answers a TokenRequest for a stored ServiceAccount (`serviceaccounts/<name>/token`). */
  issueServiceAccountToken?(serviceAccount: Obj, request: Obj): Obj | Promise<Obj>;
  /** What a TokenReview answers for a bearer token meant for `audiences`. */
  authenticateToken?(
    token: string,
    audiences?: readonly string[],
  ): { user?: UserInfo | undefined; audiences?: string[] | undefined; error?: string | undefined };
  /** The server's authorizer (the access reviews ask it). */
  authorizer?: Authorizer;
  /**
   * Admits the object a subresource create posts when it is not the resource's kind (a
   * `pods/eviction` Eviction): the mutating, then the validating webhooks, as kube admits it.
   */
  admitSubresource?(t: ResourceType, obj: Obj, options: AdmissionOptions): Promise<void>;
}

/** A request to a resource, once routed: its kind, object, user and negotiated answer. */
export interface ResourceRequest extends RequestContext {
  user: UserInfo;
  t: ResourceType;
  /** The URL's namespace, for namespaced kinds. */
  namespace: string | undefined;
  name: string;
  subresource: string;
  verb: string;
  dryRun: boolean;
  /** The answer's representation, negotiated once before anything is read or stored. */
  media: Negotiated;
  /** The socket and first bytes of a watch asking for a WebSocket (`Connection: Upgrade`). */
  upgrade?: { socket: Duplex; head: Buffer };
}
