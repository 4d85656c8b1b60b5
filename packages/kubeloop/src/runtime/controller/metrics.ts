/**
 * controller-runtime's controller metrics, with its names, so that its dashboards work.
 */
import { Counter, Gauge, Histogram, type Registry } from '../prom-client.js';

/** Buckets of `controller_runtime_reconcile_time_seconds` (controller-runtime's). */
export const RECONCILE_TIME_BUCKETS: readonly number[] = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5,
  1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
]);

/** The result label of `controller_runtime_reconcile_total`. */
export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'requeue_after';

/**
 * The controller metrics of one registry (one per manager).
 *
 * @example
 * ```ts
 * const metrics = new ControllerMetrics(registry);
 * metrics.reconcileTotal.inc({ controller: 'foo', result: 'success' });
 * ```
 */
export class ControllerMetrics {
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly terminalErrors: Counter<'controller'>;
  readonly panics: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly maxConcurrent: Gauge<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.terminalErrors = new Counter({
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.panics = new Counter({
      name: 'controller_runtime_reconcile_panics_total',
      help: 'Total number of reconciliation panics per controller',
      labelNames: ['controller'],
      registers,
    });
    this.reconcileTime = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: [...RECONCILE_TIME_BUCKETS],
      registers,
    });
    this.maxConcurrent = new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    });
    this.activeWorkers = new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    });
  }

  /** Makes every series of a controller appear (at zero) as soon as it starts. */
  initialize(controller: string): void {
    for (const result of ['success', 'error', 'requeue', 'requeue_after'] as const) {
      this.reconcileTotal.inc({ controller, result }, 0);
    }
    this.reconcileErrors.inc({ controller }, 0);
    this.terminalErrors.inc({ controller }, 0);
    this.panics.inc({ controller }, 0);
    this.activeWorkers.set({ controller }, 0);
  }
}
