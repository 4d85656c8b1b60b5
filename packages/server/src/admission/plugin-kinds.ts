/**
 * Which writes an admission plugin acts on, declared beside the plugin, so that the chain passes
 * each request only to the plugins that can act on it: a ConfigMap create need not call the
 * plugins of pods, claims and ingresses (most built-in plugins act on one or two kinds).
 */
import type { ResourceType } from '../registry/types.js';

/** An admission operation. */
export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

/** True when a plugin may act on `op` of an object of `t` (it is skipped otherwise); depends on nothing else. */
export type Handles = (op: Operation, t: ResourceType) => boolean;

/**
 * `plugin`, marked with the writes it acts on. A plugin keeps its own checks: called directly,
 * it answers as before; `handles` must accept at least every write the plugin acts on.
 */
export function actsOn<F extends (...args: never[]) => unknown>(
  handles: Handles,
  plugin: F,
): F & { handles: Handles } {
  return Object.assign(plugin, { handles });
}

/** `t` is the core kind `resource`. */
export const isCore = (t: ResourceType, ...resources: string[]): boolean =>
  t.group === '' && resources.includes(t.resource);
