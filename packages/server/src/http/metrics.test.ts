/**
 * The request metrics are tallied without prom-client on the request path and handed to its
 * registry when scraped: what `/metrics` shows must be what prom-client's own Counter and
 * Histogram show for the same requests (prom-client is the oracle here).
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Histogram, Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Registry as TypeRegistry } from '../registry/registry.js';
import type { Store } from '../storage/store.js';
import { ApiMetrics } from './metrics.js';
import type { RequestInfo } from './request-info.js';

const LABELS = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'];
const BUCKETS = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
];

/** The request metrics' lines of a text exposition (the process metrics vary by the moment). */
const requestLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => /^(# (HELP|TYPE) )?apiserver_request_(total|duration_seconds)/.test(l))
    .join('\n');

afterEach(() => vi.restoreAllMocks());

describe('ApiMetrics', () => {
  it('renders request counts and latencies as prom-client would, series in first-seen order', async () => {
    // One type object for every resource: the series of several label sets are then found in
    // one type's list, which must tell them apart by every label.
    const anyType = {};
    const types = { lookup: () => anyType, all: () => [] } as unknown as TypeRegistry;
    const metrics = new ApiMetrics({ count: () => 0 } as unknown as Store, types);
    const oracle = new Registry();
    const counter = new Counter({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      labelNames: [...LABELS, 'code'],
      registers: [oracle],
    });
    const histogram = new Histogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      labelNames: LABELS,
      buckets: BUCKETS,
      registers: [oracle],
    });
    let now = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const requests: [method: string, info: Partial<RequestInfo>, query: string, code: number, ms: number][] =
      [
        ['POST', { resource: 'configmaps', namespace: 'a', verb: 'create' }, '', 201, 3],
        [
          'GET',
          { resource: 'pods', namespace: 'a', name: 'p', subresource: 'log', verb: 'get' },
          'follow=1',
          200,
          9000,
        ],
        ['GET', { resource: 'pods', namespace: 'a', name: 'p', subresource: 'log', verb: 'get' }, '', 200, 5],
        ['POST', { resource: 'configmaps', namespace: 'a', verb: 'create' }, 'dryRun=All&dryRun=', 201, 25],
        ['GET', { resource: 'configmaps', verb: 'watch' }, '', 200, 60_000],
        ['POST', { resource: 'configmaps', namespace: 'a', verb: 'create' }, '', 409, 70_000],
        ['GET', { group: 'apps', resource: 'deployments', verb: 'list' }, '', 200, 0.4],
        ['POST', { resource: 'configmaps', namespace: 'a', verb: 'create' }, '', 201, 1250],
      ];
    for (const [method, partial, query, code, ms] of requests) {
      const info = {
        isResourceRequest: true,
        group: '',
        version: 'v1',
        name: '',
        namespace: '',
        subresource: '',
        ...partial,
      } as RequestInfo;
      const res = Object.assign(new EventEmitter(), { statusCode: code });
      now = 0;
      metrics.track(
        { method, headers: {} } as IncomingMessage,
        res as unknown as ServerResponse,
        info,
        new URLSearchParams(query),
      );
      now += ms;
      res.emit('finish');
      res.emit('close');
      res.emit('close');
    }
    // The same requests through prom-client itself.
    const labels = (
      verb: string,
      dryRun: string,
      group: string,
      resource: string,
      subresource: string,
      scope: string,
    ) => ({
      verb,
      dry_run: dryRun,
      group,
      version: 'v1',
      resource,
      subresource,
      scope,
      component: 'apiserver',
    });
    const create = labels('POST', '', '', 'configmaps', '', 'namespace');
    const log = labels('GET', '', '', 'pods', 'log', 'resource');
    const dryRun = labels('POST', 'All', '', 'configmaps', '', 'namespace');
    const watch = labels('WATCH', '', '', 'configmaps', '', 'cluster');
    const list = labels('LIST', '', 'apps', 'deployments', '', 'cluster');
    counter.inc({ ...create, code: '201' });
    counter.inc({ ...log, code: '200' });
    histogram.observe(create, 3 / 1000);
    counter.inc({ ...log, code: '200' });
    histogram.observe(log, 5 / 1000);
    counter.inc({ ...dryRun, code: '201' });
    histogram.observe(dryRun, 25 / 1000);
    counter.inc({ ...watch, code: '200' });
    counter.inc({ ...create, code: '409' });
    histogram.observe(create, 70_000 / 1000);
    counter.inc({ ...list, code: '200' });
    histogram.observe(list, 0.4 / 1000);
    counter.inc({ ...create, code: '201' });
    histogram.observe(create, 1250 / 1000);

    const want = requestLines(await oracle.metrics());
    expect(want).toContain('apiserver_request_duration_seconds_bucket{le="+Inf"');
    expect(requestLines((await metrics.render()).body)).toBe(want);
    const json = (await metrics.registry.getMetricsAsJSON()).filter((m) =>
      m.name.startsWith('apiserver_request_'),
    );
    expect(json).toEqual(await oracle.getMetricsAsJSON());
  });
});
