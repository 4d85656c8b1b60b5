/**
 * Helpers of the kubeloop/runtime suite: a control plane with a client, a custom kind served
 * through a real CRD, and small utilities to wait on conditions.
 */
import { type ClientEnv, eventually, startClientEnv, type TestEnvOptions } from '@kubeloop/server/testing';
import type {
  ClientOptions,
  CustomResourceDefinition,
  KubeObject,
  ResourceDescriptor,
} from 'kubeloop/client';

export { eventually };

/** A small custom object, as the chaos test and the benchmark use. */
export interface Widget extends KubeObject {
  spec?: { size?: number; color?: string; round?: number };
  status?: { seen?: number };
}

/** The custom kind `Widget` of `runtime.kubeloop.dev/v1`, namespaced. */
export const Widget: ResourceDescriptor<Widget> = {
  group: 'runtime.kubeloop.dev',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
};

/** The CRD serving {@link Widget}. */
export const widgetCrd: CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.runtime.kubeloop.dev' },
  spec: {
    group: 'runtime.kubeloop.dev',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  size: { type: 'integer' },
                  color: { type: 'string' },
                  round: { type: 'integer' },
                },
              },
              status: { type: 'object', properties: { seen: { type: 'integer' } } },
            },
          },
        },
      },
    ],
  },
};

/** A control plane, a client of it, and the Widget CRD established. */
export type RuntimeEnv = ClientEnv;

export async function startRuntimeEnv(
  envOptions: TestEnvOptions = {},
  clientOptions: ClientOptions = {},
): Promise<RuntimeEnv> {
  // A bare API server: the built-in controllers' own watches would blur the leak checks.
  const t = await startClientEnv({ controllers: false, ...envOptions, client: clientOptions });
  await t.installCrd(widgetCrd);
  return t;
}

/** Counts of the process's active handles by kind (`Timeout`, `TCPSocketWrap`, …). */
export function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1);
  return counts;
}

/** Runs `fn` on `n` items with `concurrency` in flight. */
export async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/**
 * Runs an async iterable in the background and records what it yields, so that a test can
 * wait for conditions on it.
 */
export function record<E>(iterable: AsyncIterable<E>): {
  events: E[];
  /** Settles when the iteration ends; rejects with its error. */
  done: Promise<void>;
  /** Waits until `check(events)` holds. */
  until(check: (events: E[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
} {
  const events: E[] = [];
  const done = (async () => {
    for await (const ev of iterable) events.push(ev);
  })();
  done.catch(() => undefined);
  return {
    events,
    done,
    until: (check, what, timeoutMs = 10_000) =>
      eventually(() => check(events), timeoutMs, what).then(() => undefined),
  };
}
