/**
 * Helpers of the CustomResourceDefinition suite: the seed CRDs (shared with kubeloop/schema's
 * own tests), small CRD builders, and waiting for a CRD to be served.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { type ControlPlane, eventually, httpClient, type Json } from '../../src/testing/index.js';

// Creating CRDs over HTTP and waiting for them are public helpers of the test environment.
export {
  CRDS,
  condition,
  crPath,
  establish,
  type Http,
  type Json,
  simpleCrd,
  waitEstablished,
  warnings,
} from '../../src/testing/index.js';

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

export type { ControlPlane };
export { eventually, httpClient };

/**
 * `crd` (one version, v1) with a v2 that is preferred but needs a conversion webhook that is not
 * there: objects are stored at v1, and every read through v2 fails as kube's does.
 */
export function withUnreachableV2(crd: Json): Json {
  const spec = crd.spec as { versions: Record<string, unknown>[]; conversion?: unknown };
  const [v1] = spec.versions;
  spec.versions = [v1!, { ...v1, name: 'v2', storage: false }];
  spec.conversion = {
    strategy: 'Webhook',
    webhook: {
      clientConfig: { service: { name: 'nowhere', namespace: 'default', path: '/convert' } },
      conversionReviewVersions: ['v1'],
    },
  };
  return crd;
}
