/**
 * The ValidatingAdmissionPolicy status controller (kubernetes/pkg/controller/
 * validatingadmissionpolicystatus): for each policy whose generation is newer than its
 * `status.observedGeneration`, type-checks its validations against the kinds it matches and
 * writes `status.observedGeneration` and `status.typeChecking.expressionWarnings`.
 *
 * It runs inside the API server (not with the built-in controllers), because the type checking
 * needs the server's OpenAPI definitions and CRD schemas; it therefore also runs on a bare server.
 */
import type { Registry } from '../../registry/registry.js';
import type { RestStorage } from '../../registry/rest.js';
import { collectionPrefix } from '../../storage/store.js';
import type { StoreEvent } from '../../storage/types.js';
import { isObject, type Obj } from '../../util/object.js';

const CONTROLLER_NAME = 'validatingadmissionpolicy-status-controller';

/** Keeps policies' type-checking status current. */
export class PolicyStatusController {
  private unsubscribe: (() => void) | undefined;
  private readonly queue = new Set<string>();
  private running = false;
  private stopped = false;

  constructor(
    private readonly rest: RestStorage,
    private readonly registry: Registry,
    private readonly log?: (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void,
  ) {}

  start(): void {
    const store = this.rest.store;
    const prefix = collectionPrefix('admissionregistration.k8s.io', 'validatingadmissionpolicies');
    const snapshot = store.list(prefix);
    for (const p of snapshot.items) this.observe(p.object as Obj);
    this.unsubscribe = store.watch(prefix, snapshot.revision, (ev: StoreEvent) => {
      if (ev.type !== 'DELETED') this.observe(ev.object.object as Obj);
    });
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
  }

  private observe(policy: Obj): void {
    const m = (policy.metadata ?? {}) as Obj;
    const observed = (isObject(policy.status) ? policy.status.observedGeneration : undefined) as
      | number
      | undefined;
    if (typeof m.generation === 'number' && m.generation <= (observed ?? 0)) return;
    this.queue.add(String(m.name));
    if (!this.running) void this.drain();
  }

  /** Works the queue off the watch's call stack: the status write is a write of its own. */
  private async drain(): Promise<void> {
    this.running = true;
    await Promise.resolve();
    try {
      while (this.queue.size > 0 && !this.stopped) {
        const name = this.queue.values().next().value as string;
        this.queue.delete(name);
        await this.reconcile(name);
      }
    } finally {
      this.running = false;
    }
  }

  private async reconcile(name: string): Promise<void> {
    const t = this.registry.lookup('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicies');
    if (!t) return;
    try {
      // The type checker (a CEL environment over the built-in kinds' schemas) loads with the
      // first policy: a server without policies does not carry it.
      const { typeCheckPolicy } = await import('./typecheck.js');
      await this.rest.patch(
        t,
        undefined,
        name,
        'status',
        { dryRun: false, fieldManager: CONTROLLER_NAME },
        (current) => {
          const generation = (current.metadata as Obj).generation as number;
          const warnings = typeCheckPolicy(current, this.registry, this.rest.store);
          return {
            ...current,
            status: {
              ...(isObject(current.status) ? current.status : {}),
              observedGeneration: generation,
              typeChecking: warnings.length > 0 ? { expressionWarnings: warnings } : {},
            },
          };
        },
      );
    } catch (e) {
      // A policy deleted meanwhile has no status to write.
      if ((e as { status?: { code?: number } }).status?.code !== 404)
        this.log?.('warn', 'validatingadmissionpolicy status update failed', { name, error: String(e) });
    }
  }
}
