/**
 * The sample operator's webhooks (kubebuilder's `webhook/v1alpha1/foo_webhook.go`, in
 * TypeScript): a defaulter giving a Foo one replica when it asks for none, and a validator
 * refusing a `deploymentName` another Foo of the namespace already owns — a rule the schema
 * cannot state, since it spans objects — and warning about a Foo of more than 5 replicas.
 * main.ts serves them with Foo's conversion; `kubeloop dev` registers them with a local CA.
 */

import {
  defaulter,
  fieldErrors,
  validator,
  WebhookServer,
  type WebhookServerOptions,
} from 'kubeloop/webhook';
import { Foo } from './api/foo.js';
import { fooConversion } from './conversion.js';

/** `spec.replicas` defaults to 1 (the schema requires it; mutating webhooks run before the schema check). */
export const fooDefaulter = defaulter(Foo, (foo) => {
  foo.spec.replicas ??= 1;
});

/** A Deployment is owned by one Foo: a second Foo naming it is refused with a field error. */
export const fooValidator = validator(Foo, {
  async create(foo, { client }) {
    return (await claimedBy(foo, client)) ?? manyReplicas(foo);
  },
  async update(old, foo, { client }) {
    if (old.spec.deploymentName === foo.spec.deploymentName) return manyReplicas(foo);
    return (await claimedBy(foo, client)) ?? manyReplicas(foo);
  },
});

/** Allowed, with a warning kubectl prints: the sample's nodes are small. */
function manyReplicas(foo: Foo) {
  if (foo.spec.replicas <= 5) return undefined;
  return {
    warnings: [`spec.replicas: ${foo.spec.replicas} pods of nginx for one Foo; more than 5 is unusual`],
  };
}

async function claimedBy(foo: Foo, client: import('kubeloop/client').Client | undefined) {
  if (!client) return undefined;
  const ns = foo.metadata.namespace ?? 'default';
  const others = await client.api(Foo, ns).list();
  const owner = others.items.find(
    (o) => o.metadata.name !== foo.metadata.name && o.spec.deploymentName === foo.spec.deploymentName,
  );
  if (!owner) return undefined;
  return {
    errors: [fieldErrors.duplicate('spec.deploymentName', foo.spec.deploymentName)].map((e) => ({
      ...e,
      message: `${e.message}: already the Deployment of Foo "${owner.metadata.name}"`,
    })),
  };
}

/** Every webhook of the operator: served by main.ts, declared in the manifests by src/manifests.ts. */
export const webhooks = [fooDefaulter, fooValidator, fooConversion];

/** The operator's webhook server with every webhook registered. */
export function webhookServer(options: WebhookServerOptions = {}): WebhookServer {
  return new WebhookServer(options).register(...webhooks);
}
