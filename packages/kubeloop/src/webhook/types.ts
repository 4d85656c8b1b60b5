/**
 * The `admission.k8s.io/v1` wire types a webhook server reads and answers, and what a handler
 * gets besides the object: the request and, inside a Manager, its client and cache.
 */
import type { Status, StatusCause } from '../api/status.js';
import type { Client } from '../client/client.js';
import type { GroupVersionKind } from '../client/descriptor.js';
import type { CacheReader } from '../runtime/controller/types.js';

/** `authentication.k8s.io/v1` UserInfo of the requester. */
export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** The operation under review. */
export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** `AdmissionRequest` as the API server sends it. */
export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: { group: string; version: string; resource: string };
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  options?: unknown;
}

/** `AdmissionResponse` as a webhook answers. */
export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: Partial<Status>;
  patch?: string;
  patchType?: 'JSONPatch';
  auditAnnotations?: Record<string, string>;
  warnings?: string[];
}

/** `AdmissionReview` (admission.k8s.io/v1). */
export interface AdmissionReview {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/**
 * What every handler gets with the object: the request (user, operation, dryRun, uid), an
 * `AbortSignal` that aborts when the review times out, and — when the server runs in a
 * Manager — the manager's client and cache.
 */
export interface AdmissionContext {
  readonly request: AdmissionRequest;
  readonly uid: string;
  readonly operation: Operation;
  readonly user: UserInfo;
  /** True when the request is a dry run: a handler must have no side effects then. */
  readonly dryRun: boolean;
  readonly namespace: string;
  readonly name: string;
  /** Aborts when the review's time is up; pass it to calls that should stop then. */
  readonly signal: AbortSignal;
  /** The manager's client (writes tracked for read-your-writes); undefined outside a Manager. */
  readonly client: Client | undefined;
  /** The manager's cache; undefined outside a Manager. */
  readonly cache: CacheReader | undefined;
}

/**
 * What a validator answers: nothing (allowed), warnings (allowed, shown by kubectl as
 * `Warning: …`), or field errors (denied with a 422 Invalid Status listing them as causes,
 * which kubectl prints as it prints schema errors). Build errors with `fieldErrors.invalid(…)`.
 */
export interface ValidationResult {
  readonly warnings?: readonly string[];
  readonly errors?: readonly StatusCause[];
}

/** What a generic handler answers (the patch is computed for a mutating handler that returns `object`). */
export interface AdmissionResult {
  readonly allowed: boolean;
  /** The object as it should be admitted (mutating webhooks): turned into a minimal JSON Patch. */
  readonly object?: unknown;
  readonly status?: Partial<Status>;
  readonly warnings?: readonly string[];
  readonly auditAnnotations?: Readonly<Record<string, string>>;
}
