/**
 * Several served versions of one CRD: the storage version, conversion strategy `None`
 * (apiVersion rewritten, schemas applied per version), deprecation warnings, `Webhook`
 * conversion whose webhook cannot be reached (conversion-webhook.test.ts has the rest), and
 * `status.storedVersions`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { objectKey } from '../../src/storage/store.js';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import {
  CRDS,
  crPath,
  establish,
  eventually,
  type Http,
  httpClient,
  type Json,
  warnings,
} from './support.js';

const G = 'versions.example.com';
const objectSchema = (props: Json): Json => ({
  openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: props } } },
});
const shipsCrd = (): Json => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `ships.${G}` },
  spec: {
    group: G,
    scope: 'Namespaced',
    names: { plural: 'ships', kind: 'Ship' },
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: false,
        deprecated: true,
        schema: objectSchema({ crew: { type: 'integer' }, legacy: { type: 'string' } }),
      },
      {
        name: 'v1beta1',
        served: true,
        storage: false,
        deprecated: true,
        deprecationWarning: 'ships v1beta1 sinks soon; use v1',
        schema: objectSchema({ crew: { type: 'integer', default: 3 } }),
      },
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: objectSchema({ crew: { type: 'integer', maximum: 100 }, flag: { type: 'string' } }),
        additionalPrinterColumns: [{ name: 'Crew', type: 'integer', jsonPath: '.spec.crew' }],
      },
    ],
  },
});
const ship = (version: string, name: string, spec: Json) => ({
  apiVersion: `${G}/${version}`,
  kind: 'Ship',
  metadata: { name },
  spec,
});
const S = (version: string, name?: string) => crPath(G, version, 'ships', name);

let env: KubectlEnv;
let http: Http;
beforeAll(async () => {
  env = await startKubectlEnv();
  http = httpClient(env.cp);
  await establish(http, shipsCrd());
});
afterAll(async () => {
  http?.close();
  await env?.stop();
});

describe('conversion strategy None', () => {
  test('an object written through one version is stored at the storage version and read through any', async () => {
    const created = await http.post(S('v1beta1'), ship('v1beta1', 'enterprise', {}));
    expect(created.status, created.text).toBe(201);
    // Defaults of the version written through apply; the answer is in that version.
    expect(created.json).toMatchObject({ apiVersion: `${G}/v1beta1`, spec: { crew: 3 } });

    const stored = env.cp.store.get(objectKey(G, 'ships', 'default', 'enterprise'));
    expect(stored?.object.apiVersion).toBe(`${G}/v1`);

    for (const v of ['v1alpha1', 'v1beta1', 'v1']) {
      const got = await http.get(S(v, 'enterprise'));
      expect(got.json.apiVersion, v).toBe(`${G}/${v}`);
      expect(got.json.spec.crew).toBe(3);
      const list = (await http.get(S(v))).json;
      expect(list.apiVersion).toBe(`${G}/${v}`);
      expect(list.items.map((i: Json) => i.apiVersion)).toEqual([`${G}/${v}`]);
    }
    // Each version validates with its own schema.
    const big = await http.patch(
      S('v1', 'enterprise'),
      { spec: { crew: 500 } },
      'application/merge-patch+json',
    );
    expect(big.status).toBe(422);
    expect(big.json.message).toBe(
      `Ship.${G} "enterprise" is invalid: spec.crew: Invalid value: 500: spec.crew in body should be less than or equal to 100`,
    );
    const viaBeta = await http.patch(
      S('v1beta1', 'enterprise'),
      { spec: { crew: 500 } },
      'application/merge-patch+json',
    );
    expect(viaBeta.status, viaBeta.text).toBe(200);
  });

  test('fields the storage version does not know are lost on the way to storage', async () => {
    const r = await http.post(S('v1alpha1'), ship('v1alpha1', 'voyager', { crew: 1, legacy: 'yes' }));
    expect(r.status, r.text).toBe(201);
    expect((await http.get(S('v1alpha1', 'voyager'))).json.spec).toEqual({ crew: 1 });
  });

  test('a watch through a version sees that version', async () => {
    const w = http.watch(`${S('v1alpha1')}?watch=true&fieldSelector=metadata.name%3Ddefiant`);
    try {
      await http.post(S('v1'), ship('v1', 'defiant', { crew: 9 }));
      await eventually(() => w.events.length >= 1);
      expect(w.events[0]).toMatchObject({
        type: 'ADDED',
        object: { apiVersion: `${G}/v1alpha1`, spec: { crew: 9 } },
      });
    } finally {
      w.close();
    }
  });
});

describe('deprecated versions', () => {
  test('every request through a deprecated version carries a Warning', async () => {
    const custom = await http.get(S('v1beta1'));
    expect(warnings(custom.headers)).toEqual(['ships v1beta1 sinks soon; use v1']);
    const dflt = await http.get(S('v1alpha1', 'enterprise'));
    expect(warnings(dflt.headers)).toEqual([`${G}/v1alpha1 Ship is deprecated`]);
    const created = await http.post(S('v1alpha1'), ship('v1alpha1', 'reliant', {}));
    expect(warnings(created.headers)).toEqual([`${G}/v1alpha1 Ship is deprecated`]);
    expect(warnings((await http.get(S('v1'))).headers)).toEqual([]);
  });

  test('kubectl prints the warning', async () => {
    const r = await env.run(['get', `ships.v1beta1.${G}`, 'enterprise', '-o', 'name']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`ship.${G}/enterprise\n`);
    expect(r.stderr).toBe('Warning: ships v1beta1 sinks soon; use v1\n');
  });
});

describe('storage version changes and storedVersions', () => {
  test('a new storage version is recorded in status.storedVersions; new writes use the new schema', async () => {
    const before = (await http.get(`${CRDS}/ships.${G}`)).json;
    expect(before.status.storedVersions).toEqual(['v1']);
    const next = structuredClone(before);
    for (const v of next.spec.versions) v.storage = false;
    next.spec.versions.push({
      name: 'v2',
      served: true,
      storage: true,
      schema: objectSchema({
        crew: { type: 'integer', minimum: 1 },
        captain: { type: 'string', default: 'kirk' },
      }),
    });
    const put = await http.put(`${CRDS}/ships.${G}`, next);
    expect(put.status, put.text).toBe(200);
    expect(put.json.status.storedVersions).toEqual(['v1', 'v2']);
    await eventually(async () => (await http.get(S('v2'))).status === 200, 10_000, 'v2 to be served');

    const created = await http.post(S('v2'), ship('v2', 'excelsior', { crew: 0 }));
    expect(created.status).toBe(422);
    expect(created.json.message).toBe(
      `Ship.${G} "excelsior" is invalid: spec.crew: Invalid value: 0: spec.crew in body should be greater than or equal to 1`,
    );
    const ok = await http.post(S('v2'), ship('v2', 'excelsior', { crew: 2 }));
    expect(ok.json.spec).toEqual({ crew: 2, captain: 'kirk' });
    // An object stored at v1 is decoded with v1's schema (no v2 defaults), then converted.
    expect((await http.get(S('v2', 'enterprise'))).json.spec).toEqual({ crew: 500 });
    // Once written again it is stored at v2, with v2's defaults.
    const rewritten = await http.patch(
      S('v2', 'enterprise'),
      { spec: { crew: 5 } },
      'application/merge-patch+json',
    );
    expect(rewritten.json.spec).toEqual({ crew: 5, captain: 'kirk' });
    expect(env.cp.store.get(objectKey(G, 'ships', 'default', 'enterprise'))?.object.apiVersion).toBe(
      `${G}/v2`,
    );
    // kubectl now prefers v2 (once its discovery cache is refreshed, as after any CRD change).
    await env.ok(['api-resources']);
    expect(JSON.parse(await env.ok(['get', 'ship', 'excelsior', '-o', 'json'])).apiVersion).toBe(`${G}/v2`);
  });
});

describe('conversion strategy Webhook', () => {
  const W = 'webhooks.example.com';
  test('a webhook that cannot be reached fails reads and writes through another version (500); the storage version works', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `hooks.${W}` },
      spec: {
        group: W,
        scope: 'Namespaced',
        names: { plural: 'hooks', kind: 'Hook' },
        conversion: {
          strategy: 'Webhook',
          webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://127.0.0.1:9/convert' } },
        },
        versions: [
          { name: 'v1', served: true, storage: true, schema: objectSchema({ a: { type: 'string' } }) },
          { name: 'v2', served: true, storage: false, schema: objectSchema({ a: { type: 'string' } }) },
        ],
      },
    };
    await establish(http, crd);
    const ok = await http.post(crPath(W, 'v1', 'hooks'), {
      apiVersion: `${W}/v1`,
      kind: 'Hook',
      metadata: { name: 'h' },
      spec: { a: 'x' },
    });
    expect(ok.status, ok.text).toBe(201);
    const read = await http.get(crPath(W, 'v2', 'hooks', 'h'));
    expect(read.status).toBe(500);
    // An error that is not a Status: kube-apiserver answers it without a reason.
    expect(read.json.reason).toBeUndefined();
    expect(read.json.message).toBe(
      `conversion webhook for ${W}/v1, Kind=Hook failed: Post "https://127.0.0.1:9/convert?timeout=30s": dial tcp 127.0.0.1:9: connect: connection refused`,
    );
    const write = await http.post(crPath(W, 'v2', 'hooks'), {
      apiVersion: `${W}/v2`,
      kind: 'Hook',
      metadata: { name: 'h2' },
      spec: {},
    });
    expect(write.status).toBe(500);
    expect(write.json.message).toContain('conversion webhook for');
    expect((await http.get(crPath(W, 'v1', 'hooks', 'h2'))).status).toBe(404);
  });
});
