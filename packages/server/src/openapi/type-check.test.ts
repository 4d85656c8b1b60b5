import { describe, expect, it } from 'vitest';
import { decodeTypeError, normalizeNulls } from './type-check.js';

const CM = 'io.k8s.api.core.v1.ConfigMap';
const DEPLOY = 'io.k8s.api.apps.v1.Deployment';
const POD = 'io.k8s.api.core.v1.Pod';
const SECRET = 'io.k8s.api.core.v1.Secret';

describe('decodeTypeError', () => {
  it('accepts well-typed objects, nulls and unknown fields', () => {
    expect(
      decodeTypeError({ metadata: { name: 'a', labels: { x: 'y' } }, data: { k: 'v' } }, CM),
    ).toBeUndefined();
    expect(decodeTypeError({ metadata: null, data: null, binaryData: { b: null } }, CM)).toBeUndefined();
    expect(decodeTypeError({ whatever: [1, { x: true }], data: { k: 'v' } }, CM)).toBeUndefined();
  });

  it('names the innermost struct, the JSON path and the Go type, as encoding/json does', () => {
    expect(decodeTypeError({ data: ['x'] }, CM)).toBe(
      'json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string',
    );
    expect(decodeTypeError({ data: { k: 1 } }, CM)).toBe(
      'json: cannot unmarshal number into Go struct field ConfigMap.data of type string',
    );
    expect(decodeTypeError({ metadata: { labels: 5 } }, CM)).toBe(
      'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type map[string]string',
    );
    expect(decodeTypeError({ spec: { replicas: 'three' } }, DEPLOY)).toBe(
      'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32',
    );
    // After a nested struct decoded well, a sibling's error names the outer struct and path.
    expect(decodeTypeError({ metadata: { name: 'a', labels: { x: 'y' } }, data: 5 }, CM)).toBe(
      'json: cannot unmarshal number into Go struct field ConfigMap.data of type map[string]string',
    );
    expect(decodeTypeError({ spec: { template: { metadata: { name: 'a' } }, replicas: 'x' } }, DEPLOY)).toBe(
      'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32',
    );
    expect(decodeTypeError({ spec: 'x' }, DEPLOY)).toBe(
      'json: cannot unmarshal string into Go struct field Deployment.spec of type v1.DeploymentSpec',
    );
    expect(
      decodeTypeError({ spec: { containers: [{ name: 'a', ports: [{ containerPort: 1.5 }] }] } }, POD),
    ).toBe(
      'json: cannot unmarshal number 1.5 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32',
    );
    expect(decodeTypeError({ spec: { containers: 5 } }, POD)).toBe(
      'json: cannot unmarshal number into Go struct field PodSpec.spec.containers of type []v1.Container',
    );
    expect(decodeTypeError({ spec: { hostNetwork: 'yes' } }, POD)).toBe(
      'json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool',
    );
    expect(decodeTypeError({ spec: { replicas: 2 ** 31 } }, DEPLOY)).toBe(
      'json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32',
    );
  });

  it('reports the first mismatch in document order', () => {
    expect(decodeTypeError({ data: 1, binaryData: 2 }, CM)).toMatch(/ConfigMap\.data /);
    expect(decodeTypeError({ binaryData: 2, data: 1 }, CM)).toMatch(/ConfigMap\.binaryData /);
  });

  it('uses the messages of the custom decoders', () => {
    expect(decodeTypeError({ metadata: { creationTimestamp: 5 } }, CM)).toBe(
      'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string',
    );
    expect(decodeTypeError({ metadata: { creationTimestamp: 'yesterday' } }, CM)).toMatch(
      /^parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse/,
    );
    const resources = (v: unknown) => ({
      spec: { containers: [{ name: 'a', resources: { limits: { cpu: v } } }] },
    });
    expect(decodeTypeError(resources('100m'), POD)).toBeUndefined();
    expect(decodeTypeError(resources(2), POD)).toBeUndefined();
    expect(decodeTypeError(resources('lots'), POD)).toBe(
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    );
    expect(decodeTypeError(resources('1Zi'), POD)).toBe("unable to parse quantity's suffix");
    const probe = (port: unknown) => ({
      spec: { containers: [{ name: 'a', livenessProbe: { httpGet: { port } } }] },
    });
    expect(decodeTypeError(probe(8080), POD)).toBeUndefined();
    expect(decodeTypeError(probe('http'), POD)).toBeUndefined();
    expect(decodeTypeError(probe({}), POD)).toBe(
      'json: cannot unmarshal object into Go struct field HTTPGetAction.spec.containers.livenessProbe.httpGet.port of type int32',
    );
  });

  it('checks base64 of byte fields', () => {
    expect(decodeTypeError({ data: { k: 'aGVsbG8=' } }, SECRET)).toBeUndefined();
    expect(decodeTypeError({ data: { k: 'not base64!' } }, SECRET)).toBe(
      'illegal base64 data at input byte 3',
    );
    expect(decodeTypeError({ data: { k: 5 } }, SECRET)).toBe(
      'json: cannot unmarshal number into Go struct field Secret.data of type []uint8',
    );
  });

  it('refuses numbers JSON cannot carry, even in raw fields', () => {
    expect(decodeTypeError({ spec: { replicas: Number.POSITIVE_INFINITY } }, DEPLOY)).toMatch(
      /number Infinity/,
    );
  });
});

describe('normalizeNulls', () => {
  it('drops null fields and zeroes null items and map values, as a Go round trip does', () => {
    const pod: Record<string, unknown> = {
      metadata: { name: 'p', labels: null, annotations: { a: null }, finalizers: [null] },
      spec: { containers: [null, { name: 'c', image: 'i', args: null }], nodeName: null },
      status: null,
    };
    normalizeNulls(pod, POD);
    expect(pod).toEqual({
      metadata: { name: 'p', annotations: { a: '' }, finalizers: [''] },
      spec: { containers: [{}, { name: 'c', image: 'i' }] },
    });
  });

  it('leaves unknown fields and raw values alone', () => {
    const crd: Record<string, unknown> = {
      spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: { default: null } } }] },
      unknown: null,
    };
    normalizeNulls(crd, 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition');
    expect(crd).toEqual({
      spec: { versions: [{ name: 'v1', schema: { openAPIV3Schema: {} } }] },
      unknown: null,
    });
  });
});
