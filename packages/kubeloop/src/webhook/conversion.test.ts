import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { defineResource } from '../schema/define/resource.js';
import { answerConversion, conversion, expectRoundTrip } from './conversion.js';

const Foo = defineResource({
  group: 'samplecontroller.example.com',
  kind: 'Foo',
  versions: {
    v1alpha1: { spec: Type.Object({ size: Type.Integer() }) },
    v1beta1: { spec: Type.Object({ count: Type.Integer() }) },
    v1: {
      spec: Type.Object({ replicas: Type.Integer(), paused: Type.Optional(Type.Boolean()) }),
      storage: true,
    },
  },
});

const metadata = { name: 'f', namespace: 'default', uid: 'u' };
const v1 = { apiVersion: 'samplecontroller.example.com/v1', kind: 'Foo', metadata, spec: { replicas: 2 } };
const alpha = {
  apiVersion: 'samplecontroller.example.com/v1alpha1',
  kind: 'Foo',
  metadata,
  spec: { size: 2 },
};
const beta = {
  apiVersion: 'samplecontroller.example.com/v1beta1',
  kind: 'Foo',
  metadata,
  spec: { count: 2 },
};

const conv = conversion(Foo, {
  hub: 'v1',
  spokes: {
    v1alpha1: {
      toHub: (o) => ({ metadata: o.metadata, spec: { replicas: o.spec.size } }),
      fromHub: (h) => ({ metadata: h.metadata, spec: { size: h.spec.replicas } }),
    },
    // metadata left out: the source's is kept.
    v1beta1: {
      toHub: (o) => ({ spec: { replicas: o.spec.count } }),
      fromHub: (h) => ({ spec: { count: h.spec.replicas } }),
    },
  },
});

describe('conversion', () => {
  it('converts hub ↔ spoke and spoke ↔ spoke through the hub, setting apiVersion and kind', () => {
    expect(conv.convert(v1, alpha.apiVersion)).toEqual(alpha);
    expect(conv.convert(alpha, v1.apiVersion)).toEqual(v1);
    expect(conv.convert(alpha, beta.apiVersion)).toEqual(beta);
    expect(conv.convert(beta, alpha.apiVersion)).toEqual(alpha);
  });

  it('refuses a missing spoke or hub at declaration', () => {
    expect(() => conversion(Foo, { hub: 'v1', spokes: {} } as never)).toThrow(
      /v1alpha1 has no toHub\/fromHub/,
    );
    expect(() => conversion(Foo, { hub: 'v9', spokes: {} } as never)).toThrow(
      /the hub v9 is not one of its versions/,
    );
  });

  it('answers a review of a list, or a Failure with controller-runtime’s message and no objects', () => {
    const ok = answerConversion([conv], {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: 'r', desiredAPIVersion: beta.apiVersion, objects: [v1, alpha] },
    });
    expect(ok?.response).toEqual({ uid: 'r', result: { status: 'Success' }, convertedObjects: [beta, beta] });
    const same = answerConversion([conv], {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: 'r', desiredAPIVersion: v1.apiVersion, objects: [v1] },
    });
    expect(same?.response).toEqual({
      uid: 'r',
      result: { status: 'Failure', message: 'conversion is not allowed between same type *v1.Foo' },
    });
    const unknown = answerConversion([conv], {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: 'r', desiredAPIVersion: 'samplecontroller.example.com/v3', objects: [v1] },
    });
    expect(unknown?.response?.result).toEqual({
      status: 'Failure',
      message: 'no kind "Foo" is registered for version "samplecontroller.example.com/v3"',
    });
  });

  it('expectRoundTrip passes for lossless conversions and names the loss otherwise', () => {
    expect(() => expectRoundTrip(Foo, [v1, alpha, beta])).not.toThrow();
    const lossy = { ...v1, spec: { replicas: 2, paused: true } };
    expect(() => expectRoundTrip(Foo, [lossy])).toThrow(
      /Foo f does not round-trip samplecontroller.example.com\/v1 → samplecontroller.example.com\/v1alpha1 → samplecontroller.example.com\/v1/,
    );
  });
});
