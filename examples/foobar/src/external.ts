/**
 * The system outside the cluster that FooBars register their targets with, simulated in memory
 * so that the example runs anywhere. It behaves as a remote service does: it can be
 * unavailable for a while (a retryable failure), and it refuses requests it will never accept
 * (a type it does not serve: a permanent failure). Tests inject the failures.
 */

/** An operation of the registry. */
export type RegistryOperation = 'register' | 'unregister';

/** A failure of the registry; `retryable` says whether asking again may succeed. */
export class RegistryError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}

/** One registration. */
export interface Registration {
  readonly target: string;
  readonly type: string;
}

/** One call the registry answered, in order (what tests count). */
export interface RegistryCall {
  readonly op: RegistryOperation;
  readonly key: string;
  readonly outcome: 'ok' | 'unavailable' | 'refused';
}

/** The external registry (see the module docs). */
export class ExternalRegistry {
  /** The types the registry serves; anything else is refused for good. */
  readonly supportedTypes: ReadonlySet<string>;
  private readonly entries = new Map<string, Registration>();
  private readonly outages = new Map<string, number>();
  /** Every call, in order. */
  readonly calls: RegistryCall[] = [];

  constructor(supportedTypes: readonly string[] = ['http', 'tcp']) {
    this.supportedTypes = new Set(supportedTypes);
  }

  /** Makes the next `times` calls of `op` for `key` fail as unavailable (a transient outage). */
  failNext(op: RegistryOperation, key: string, times: number): void {
    this.outages.set(`${op} ${key}`, times);
  }

  /** Registers (or re-registers) `key`. Idempotent, as a remote call retried must be. */
  async register(key: string, registration: Registration): Promise<void> {
    this.failIfOut('register', key);
    if (!this.supportedTypes.has(registration.type)) {
      this.calls.push({ op: 'register', key, outcome: 'refused' });
      throw new RegistryError(
        `the registry does not serve type "${registration.type}" (it serves ${[...this.supportedTypes].join(', ')})`,
        false,
      );
    }
    this.entries.set(key, registration);
    this.calls.push({ op: 'register', key, outcome: 'ok' });
  }

  /** Removes `key`; removing what is not there succeeds (the retry of a call that had worked). */
  async unregister(key: string): Promise<void> {
    this.failIfOut('unregister', key);
    this.entries.delete(key);
    this.calls.push({ op: 'unregister', key, outcome: 'ok' });
  }

  /** The registration of `key`, if any. */
  get(key: string): Registration | undefined {
    return this.entries.get(key);
  }

  /** The calls of one key, as `op:outcome`. */
  callsOf(key: string): string[] {
    return this.calls.filter((c) => c.key === key).map((c) => `${c.op}:${c.outcome}`);
  }

  private failIfOut(op: RegistryOperation, key: string): void {
    const left = this.outages.get(`${op} ${key}`) ?? 0;
    if (left <= 0) return;
    this.outages.set(`${op} ${key}`, left - 1);
    this.calls.push({ op, key, outcome: 'unavailable' });
    throw new RegistryError(`the registry is unavailable (${op} ${key})`, true);
  }
}
