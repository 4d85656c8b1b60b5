/**
 * Label selectors of cached objects, parsed once: a workload controller reads its object's
 * selector on every sync, and the cached object is frozen, so the same selector object always
 * parses to the same selector.
 */
import { type LabelSelector, type LabelSelectorObject, labelSelectorFromObject } from 'kubeloop/api';

const parsed = new WeakMap<object, LabelSelector>();

/**
 * `labelSelectorFromObject` of `selector`, remembered for a frozen selector object (one of the
 * shared cache's); an unfrozen one (a copy being written) is parsed each time.
 *
 * @example
 * ```ts
 * const selector = cachedSelector(rs.spec?.selector);
 * ```
 */
export function cachedSelector(selector: LabelSelectorObject | undefined | null): LabelSelector {
  if (!selector || !Object.isFrozen(selector)) return labelSelectorFromObject(selector);
  let s = parsed.get(selector);
  if (!s) {
    s = labelSelectorFromObject(selector);
    parsed.set(selector, s);
  }
  return s;
}
