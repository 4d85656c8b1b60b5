/**
 * Predicates: which changes of a watched object are worth a reconcile (controller-runtime's
 * `predicate` package). A predicate answers per kind of event; an answer left out means "yes".
 */
import type { KubeObject } from '../../client/types.js';

/**
 * Filters the events of one watched kind before they reach the workqueue. Every method is
 * optional; a missing one lets the event through.
 *
 * @example
 * ```ts
 * const onlySpec: Predicate<Foo> = { update: (o, n) => o.metadata?.generation !== n.metadata?.generation };
 * ```
 */
export interface Predicate<T extends KubeObject = KubeObject> {
  create?(obj: T): boolean;
  update?(oldObj: T, newObj: T): boolean;
  delete?(obj: T): boolean;
}

const sameMap = (a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean => {
  const ka = Object.keys(a ?? {});
  const kb = Object.keys(b ?? {});
  return ka.length === kb.length && ka.every((k) => a?.[k] === b?.[k]);
};

/**
 * Updates pass only when `metadata.generation` changed — spec changes, not status or metadata
 * ones. (Kinds without a generation, like ConfigMap, never pass an update.)
 *
 * @example
 * ```ts
 * controller(Foo).withPredicates(generationChanged()).reconcile(...)
 * ```
 */
export function generationChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return { update: (o, n) => o.metadata?.generation !== n.metadata?.generation };
}

/** Updates pass only when the labels changed. */
export function labelsChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return { update: (o, n) => !sameMap(o.metadata?.labels, n.metadata?.labels) };
}

/** Updates pass only when the annotations changed. */
export function annotationsChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return { update: (o, n) => !sameMap(o.metadata?.annotations, n.metadata?.annotations) };
}

/** Updates pass only when the resourceVersion changed (drops the periodic resyncs' no-op updates). */
export function resourceVersionChanged<T extends KubeObject = KubeObject>(): Predicate<T> {
  return { update: (o, n) => o.metadata?.resourceVersion !== n.metadata?.resourceVersion };
}

/**
 * A predicate from one function applied to every event (the new object of an update).
 *
 * @example
 * ```ts
 * const managed = predicate<Foo>((f) => f.metadata?.labels?.['managed'] === 'true');
 * ```
 */
export function predicate<T extends KubeObject = KubeObject>(fn: (obj: T) => boolean): Predicate<T> {
  return { create: fn, update: (_o, n) => fn(n), delete: fn };
}

type Event<T> =
  | { type: 'create'; obj: T }
  | { type: 'update'; oldObj: T; obj: T }
  | { type: 'delete'; obj: T };

function test<T extends KubeObject>(p: Predicate<T>, e: Event<T>): boolean {
  switch (e.type) {
    case 'create':
      return p.create?.(e.obj) ?? true;
    case 'update':
      return p.update?.(e.oldObj, e.obj) ?? true;
    case 'delete':
      return p.delete?.(e.obj) ?? true;
  }
}

function combine<T extends KubeObject>(ps: readonly Predicate<T>[], every: boolean): Predicate<T> {
  const run = (e: Event<T>) => (every ? ps.every((p) => test(p, e)) : ps.some((p) => test(p, e)));
  return {
    create: (obj) => run({ type: 'create', obj }),
    update: (oldObj, obj) => run({ type: 'update', oldObj, obj }),
    delete: (obj) => run({ type: 'delete', obj }),
  };
}

/**
 * Passes when every predicate passes.
 *
 * @example
 * ```ts
 * and(generationChanged(), predicate((f) => !f.metadata?.labels?.paused))
 * ```
 */
export function and<T extends KubeObject>(...ps: Predicate<T>[]): Predicate<T> {
  return combine(ps, true);
}

/**
 * Passes when any predicate passes.
 *
 * @example
 * ```ts
 * or(generationChanged(), labelsChanged(), annotationsChanged())
 * ```
 */
export function or<T extends KubeObject>(...ps: Predicate<T>[]): Predicate<T> {
  return combine(ps, false);
}

/** Passes when `p` does not. */
export function not<T extends KubeObject>(p: Predicate<T>): Predicate<T> {
  return {
    create: (obj) => !test(p, { type: 'create', obj }),
    update: (oldObj, obj) => !test(p, { type: 'update', oldObj, obj }),
    delete: (obj) => !test(p, { type: 'delete', obj }),
  };
}

/** Whether every predicate lets an event through. @internal */
export function allow<T extends KubeObject>(ps: readonly Predicate<T>[], e: Event<T>): boolean {
  return ps.every((p) => test(p, e));
}
