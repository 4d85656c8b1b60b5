/**
 * Errors a reconcile function throws to say how the controller should go on.
 */

/**
 * An error that retrying cannot fix (an invalid spec, a missing prerequisite the user must
 * create): the controller logs it, counts it in `controller_runtime_terminal_reconcile_errors_total`
 * and does not requeue the object until it changes again.
 *
 * @example
 * ```ts
 * if (!foo.spec.image) throw new TerminalError('spec.image is required');
 * ```
 */
export class TerminalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

/**
 * Whether `err` is (or wraps, through `cause`) a {@link TerminalError}.
 *
 * @example
 * ```ts
 * isTerminalError(new Error('x', { cause: new TerminalError('bad spec') })); // true
 * ```
 */
export function isTerminalError(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 16; e = e.cause, depth++) {
    if (e instanceof TerminalError) return true;
  }
  return false;
}

/**
 * Whether a thrown value is a programming error rather than an expected failure — the
 * JavaScript counterpart of a Go panic (counted in `controller_runtime_reconcile_panics_total`):
 * a value that is not an `Error`, or a `TypeError`, `ReferenceError`, `RangeError` or `SyntaxError`.
 */
export function isPanic(err: unknown): boolean {
  return (
    !(err instanceof Error) ||
    err instanceof TypeError ||
    err instanceof ReferenceError ||
    err instanceof RangeError ||
    err instanceof SyntaxError
  );
}

/** The reconcile function ran past the controller's `reconcileTimeoutMs`. */
export class ReconcileTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`reconcile did not finish within ${timeoutMs} ms`);
    this.name = 'ReconcileTimeoutError';
  }
}
