/**
 * A missing permission is loud: a 403 of an informer's list or watch, or of a reconcile's
 * request, is logged with the server's message and a hint naming what to declare, counted in the
 * manager's metrics, and — for an informer — keeps `/readyz` failing until access is granted.
 * The refusals are the server's own 403 answers, injected for chosen requests (fault injection);
 * the RBAC suite of examples/sample-controller shows the same against real RBAC enforcement.
 * Any other failure of an informer's list is logged too, so that one that cannot sync says why.
 */
import { ConfigMap } from 'kubeloop/client';
import { controller, forbiddenHint, type Manager } from 'kubeloop/runtime';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  fetchText,
  type RuntimeEnv,
  sample,
  startRuntimeEnv,
  testManager,
  Widget,
} from './helpers.js';

let t: RuntimeEnv;
beforeAll(async () => {
  t = await startRuntimeEnv();
});
afterAll(() => t.stop());

const SA = 'system:serviceaccount:default:default';

/** The 403 kube-apiserver answers for `verb` on configmaps in `ns`. */
const forbidden = (verb: string, ns: string) => ({
  status: 403,
  reason: 'Forbidden',
  message: `configmaps is forbidden: User "${SA}" cannot ${verb} resource "configmaps" in API group "" in the namespace "${ns}"`,
});

interface LogLine {
  level: number;
  msg: string;
  hint?: string;
  verb?: string;
  resource?: string;
  err?: { message?: string };
}

/** A manager whose log lines are kept (parsed) in `lines`. */
function loggedManager(): { manager: (c: Parameters<Manager['add']>[0]) => Manager; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s) as LogLine) });
  return { manager: (c) => testManager(t.client, { logger }).add(c), lines };
}

/** A started manager of a controller that watches the ConfigMaps of `ns`, its log lines kept. */
function startWatchingConfigMaps(ns: string): { m: Manager; done: Promise<void>; lines: LogLine[] } {
  const { manager, lines } = loggedManager();
  const m = manager(
    controller(Widget)
      .inNamespace(ns)
      .watches(ConfigMap, () => [])
      .reconcile(async () => undefined),
  );
  const done = m.start();
  done.catch(() => undefined);
  return { m, done, lines };
}

const widget = (ns: string, name: string): Widget => ({
  apiVersion: 'runtime.kubeloop.dev/v1',
  kind: 'Widget',
  metadata: { name, namespace: ns },
  spec: { size: 1 },
});

describe('a forbidden informer', () => {
  it('is logged with what to declare, counted, and keeps the manager not ready until it may list and watch', async () => {
    const ns = 'forbidden-informer';
    await t.namespace(ns);
    // Every list and watch of configmaps in the namespace is refused, as RBAC would.
    const allow = t.env.faults.inject({
      match: { resource: 'configmaps', namespace: ns },
      action: forbidden('watch', ns),
    });
    const { m, done, lines } = startWatchingConfigMaps(ns);
    let ready = false;
    m.ready().then(
      () => {
        ready = true;
      },
      () => undefined,
    );
    try {
      const gauge = { group: '', resource: 'configmaps', namespace: ns };
      await eventually(
        async () => {
          const url = m.metricsUrl;
          if (!url) return false;
          return sample((await fetchText(`${url}/metrics`)).text, 'kubeloop_informer_forbidden', gauge) === 1;
        },
        10_000,
        'the forbidden informer in the metrics',
      );
      const metrics = (await fetchText(`${m.metricsUrl}/metrics`)).text;
      expect(
        sample(metrics, 'kubeloop_forbidden_requests_total', { group: '', resource: 'configmaps' }),
      ).toBeGreaterThanOrEqual(1);
      expect((await fetchText(`${m.healthUrl}/readyz`)).status).toBe(500);
      expect((await fetchText(`${m.healthUrl}/healthz`)).status).toBe(200);
      expect(ready).toBe(false);

      const line = lines.find((l) => l.msg.startsWith('forbidden: '));
      expect(line?.level).toBe(50);
      expect(line?.msg).toBe(`forbidden: ${forbidden('watch', ns).message}`);
      expect(line?.resource).toBe('configmaps');
      // The controller declares the watch: what is missing is the RBAC that grants it.
      expect(line?.hint).toBe(
        'the manager declares "watch" on "configmaps" in API group "", but the identity it runs as is not granted it: run it under the ServiceAccount of its generated RBAC (config/rbac), applied and regenerated if its declarations changed',
      );

      // Access granted: the informer syncs, the manager becomes ready, the gauge drops.
      allow();
      await m.ready();
      expect((await fetchText(`${m.healthUrl}/readyz`)).status).toBe(200);
      expect(
        sample((await fetchText(`${m.metricsUrl}/metrics`)).text, 'kubeloop_informer_forbidden', gauge),
      ).toBe(0);
    } finally {
      allow();
      await m.stop();
      await done.catch(() => undefined);
    }
  });
});

describe('an informer whose list fails otherwise', () => {
  it("logs the server's answer at each attempt, as client-go's reflector does, and syncs once the list passes", async () => {
    const ns = 'failing-list';
    await t.namespace(ns);
    // What a CRD whose conversion webhook is down answers every list of its kind with.
    const message =
      'conversion webhook for runtime.kubeloop.dev/v1, Kind=Widget failed: Post "https://webhook.system.svc:443/convert?timeout=30s": service "webhook" not found';
    const heal = t.env.faults.inject({
      match: { resource: 'configmaps', namespace: ns },
      action: { status: 500, reason: 'InternalError', message },
    });
    const { m, done, lines } = startWatchingConfigMaps(ns);
    try {
      const failed = await eventually(
        () => lines.find((l) => l.msg.includes(message)),
        10_000,
        'the failed list in the log',
      );
      // An error while it cannot sync (its first list is a watch-list here, as client-go's).
      expect(failed.level).toBe(50);
      expect(failed.msg).toMatch(/^watcher of configmaps .* failed: conversion webhook/);
      heal();
      await m.ready();
    } finally {
      heal();
      await m.stop();
      await done.catch(() => undefined);
    }
  });
});

describe("a reconcile's forbidden request", () => {
  it('is logged with the declaration to add, and counted by verb and resource', async () => {
    const ns = 'forbidden-create';
    await t.namespace(ns);
    const allow = t.env.faults.inject({
      match: { verb: 'create', resource: 'configmaps', namespace: ns },
      action: forbidden('create', ns),
    });
    const { manager, lines } = loggedManager();
    const m = manager(
      controller(Widget)
        .inNamespace(ns)
        .reconcile(async (w, { client }) => {
          await client.create({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: w.metadata?.name ?? '', namespace: ns },
          });
        }),
    );
    const done = m.start();
    done.catch(() => undefined);
    try {
      await m.ready();
      await t.client.create(widget(ns, 'w1'));
      const failed = await eventually(
        () => lines.find((l) => l.msg === 'reconcile failed'),
        10_000,
        'the failed reconcile',
      );
      const hint =
        'declare it: .owns(ConfigMap) on the controller that creates them, or .needs({ apiGroups: [""], resources: ["configmaps"], verbs: ["create"] }); then regenerate the manifests (config/rbac)';
      expect(failed.hint).toBe(hint);
      expect(failed.err?.message).toBe(forbidden('create', ns).message);
      const line = lines.find((l) => l.msg.startsWith('forbidden: '));
      expect(line).toMatchObject({ verb: 'create', resource: 'configmaps', hint });
      const metrics = (await fetchText(`${m.metricsUrl}/metrics`)).text;
      expect(
        sample(metrics, 'kubeloop_forbidden_requests_total', {
          verb: 'create',
          group: '',
          resource: 'configmaps',
        }),
      ).toBeGreaterThanOrEqual(1);
      // Refusals of a reconcile do not make the manager unready: its informers are fine.
      expect((await fetchText(`${m.healthUrl}/readyz`)).status).toBe(200);
    } finally {
      allow();
      await m.stop();
      await done.catch(() => undefined);
    }
  });
});

describe('forbiddenHint', () => {
  const Deployment = {
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    plural: 'deployments',
    namespaced: true,
  };

  it('says the cluster lacks the generated RBAC when the declarations already grant the request', () => {
    const permissions = { controllers: [{ for: Widget, owns: [Deployment] }] };
    expect(
      forbiddenHint(
        { verb: 'delete', group: 'apps', resource: 'deployments', kind: 'Deployment' },
        permissions,
      ),
    ).toBe(
      'the manager declares "delete" on "deployments" in API group "apps", but the identity it runs as is not granted it: run it under the ServiceAccount of its generated RBAC (config/rbac), applied and regenerated if its declarations changed',
    );
    expect(
      forbiddenHint(
        {
          verb: 'patch',
          group: 'runtime.kubeloop.dev',
          resource: 'widgets',
          subresource: 'status',
          kind: 'Widget',
        },
        permissions,
      ),
    ).toContain('the manager declares "patch" on "widgets/status" in API group "runtime.kubeloop.dev"');
  });

  it('names .watches or .owns for a kind nothing declares', () => {
    expect(
      forbiddenHint(
        { verb: 'list', group: 'mydomain.com', resource: 'genericdaemons', kind: 'Genericdaemon' },
        { controllers: [{ for: Widget }] },
      ),
    ).toBe(
      'declare it: .watches(Genericdaemon, …) on the controller that reads them (.owns(Genericdaemon) if it creates them), or .needs({ apiGroups: ["mydomain.com"], resources: ["genericdaemons"], verbs: ["list"] }); then regenerate the manifests (config/rbac)',
    );
  });

  it('names .needs for a subresource', () => {
    expect(
      forbiddenHint(
        { verb: 'update', group: 'apps', resource: 'deployments', subresource: 'scale', kind: 'Deployment' },
        { controllers: [{ for: Widget }] },
      ),
    ).toBe(
      'declare it: .needs({ apiGroups: ["apps"], resources: ["deployments/scale"], verbs: ["update"] }) on the controller that calls it; then regenerate the manifests (config/rbac)',
    );
  });
});
