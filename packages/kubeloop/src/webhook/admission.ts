/**
 * Typed admission handlers, after controller-runtime's `CustomDefaulter` and `CustomValidator`:
 * a defaulter mutates (or returns) the object and the SDK answers with the minimal JSON Patch;
 * a validator answers warnings or field errors shaped as the API server's own 422. Generic
 * handlers ({@link mutatingWebhook}, {@link validatingWebhook}) take any kind, e.g. Pods.
 */
import { ApiError, type Status } from '../api/status.js';
import type { GroupVersionKind, ResourceDescriptor } from '../client/descriptor.js';
import type { KubeObject } from '../client/types.js';
import { pluralOf } from '../schema/define/names.js';
import { cloneJson, createJsonPatch } from './patch.js';
import type {
  AdmissionContext,
  AdmissionRequest,
  AdmissionResponse,
  AdmissionResult,
  Operation,
  ValidationResult,
} from './types.js';

/** What a webhook configuration needs to know about the kind a webhook serves. */
export interface WebhookTarget extends GroupVersionKind {
  readonly plural: string;
  readonly namespaced?: boolean;
}

/** Options every admission webhook accepts (they end up in its configuration). */
export interface AdmissionWebhookOptions {
  /** Path on the server (default kubebuilder's `/mutate-<group>-<version>-<kind>` / `/validate-…`). */
  readonly path?: string;
  /** Name in the configuration (default kubebuilder's `m<kind>-<version>.kb.io` / `v…`). */
  readonly name?: string;
  /** Operations the configuration routes here (default CREATE and UPDATE; validators add DELETE when they have `delete`). */
  readonly operations?: readonly Operation[];
  /** `Fail` (default, as kubebuilder) or `Ignore`. */
  readonly failurePolicy?: 'Fail' | 'Ignore';
  /** `None` (default) or `NoneOnDryRun`: what the handler does besides answering. */
  readonly sideEffects?: 'None' | 'NoneOnDryRun';
  /** `timeoutSeconds` of the configuration (default 10, the API server's default). */
  readonly timeoutSeconds?: number;
}

/** A registered admission webhook: where it is served, what it matches, and its handler. */
export interface AdmissionWebhook {
  readonly type: 'mutating' | 'validating';
  readonly path: string;
  readonly name: string;
  readonly target: WebhookTarget;
  readonly operations: readonly Operation[];
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly sideEffects: 'None' | 'NoneOnDryRun';
  readonly timeoutSeconds: number;
  /** Answers one request; throws only for a handler's failure, which the server turns into a 500. */
  handle(request: AdmissionRequest, ctx: AdmissionContext): Promise<Omit<AdmissionResponse, 'uid'>>;
}

const dashed = (gvk: GroupVersionKind) =>
  `${gvk.group.replace(/\./g, '-')}-${gvk.version}-${gvk.kind.toLowerCase()}`;

/** kubebuilder's path of a mutating webhook: `/mutate-<group with dashes>-<version>-<kind lowercase>`. */
export const mutatePath = (gvk: GroupVersionKind): string => `/mutate-${dashed(gvk)}`;
/** kubebuilder's path of a validating webhook: `/validate-<group with dashes>-<version>-<kind lowercase>`. */
export const validatePath = (gvk: GroupVersionKind): string => `/validate-${dashed(gvk)}`;

function targetOf(kind: ResourceDescriptor): WebhookTarget {
  return {
    group: kind.group,
    version: kind.version,
    kind: kind.kind,
    plural: kind.plural ?? pluralOf(kind.kind),
    ...(kind.namespaced !== undefined && { namespaced: kind.namespaced }),
  };
}

function base(
  type: 'mutating' | 'validating',
  kind: ResourceDescriptor,
  options: AdmissionWebhookOptions,
  operations: readonly Operation[],
): Omit<AdmissionWebhook, 'handle'> {
  const target = targetOf(kind);
  const letter = type === 'mutating' ? 'm' : 'v';
  return {
    type,
    target,
    path: options.path ?? (type === 'mutating' ? mutatePath(target) : validatePath(target)),
    name: options.name ?? `${letter}${target.kind.toLowerCase()}-${target.version}.kb.io`,
    operations: options.operations ?? operations,
    failurePolicy: options.failurePolicy ?? 'Fail',
    sideEffects: options.sideEffects ?? 'None',
    timeoutSeconds: options.timeoutSeconds ?? 10,
  };
}

const ok = (): Omit<AdmissionResponse, 'uid'> => ({ allowed: true, status: { code: 200 } });

/** A denial carrying `status` as the API server will return it (controller-runtime's `validationResponseFromStatus`). */
function deniedWith(status: Partial<Status>, warnings?: readonly string[]): Omit<AdmissionResponse, 'uid'> {
  return { allowed: false, status, ...(warnings?.length && { warnings: [...warnings] }) };
}

/** controller-runtime's `admission.Errored(code, err)`: not allowed, the code and the message. */
export function errored(code: number, message: string): Omit<AdmissionResponse, 'uid'> {
  return { allowed: false, status: { code, message } };
}

/**
 * A defaulter for objects of `kind`: `fn` mutates the object it gets, or returns a new one;
 * the API server receives the minimal JSON Patch between the two (none when nothing changed).
 * Not called on DELETE, as controller-runtime's `CustomDefaulter`. Throwing an `ApiError`
 * denies with its Status.
 *
 * @example
 * ```ts
 * export const fooDefaults = defaulter(Foo, (foo) => {
 *   foo.spec.replicas ??= 1;
 * });
 * ```
 */
export function defaulter<T extends KubeObject>(
  kind: ResourceDescriptor<T>,
  fn: (obj: T, ctx: AdmissionContext) => void | T | Promise<void | T>,
  options: AdmissionWebhookOptions = {},
): AdmissionWebhook {
  return {
    ...base('mutating', kind as ResourceDescriptor, options, ['CREATE', 'UPDATE']),
    async handle(request, ctx) {
      if (request.operation === 'DELETE') return ok();
      if (request.object === undefined || request.object === null)
        return errored(400, 'there is no content to decode');
      const original = request.object;
      const obj = cloneJson(original) as T;
      try {
        const returned = await fn(obj, ctx);
        const patch = createJsonPatch(original, returned ?? obj);
        if (patch.length === 0) return ok();
        return {
          allowed: true,
          status: { code: 200 },
          patchType: 'JSONPatch',
          patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
        };
      } catch (err) {
        if (err instanceof ApiError) return deniedWith(err.status);
        throw err;
      }
    },
  };
}

/** The handlers of a validator; each may be left out (allowed). */
export interface ValidatorHandlers<T> {
  create?(obj: T, ctx: AdmissionContext): void | ValidationResult | Promise<void | ValidationResult>;
  update?(
    oldObj: T,
    obj: T,
    ctx: AdmissionContext,
  ): void | ValidationResult | Promise<void | ValidationResult>;
  delete?(obj: T, ctx: AdmissionContext): void | ValidationResult | Promise<void | ValidationResult>;
}

/** The 422 Invalid Status of field errors on `obj`, as the API server words its own. */
export function invalidStatus(
  kind: GroupVersionKind,
  name: string,
  causes: ValidationResult['errors'] & {},
): Status {
  return ApiError.invalid({ group: kind.group, kind: kind.kind }, name, [...causes]).status;
}

/**
 * A validator for objects of `kind`, after controller-runtime's `CustomValidator`: `create`,
 * `update(old, new)` and `delete` each answer nothing (allowed), `{ warnings }` (allowed with
 * warnings) or `{ errors }` (denied with a 422 Invalid Status whose causes are the field errors,
 * so kubectl prints `The Foo "x" is invalid: spec.replicas: Invalid value: …`). Throwing an
 * `ApiError` denies with its Status.
 *
 * @example
 * ```ts
 * export const fooChecks = validator(Foo, {
 *   create: (foo) => foo.spec.replicas > 5
 *     ? { errors: [fieldErrors.invalid('spec.replicas', foo.spec.replicas, 'at most 5 on this cluster')] }
 *     : undefined,
 *   update: (old, foo) => (old.spec.deploymentName !== foo.spec.deploymentName
 *     ? { warnings: ['renaming the deployment leaves the old one behind'] } : undefined),
 * });
 * ```
 */
export function validator<T extends KubeObject>(
  kind: ResourceDescriptor<T>,
  handlers: ValidatorHandlers<T>,
  options: AdmissionWebhookOptions = {},
): AdmissionWebhook {
  const operations: Operation[] = ['CREATE', 'UPDATE', ...(handlers.delete ? (['DELETE'] as const) : [])];
  const b = base('validating', kind as ResourceDescriptor, options, operations);
  return {
    ...b,
    async handle(request, ctx) {
      let result: void | ValidationResult;
      let obj: unknown;
      try {
        switch (request.operation) {
          case 'CREATE':
            obj = request.object;
            result = await handlers.create?.(obj as T, ctx);
            break;
          case 'UPDATE':
            obj = request.object;
            result = await handlers.update?.(request.oldObject as T, obj as T, ctx);
            break;
          case 'DELETE':
            // The API server sends the object being deleted as oldObject.
            obj = request.oldObject;
            result = await handlers.delete?.(obj as T, ctx);
            break;
          default:
            return errored(400, `unknown operation "${String(request.operation)}"`);
        }
      } catch (err) {
        if (err instanceof ApiError) return deniedWith(err.status);
        throw err;
      }
      const warnings = result?.warnings ?? [];
      if (result?.errors?.length) {
        const meta = (obj as KubeObject | undefined)?.metadata;
        const name = meta?.name ?? request.name ?? '';
        return deniedWith(invalidStatus(b.target, name, result.errors), warnings);
      }
      return { ...ok(), ...(warnings.length > 0 && { warnings: [...warnings] }) };
    },
  };
}

function generic(
  type: 'mutating' | 'validating',
  kind: ResourceDescriptor,
  fn: (request: AdmissionRequest, ctx: AdmissionContext) => AdmissionResult | Promise<AdmissionResult>,
  options: AdmissionWebhookOptions,
): AdmissionWebhook {
  return {
    ...base(type, kind, options, ['CREATE', 'UPDATE']),
    async handle(request, ctx) {
      const r = await fn(request, ctx);
      const out: Omit<AdmissionResponse, 'uid'> = {
        allowed: r.allowed,
        status: r.status ?? { code: r.allowed ? 200 : 403, ...(r.allowed ? {} : { reason: 'Forbidden' }) },
        ...(r.warnings?.length && { warnings: [...r.warnings] }),
        ...(r.auditAnnotations && { auditAnnotations: { ...r.auditAnnotations } }),
      };
      if (type === 'mutating' && r.allowed && r.object !== undefined && request.object !== undefined) {
        const patch = createJsonPatch(request.object, r.object);
        if (patch.length > 0) {
          out.patchType = 'JSONPatch';
          out.patch = Buffer.from(JSON.stringify(patch)).toString('base64');
        }
      }
      return out;
    },
  };
}

/**
 * A mutating webhook on any kind (a Pod mutator, say): `fn` gets the raw request and answers
 * `{ allowed, object? }`; the patch to `object` is computed for you.
 */
export function mutatingWebhook<T extends KubeObject>(
  kind: ResourceDescriptor<T>,
  fn: (request: AdmissionRequest, ctx: AdmissionContext) => AdmissionResult | Promise<AdmissionResult>,
  options: AdmissionWebhookOptions = {},
): AdmissionWebhook {
  return generic('mutating', kind as ResourceDescriptor, fn, options);
}

/** A validating webhook on any kind: `fn` gets the raw request and answers `{ allowed, status?, warnings? }`. */
export function validatingWebhook<T extends KubeObject>(
  kind: ResourceDescriptor<T>,
  fn: (request: AdmissionRequest, ctx: AdmissionContext) => AdmissionResult | Promise<AdmissionResult>,
  options: AdmissionWebhookOptions = {},
): AdmissionWebhook {
  return generic('validating', kind as ResourceDescriptor, fn, options);
}
