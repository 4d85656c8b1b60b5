/**
 * The streaming subresources of pods, served by the simulated kubelet's runtime:
 * `pods/log`, `pods/exec`, `pods/attach` (and, beside them, `pods/portforward`).
 */
import type { ConnectHandler } from '../handlers/connect.js';
import type { StreamingDeps } from './deps.js';

/**
 * A handler whose module is loaded at its first request: an idle server holds none of the
 * channel protocols, SPDY or the simulated runtime's streams (~100 KB of code) until a client
 * asks for logs, exec, attach or a port-forward.
 */
function onFirstUse(load: () => Promise<ConnectHandler>): ConnectHandler {
  let handler: Promise<ConnectHandler> | undefined;
  return async (r) => {
    handler ??= load();
    return (await handler)(r);
  };
}

/**
 * The handlers of `pods/log`, `pods/exec`, `pods/attach` and `pods/portforward`, by `resource/subresource`, for
 * the API server's `connect` option.
 */
export function podStreamingHandlers(deps: StreamingDeps): Record<string, ConnectHandler> {
  return {
    'pods/log': onFirstUse(async () => (await import('./log.js')).logHandler(deps)),
    'pods/exec': onFirstUse(async () => (await import('./exec.js')).remoteCommandHandler(deps, 'exec')),
    'pods/attach': onFirstUse(async () => (await import('./exec.js')).remoteCommandHandler(deps, 'attach')),
    'pods/portforward': onFirstUse(async () => (await import('./portforward.js')).portForwardHandler(deps)),
  };
}
