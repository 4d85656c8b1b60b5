/**
 * A module that is loaded on first use instead of with the server: what only some writes need
 * (the CEL compiler and the CRD schema checks) stays out of start-up and out of an idle
 * server's memory.
 */

/** A module loaded on demand: `load()` first (asynchronous, once), then `get()` synchronously. */
export interface LazyModule<M> {
  /** Starts loading; a promise until the module is loaded, then undefined (no tick to wait). */
  load(): Promise<void> | undefined;
  /** The module; throws if it is not loaded yet (the caller must have awaited `load()`). */
  get(): M;
  /** Whether the module is loaded. */
  readonly loaded: boolean;
}

/**
 * A {@link LazyModule} over `importer` (a dynamic `import()`).
 *
 * @example
 * ```ts
 * const schema = lazyModule(() => import('kubeloop/schema'));
 * await schema.load();
 * schema.get().compileSchema(props);
 * ```
 */
export function lazyModule<M>(importer: () => Promise<M>): LazyModule<M> {
  let mod: M | undefined;
  let loading: Promise<void> | undefined;
  return {
    load() {
      if (mod !== undefined) return undefined;
      loading ??= importer().then((m) => {
        mod = m;
      });
      return loading;
    },
    get() {
      if (mod === undefined) throw new Error('lazy module used before it was loaded');
      return mod;
    },
    get loaded() {
      return mod !== undefined;
    },
  };
}
