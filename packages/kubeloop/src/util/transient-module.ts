import { createRequire } from 'node:module';

/**
 * A CommonJS module a process needs for a moment (at start): required on first use, and dropped
 * from the module cache `keepMs` after the last use, so that its code and data can leave the heap
 * (an operator reads its kubeconfig and declares its schemas once, yet those parsers would stay
 * for good). The next use loads it again. Modules that were in the cache before it was required
 * (someone else's copy) stay. Only for modules whose results are plain data: objects made by one
 * load must serve the next.
 *
 * @param specifier what `require` is given, resolved from `parentUrl` (the caller's `import.meta.url`)
 * @returns the function that answers the module's exports, loading them if need be
 */
export function transientModule<T>(specifier: string, parentUrl: string, keepMs = 1000): () => T {
  let held: { exports: T; release: NodeJS.Timeout } | undefined;
  return () => {
    if (held) {
      held.release.refresh();
      return held.exports;
    }
    // A require of its own each time: a module lists what it loaded (`children`), which would keep it.
    const require = createRequire(parentUrl);
    const before = new Set(Object.keys(require.cache));
    const exports = require(specifier) as T;
    const added = Object.keys(require.cache).filter((k) => !before.has(k));
    const release = setTimeout(() => {
      held = undefined;
      for (const k of added) delete require.cache[k];
    }, keepMs).unref();
    held = { exports, release };
    return exports;
  };
}
