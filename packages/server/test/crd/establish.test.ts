/**
 * Establishing CRDs: conditions, accepted names and name conflicts within a group, discovery
 * (short names, categories, subresources, preferred version), API approval of protected groups,
 * and kubectl resolving short names and the `all` category.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';
import {
  CRDS,
  condition,
  crPath,
  establish,
  eventually,
  type Http,
  httpClient,
  type Json,
  seedCrd,
  simpleCrd,
  waitEstablished,
} from './support.js';

let env: KubectlEnv;
let http: Http;
beforeAll(async () => {
  env = await startKubectlEnv();
  http = httpClient(env.cp);
});
afterAll(async () => {
  http?.close();
  await env?.stop();
});

const crdNamed = async (name: string): Promise<Json> => (await http.get(`${CRDS}/${name}`)).json;

describe('establishing', () => {
  test('a new CRD gets NamesAccepted and Established, its accepted names and stored version', async () => {
    const crd = await establish(http, seedCrd('etcdcluster'));
    const names = crd.spec.names;
    expect(crd.status.acceptedNames).toEqual(names);
    expect(names).toEqual({
      plural: 'etcdclusters',
      singular: 'etcdcluster',
      kind: 'EtcdCluster',
      listKind: 'EtcdClusterList',
      shortNames: ['etcd'],
      categories: ['all'],
    });
    expect(condition(crd, 'NamesAccepted')).toMatchObject({
      status: 'True',
      reason: 'NoConflicts',
      message: 'no conflicts found',
    });
    expect(condition(crd, 'Established')).toMatchObject({
      status: 'True',
      reason: 'InitialNamesAccepted',
      message: 'the initial names have been accepted',
    });
    expect(condition(crd, 'Established').lastTransitionTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(crd.status.storedVersions).toEqual(['v1beta2']);
    // Not a protected group: no approval condition.
    expect(condition(crd, 'KubernetesAPIApprovalPolicyConformant')).toBeUndefined();
  });

  test('discovery lists the resource with short names, categories and subresources', async () => {
    const groups = (await http.get('/apis')).json;
    const group = groups.groups.find((g: Json) => g.name === 'etcd.database.coreos.com');
    expect(group).toEqual({
      name: 'etcd.database.coreos.com',
      versions: [{ groupVersion: 'etcd.database.coreos.com/v1beta2', version: 'v1beta2' }],
      preferredVersion: { groupVersion: 'etcd.database.coreos.com/v1beta2', version: 'v1beta2' },
    });
    const list = (await http.get('/apis/etcd.database.coreos.com/v1beta2')).json;
    expect(list.groupVersion).toBe('etcd.database.coreos.com/v1beta2');
    const byName = new Map(list.resources.map((r: Json) => [r.name, r]));
    expect(byName.get('etcdclusters')).toMatchObject({
      name: 'etcdclusters',
      singularName: 'etcdcluster',
      namespaced: true,
      kind: 'EtcdCluster',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['etcd'],
      categories: ['all'],
    });
    expect(byName.get('etcdclusters/status')).toMatchObject({
      kind: 'EtcdCluster',
      verbs: ['get', 'patch', 'update'],
    });
    expect(byName.get('etcdclusters/scale')).toMatchObject({
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
  });

  test('kubectl resolves the short name and the `all` category', async () => {
    await env.ok(['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'etcd.database.coreos.com/v1beta2',
        kind: 'EtcdCluster',
        metadata: { name: 'main', namespace: 'default' },
        spec: { size: 3 },
      }),
    });
    // The CRD's own columns replace the default Age column.
    expect(await env.ok(['get', 'etcd'])).toMatch(/^NAME\s+SIZE\s+VERSION\nmain\s+3\s+3\.5\.0\n$/);
    expect(await env.ok(['get', 'etcdcluster', 'main', '-o', 'name'])).toBe(
      'etcdcluster.etcd.database.coreos.com/main\n',
    );
    const all = await env.ok(['get', 'all']);
    expect(all).toContain('service/kubernetes');
    expect(all).toMatch(/^etcdcluster\.etcd\.database\.coreos\.com\/main\s+3\s+3\.5\.0\s+/m);
    // A CRD outside the `all` category is not part of `kubectl get all`.
    await establish(http, seedCrd('foobar'));
    await env.ok(['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'example.com/v1',
        kind: 'FooBar',
        metadata: { name: 'fb1', namespace: 'default' },
        spec: { target: 'x' },
      }),
    });
    expect(await env.ok(['get', 'fb'])).toMatch(/^NAME\s+TARGET\s+AGE\nfb1\s+x\s+\d+s\n$/);
    expect(await env.ok(['get', 'all'])).not.toContain('fb1');
  });

  test('a custom category groups resources for kubectl', async () => {
    await establish(
      http,
      simpleCrd('pumps', 'Pump', 'kitchen.example.com', {}, { categories: ['appliances'] }),
    );
    await establish(
      http,
      simpleCrd('ovens', 'Oven', 'kitchen.example.com', {}, { categories: ['appliances'] }),
    );
    for (const [plural, kind] of [
      ['pumps', 'Pump'],
      ['ovens', 'Oven'],
    ] as const) {
      const r = await http.post(crPath('kitchen.example.com', 'v1', plural), {
        apiVersion: 'kitchen.example.com/v1',
        kind,
        metadata: { name: `my-${plural}` },
        spec: {},
      });
      expect(r.status, r.text).toBe(201);
    }
    // kubectl expands categories from its discovery cache, filled before these CRDs existed.
    await env.ok(['api-resources']);
    const out = await env.ok(['get', 'appliances', '-o', 'name']);
    expect(out.split('\n').filter(Boolean).sort()).toEqual([
      'oven.kitchen.example.com/my-ovens',
      'pump.kitchen.example.com/my-pumps',
    ]);
  });
});

describe('name conflicts within a group', () => {
  const G = 'conflict.example.com';
  test('a second CRD wanting a taken short name, kind or singular is not accepted and not served', async () => {
    await establish(http, simpleCrd('alphas', 'Alpha', G, {}, { shortNames: ['al'] }));

    // The short name `al` is taken.
    expect(
      (await http.post(CRDS, simpleCrd('betas', 'Beta', G, {}, { shortNames: ['al', 'be'] }))).status,
    ).toBe(201);
    const beta = await eventually(async () => {
      const c = await crdNamed(`betas.${G}`);
      return condition(c, 'NamesAccepted') ? c : undefined;
    });
    expect(condition(beta, 'NamesAccepted')).toMatchObject({
      status: 'False',
      reason: 'ShortNamesConflict',
      message: '"al" is already in use',
    });
    expect(condition(beta, 'Established')).toMatchObject({
      status: 'False',
      reason: 'NotAccepted',
      message: 'not all names are accepted',
    });
    // The names that are free are accepted; the conflicting short names are not.
    expect(beta.status.acceptedNames).toEqual({
      plural: 'betas',
      singular: 'beta',
      kind: 'Beta',
      listKind: 'BetaList',
    });
    expect((await http.get(crPath(G, 'v1', 'betas'))).status).toBe(404);
    const discovered = (await http.get(`/apis/${G}/v1`)).json.resources.map((r: Json) => r.name);
    expect(discovered).toEqual(['alphas']);

    // The kind (and with it the list kind) is taken: the last conflict found is reported.
    expect((await http.post(CRDS, simpleCrd('gammas', 'Alpha', G))).status).toBe(201);
    const gamma = await eventually(async () => {
      const c = await crdNamed(`gammas.${G}`);
      return condition(c, 'NamesAccepted') ? c : undefined;
    });
    expect(condition(gamma, 'NamesAccepted')).toMatchObject({
      status: 'False',
      reason: 'ListKindConflict',
      message: '"AlphaList" is already in use',
    });
    // Its singular (`alpha`, from the kind) is taken too; only the plural is accepted.
    expect(gamma.status.acceptedNames).toEqual({ plural: 'gammas', kind: '' });

    // The singular of one is the plural of another.
    expect((await http.post(CRDS, simpleCrd('deltas', 'Delta', G, {}, { singular: 'alphas' }))).status).toBe(
      201,
    );
    const delta = await eventually(async () => {
      const c = await crdNamed(`deltas.${G}`);
      return condition(c, 'NamesAccepted') ? c : undefined;
    });
    expect(condition(delta, 'NamesAccepted')).toMatchObject({
      status: 'False',
      reason: 'SingularConflict',
      message: '"alphas" is already in use',
    });

    // The same names in another group are no conflict.
    await establish(http, simpleCrd('betas', 'Beta', 'other.example.com', {}, { shortNames: ['al'] }));
  });

  test('once the holder of a name is deleted, the waiting CRD is accepted and served', async () => {
    const del = await http.delete(`${CRDS}/alphas.${G}`);
    expect(del.status).toBe(200);
    const beta = await eventually(async () => {
      const c = await crdNamed(`betas.${G}`);
      return condition(c, 'Established')?.status === 'True' ? c : undefined;
    });
    expect(condition(beta, 'NamesAccepted')).toMatchObject({ status: 'True', reason: 'NoConflicts' });
    expect(beta.status.acceptedNames.shortNames).toEqual(['al', 'be']);
    await waitEstablished(http, beta);
    expect((await http.get(crPath(G, 'v1', 'betas'))).status).toBe(200);
  });

  test('updating an established CRD to a taken name keeps serving its accepted names', async () => {
    await establish(http, simpleCrd('epsilons', 'Epsilon', G, {}, { shortNames: ['ep'] }));
    const current = await crdNamed(`epsilons.${G}`);
    current.spec.names.shortNames = ['ep', 'be'];
    const put = await http.put(`${CRDS}/epsilons.${G}`, current);
    expect(put.status, put.text).toBe(200);
    const after = await eventually(async () => {
      const c = await crdNamed(`epsilons.${G}`);
      return condition(c, 'NamesAccepted')?.status === 'False' ? c : undefined;
    });
    expect(condition(after, 'NamesAccepted')).toMatchObject({
      reason: 'ShortNamesConflict',
      message: '"be" is already in use',
    });
    expect(condition(after, 'Established')?.status).toBe('True');
    expect(after.status.acceptedNames.shortNames).toEqual(['ep']);
    const res = (await http.get(`/apis/${G}/v1`)).json.resources.find((r: Json) => r.name === 'epsilons');
    expect(res.shortNames).toEqual(['ep']);
  });
});

describe('API approval of protected groups', () => {
  test.each<[string, string | undefined, Json]>([
    [
      'approved by URL',
      'https://github.com/kubernetes/kubernetes/pull/78458',
      {
        status: 'True',
        reason: 'ApprovedAnnotation',
        message: 'approved in https://github.com/kubernetes/kubernetes/pull/78458',
      },
    ],
    [
      'explicitly unapproved',
      'unapproved, experimental-only',
      {
        status: 'False',
        reason: 'UnapprovedAnnotation',
        message: 'not approved: "unapproved, experimental-only"',
      },
    ],
  ])('%s', async (what, annotation, expected) => {
    const plural = what.startsWith('approved') ? 'approveds' : 'unapproveds';
    const crd = simpleCrd(plural, plural === 'approveds' ? 'Approved' : 'Unapproved', 'things.k8s.io');
    crd.metadata.annotations = { 'api-approved.kubernetes.io': annotation };
    const established = await establish(http, crd);
    const c = await eventually(async () => {
      const x = await crdNamed(established.metadata.name);
      return condition(x, 'KubernetesAPIApprovalPolicyConformant');
    });
    expect(c).toMatchObject({ type: 'KubernetesAPIApprovalPolicyConformant', ...expected });
  });
});

describe('versions in discovery', () => {
  test('the preferred version is the highest kube-aware version served, whatever the order in the CRD', async () => {
    const crd = simpleCrd('rockets', 'Rocket', 'space.example.com');
    const v1 = crd.spec.versions[0];
    crd.spec.versions = [
      { ...v1, name: 'v1alpha1', storage: true },
      { ...v1, name: 'v1', storage: false },
      { ...v1, name: 'v1beta1', storage: false },
      { ...v1, name: 'v2alpha1', storage: false, served: false },
    ];
    await establish(http, crd);
    const group = (await http.get('/apis/space.example.com')).json;
    expect(group.versions.map((v: Json) => v.version)).toEqual(['v1', 'v1beta1', 'v1alpha1']);
    expect(group.preferredVersion.version).toBe('v1');
    // An unserved version is not served.
    expect((await http.get('/apis/space.example.com/v2alpha1/namespaces/default/rockets')).status).toBe(404);
    // kubectl uses the preferred version.
    await http.post(crPath('space.example.com', 'v1alpha1', 'rockets'), {
      apiVersion: 'space.example.com/v1alpha1',
      kind: 'Rocket',
      metadata: { name: 'r1' },
      spec: {},
    });
    expect(JSON.parse(await env.ok(['get', 'rocket', 'r1', '-o', 'json'])).apiVersion).toBe(
      'space.example.com/v1',
    );
  });
});
