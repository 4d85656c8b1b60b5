/** What the streaming handlers need from the control plane (their own module: the handlers and index.ts both read it). */
import type { SimulatedRuntime } from '../../controllers/kubelet/runtime.js';
import type { Registry } from '../../registry/registry.js';
import type { RestStorage } from '../../registry/rest.js';
import type { PortForwardTarget } from './portforward-target.js';

/** What the streaming handlers need from the control plane. */
export interface StreamingDeps {
  rest: RestStorage;
  registry: Registry;
  /** The simulated containers (undefined while no kubelet runs). */
  runtime(): SimulatedRuntime | undefined;
  /** Whether a simulated kubelet runs the node. */
  hasKubelet(node: string): boolean;
  log?(level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>): void;
  /** Where `pods/portforward` connections go (default: refused, as nothing listens in a simulated pod). */
  portForward?: PortForwardTarget;
}
