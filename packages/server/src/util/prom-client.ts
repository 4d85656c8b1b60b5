/**
 * prom-client's metric kinds, loaded from their own files. Its index also loads what the server
 * does not use (the default process metrics with @opentelemetry/api, the Pushgateway with
 * node:http, node:https and node:zlib, the cluster aggregator): ~45 ms of CPU at every start, a
 * tenth of the time to ready. These are the same classes the index exports (one module each in
 * Node's cache), so a `Registry` made from either is the same kind of object.
 */
import { createRequire } from 'node:module';
import type * as prom from 'prom-client';

const require = createRequire(import.meta.url);

export const Registry: typeof prom.Registry = require('prom-client/lib/registry');
export type Registry<T extends prom.RegistryContentType = prom.PrometheusContentType> = prom.Registry<T>;
export const Counter: typeof prom.Counter = require('prom-client/lib/counter');
export type Counter<T extends string = string> = prom.Counter<T>;
export const Gauge: typeof prom.Gauge = require('prom-client/lib/gauge');
export type Gauge<T extends string = string> = prom.Gauge<T>;
export const Histogram: typeof prom.Histogram = require('prom-client/lib/histogram');
export type Histogram<T extends string = string> = prom.Histogram<T>;
