/**
 * prom-client's metric kinds and global registry, loaded from their own files. Its index also
 * loads the default process metrics (with @opentelemetry/api), the Pushgateway (node:http,
 * node:https, node:zlib) and the cluster aggregator, none of which the runtime uses: ~2 MB of
 * heap and ~45 ms of CPU in every operator (and in the control plane, whose built-in
 * controllers run on this runtime). These are the same classes the index exports (one module
 * each in Node's cache): a `Registry` a user makes from `prom-client` works here as before.
 */
import { createRequire } from 'node:module';
import type * as prom from 'prom-client';

const require = createRequire(import.meta.url);

export const Registry: typeof prom.Registry = require('prom-client/lib/registry');
export type Registry<T extends prom.RegistryContentType = prom.PrometheusContentType> = prom.Registry<T>;
/** prom-client's global registry (its `register`). */
export const register: prom.Registry = (Registry as unknown as { globalRegistry: prom.Registry })
  .globalRegistry;
export const Counter: typeof prom.Counter = require('prom-client/lib/counter');
export type Counter<T extends string = string> = prom.Counter<T>;
export const Gauge: typeof prom.Gauge = require('prom-client/lib/gauge');
export type Gauge<T extends string = string> = prom.Gauge<T>;
export const Histogram: typeof prom.Histogram = require('prom-client/lib/histogram');
export type Histogram<T extends string = string> = prom.Histogram<T>;
