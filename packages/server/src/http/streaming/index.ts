/**
 * The streaming subresources of pods, served by the simulated kubelet's runtime:
 * `pods/log`, `pods/exec`, `pods/attach` (and, beside them, `pods/portforward`).
 */
import type { SimulatedRuntime } from '../../kubelet/runtime.js';
import type { Registry } from '../../registry/registry.js';
import type { RestStorage } from '../../registry/rest.js';
import type { ConnectHandler } from '../handlers/connect.js';
import { remoteCommandHandler } from './exec.js';
import { logHandler } from './log.js';
import { portForwardHandler } from './portforward.js';
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

/**
 * The handlers of `pods/log`, `pods/exec`, `pods/attach` and `pods/portforward`, by `resource/subresource`, for
 * {@link ApiServerOptions.connect}.
 */
export function podStreamingHandlers(deps: StreamingDeps): Record<string, ConnectHandler> {
  return {
    'pods/log': logHandler(deps),
    'pods/exec': remoteCommandHandler(deps, 'exec'),
    'pods/attach': remoteCommandHandler(deps, 'attach'),
    'pods/portforward': portForwardHandler(deps),
  };
}
