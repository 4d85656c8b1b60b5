/**
 * Helpers of the CustomResourceDefinition suite: the seed CRDs (shared with kubeloop/schema's
 * own tests), small CRD builders, and waiting for a CRD to be served.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { ControlPlane } from '../../src/index.js';
import { httpClient } from '../http.js';
import { eventually } from '../kubectl.js';

export type Http = ReturnType<typeof httpClient>;
/** A JSON answer, read deeply by the tests. */
export type Json = any;

const TESTDATA = new URL('../../../kubeloop/src/schema/testdata/', import.meta.url);

/** A seed CRD of `kubeloop/schema`'s testdata, parsed (`foobar`, `foo`, `genericdaemon`, `etcdcluster`, `kitchensink`). */
export function seedCrd(name: 'foobar' | 'foo' | 'genericdaemon' | 'etcdcluster' | 'kitchensink'): Json {
  return parse(readFileSync(new URL(`${name}-crd.yaml`, TESTDATA), 'utf8'));
}

/** The YAML text of a seed CRD, as a user would `kubectl apply -f` it. */
export function seedCrdYaml(
  name: 'foobar' | 'foo' | 'genericdaemon' | 'etcdcluster' | 'kitchensink',
): string {
  return readFileSync(new URL(`${name}-crd.yaml`, TESTDATA), 'utf8');
}

export const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** A one-version namespaced CRD of `group` with a permissive-but-structural spec. */
export function simpleCrd(
  plural: string,
  kind: string,
  group = 'example.com',
  version: Record<string, unknown> = {},
  names: Record<string, unknown> = {},
): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, kind, ...names },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
          ...version,
        },
      ],
    },
  };
}

/** The condition of a type on a CRD, if any. */
export function condition(crd: Json, type: string): Json {
  return (crd?.status?.conditions ?? []).find((c: Json) => c.type === type);
}

/** Creates a CRD over HTTP and waits until it is Established and its resource answers a list. */
export async function establish(http: Http, crd: Json): Promise<Json> {
  const res = await http.post(CRDS, crd);
  if (res.status !== 201) throw new Error(`CRD ${crd.metadata.name}: ${res.status} ${res.text}`);
  return waitEstablished(http, crd);
}

/** Waits until a CRD is Established and its storage version's collection can be listed. */
export async function waitEstablished(http: Http, crd: Json): Promise<Json> {
  const name = crd.metadata.name;
  const version = crd.spec.versions.find((v: Json) => v.served)?.name;
  const established = await eventually(
    async () => {
      const r = await http.get(`${CRDS}/${name}`);
      return condition(r.json, 'Established')?.status === 'True' ? r.json : undefined;
    },
    10_000,
    `${name} to be Established`,
  );
  const ns = crd.spec.scope === 'Cluster' ? '' : '/namespaces/default';
  await eventually(
    async () =>
      (await http.get(`/apis/${crd.spec.group}/${version}${ns}/${crd.spec.names.plural}`)).status === 200,
    10_000,
    `${crd.spec.names.plural} to be served`,
  );
  return established;
}

/** Path of a namespaced custom resource collection (or one object in it). */
export function crPath(
  group: string,
  version: string,
  plural: string,
  name?: string,
  ns = 'default',
): string {
  return `/apis/${group}/${version}/namespaces/${ns}/${plural}${name ? `/${name}` : ''}`;
}

/** The `Warning` header texts of a response (the quoted part of `299 - "..."`). */
export function warnings(headers: Record<string, string | string[] | undefined>): string[] {
  const raw = headers.warning;
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : raw.split(/,(?=\s*299 )/);
  return list.map((w) => {
    const m = /^\s*299 - "(.*)"\s*$/.exec(w);
    return m ? JSON.parse(`"${m[1]}"`) : w;
  });
}

export type { ControlPlane };
export { eventually, httpClient };
