/**
 * The sample operator's webhooks (kubebuilder's `webhook/v1alpha1/foo_webhook.go`, in
 * TypeScript): a defaulter giving a Foo one replica when it asks for none, and a validator
 * refusing a `deploymentName` another Foo of the namespace already owns — a rule the schema
 * cannot state, since it spans objects. Not wired into `main.ts` yet: `kubeloop dev` will start
 * the server and register it (see the `kubeloop/webhook` docs).
 */

import {
  defaulter,
  fieldErrors,
  validator,
  WebhookServer,
  type WebhookServerOptions,
} from 'kubeloop/webhook';
import { Foo } from './api/foo.js';

/** `spec.replicas` defaults to 1 (the schema requires it; mutating webhooks run before the schema check). */
export const fooDefaulter = defaulter(Foo, (foo) => {
  foo.spec.replicas ??= 1;
});

/** A Deployment is owned by one Foo: a second Foo naming it is refused with a field error. */
export const fooValidator = validator(Foo, {
  async create(foo, { client }) {
    return claimedBy(foo, client);
  },
  async update(old, foo, { client }) {
    if (old.spec.deploymentName === foo.spec.deploymentName) return undefined;
    return claimedBy(foo, client);
  },
});

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

/** The operator's webhook server with both webhooks registered. */
export function webhookServer(options: WebhookServerOptions = {}): WebhookServer {
  return new WebhookServer(options).register(fooDefaulter, fooValidator);
}
