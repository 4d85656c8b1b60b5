import { expectRoundTrip } from 'kubeloop/webhook';
import { describe, it } from 'vitest';
import { fooBarSampleV1 } from '../api/test/v1/foobar.js';
import { type FooBar, type FooBarV1, fooBarSample } from '../api/test/v2/foobar.js';
import { fooBarConversion } from './foobar.js';

const v1: FooBarV1 = {
  ...fooBarSampleV1,
  metadata: { name: 'no-type', namespace: 'default' },
  spec: { target: 'a.example.com' },
};
const v2: FooBar = {
  ...fooBarSample,
  metadata: { name: 'with-status', namespace: 'default' },
  status: { observedGeneration: 3, task: 'with-status' },
};

// The samples of config/samples are what each test starts from.
describe('the FooBar webhooks', () => {
  it('converts a FooBar to each spoke and back, losing nothing', () => {
    expectRoundTrip(fooBarConversion, [fooBarSample, fooBarSampleV1, v1, v2]);
  });
  // +kubeloop:scaffold:tests
});
