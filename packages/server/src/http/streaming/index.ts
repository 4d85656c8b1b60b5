/**
 * The streaming subresources of pods, served by the simulated kubelet's runtime:
 * `pods/log`, `pods/exec`, `pods/attach` (and, beside them, `pods/portforward`).
 */
import type { ConnectHandler } from '../handlers/connect.js';
import type { StreamingDeps } from './deps.js';
import { remoteCommandHandler } from './exec.js';
import { logHandler } from './log.js';
import { portForwardHandler } from './portforward.js';

/**
 * The handlers of `pods/log`, `pods/exec`, `pods/attach` and `pods/portforward`, by `resource/subresource`, for
 * the API server's `connect` option.
 */
export function podStreamingHandlers(deps: StreamingDeps): Record<string, ConnectHandler> {
  return {
    'pods/log': logHandler(deps),
    'pods/exec': remoteCommandHandler(deps, 'exec'),
    'pods/attach': remoteCommandHandler(deps, 'attach'),
    'pods/portforward': portForwardHandler(deps),
  };
}
