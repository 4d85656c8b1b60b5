import type { KubeObject } from 'kubeloop/client';
import { type CrdSource, withConversionWebhook } from 'kubeloop/manifests';
import { fooBarSampleV1 } from './api/test/v1/foobar.js';
import { FooBarTask } from './api/test/v1/foobartask.js';
import { FooBar, fooBarSample } from './api/test/v2/foobar.js';
import { NAME } from './manager.js';
// +kubeloop:scaffold:imports

/**
 * The kinds the project defines, each with the examples `config/samples` gets. FooBar is one
 * resource of two versions (one CRD): `kubeloop create api --version v2` scaffolded a second
 * declaration, merged here into the multi-version one of src/api/test/v2/foobar.ts. FooBarTask,
 * internal, gets no sample: users do not write tasks.
 */
export const resources: Array<{ resource: CrdSource; sample?: KubeObject; samples?: KubeObject[] }> = [
  { resource: FooBar, samples: [fooBarSampleV1, fooBarSample] },
  { resource: FooBarTask },
  // +kubeloop:scaffold:resources
];

/**
 * The CRDs as deployed: FooBar's names the conversion webhook (the webhook Service of the
 * operator's namespace, its CA injected by cert-manager), as kubebuilder's
 * `webhook_in_foobars.yaml` patch does. Local runs (`kubeloop dev`, the tests) point it at
 * the local webhook server instead.
 */
export function crdSources(): CrdSource[] {
  return resources.map(({ resource }) =>
    resource === FooBar
      ? {
          crd: () =>
            withConversionWebhook(FooBar.crd(), {
              target: { service: { name: `${NAME}-webhook-service`, namespace: `${NAME}-system` } },
              injectCaFrom: `${NAME}-system/${NAME}-serving-cert`,
            }),
        }
      : resource,
  );
}
