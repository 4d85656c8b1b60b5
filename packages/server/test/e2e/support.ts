/**
 * Helpers of the end-to-end kubectl suite: reading kubectl's table output, writing manifests,
 * and small checks on what the server returned.
 */
import { expect } from 'vitest';
import type { KubectlEnv } from '../kubectl.js';

// Reading and writing what kubectl prints and reads is a public helper of the test environment.
export { type KubectlTable, manifest, parseTable } from '../../src/testing/index.js';

/** Whether an IPv4 address lies in a CIDR block (e.g. the service range `10.96.0.0/12`). */
export function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const toInt = (a: string) => a.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
  if (!/^\d+\.\d+\.\d+\.\d+$/.test(ip)) return false;
  const size = 2 ** (32 - Number(bits));
  return Math.floor(toInt(ip) / size) === Math.floor(toInt(base ?? '') / size);
}

/** `kubectl get -o json` of a list: its items by `kind/name`. */
export function itemsByKindName(listJson: string): Map<string, any> {
  const list = JSON.parse(listJson);
  return new Map(list.items.map((o: any) => [`${o.kind}/${o.metadata.name}`, o]));
}

/** A Deployment manifest (label and selector `app: <name>`; one nginx container unless given). */
export function deployment(
  name: string,
  namespace: string,
  opts: {
    replicas?: number;
    labels?: Record<string, string>;
    containers?: Record<string, unknown>[];
  } = {},
): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: name, ...opts.labels } },
    spec: {
      ...(opts.replicas !== undefined && { replicas: opts.replicas }),
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: opts.containers ?? [{ name, image: 'nginx:1.27' }] },
      },
    },
  };
}

/**
 * kubectl helpers of the per-kind tests: `create` a manifest, expect one `refused` (returns
 * kubectl's message), `getJson` of a target, and `kubectl get` as a `table` of lines with runs
 * of spaces collapsed. `env` is read at each call, since suites start theirs in `beforeAll`.
 */
export function kindHelpers(env: () => KubectlEnv) {
  return {
    create: (manifest: object) => env().ok(['create', '-f', '-'], { input: JSON.stringify(manifest) }),
    refused: async (manifest: object): Promise<string> => {
      const r = await env().run(['create', '-f', '-'], { input: JSON.stringify(manifest) });
      expect(r.code).toBe(1);
      return r.stderr.trim();
    },
    getJson: async (...target: string[]) => JSON.parse(await env().ok(['get', ...target, '-o', 'json'])),
    table: async (...args: string[]) =>
      (await env().ok(['get', ...args]))
        .trimEnd()
        .split('\n')
        .map((l) => l.replace(/\s+/g, ' ').trim()),
  };
}
