import type { KubeObject } from 'kubeloop/client';
import type { CrdSource } from 'kubeloop/manifests';
import { fooBarSampleV1 } from './api/test/v1/foobar.js';
import { FooBarTask } from './api/test/v1/foobartask.js';
import { FooBar, fooBarSample } from './api/test/v2/foobar.js';
// +kubeloop:scaffold:imports

/**
 * The kinds the project defines, each with the examples `config/samples` gets. FooBar is one
 * resource of two versions (one CRD, declared in src/api/test/v2/foobar.ts), with a sample at
 * each. FooBarTask, internal, gets no sample: users do not write tasks.
 */
export const resources: Array<{ resource: CrdSource; sample?: KubeObject; samples?: KubeObject[] }> = [
  { resource: FooBar, samples: [fooBarSampleV1, fooBarSample] },
  { resource: FooBarTask },
  // +kubeloop:scaffold:resources
];
