import { Deployment } from 'kubeloop/client';
import { controller, controllerOf, setControllerReference, writeStatus } from 'kubeloop/runtime';
import { Foo } from '../api/foo.js';

/** sample-controller's event reasons and messages, so that its users find what they know. */
export const SUCCESS_SYNCED = 'Synced';
export const ERR_RESOURCE_EXISTS = 'ErrResourceExists';
export const MESSAGE_RESOURCE_SYNCED = 'Foo synced successfully';

/** The Deployment a Foo wants: nginx, `spec.replicas` of it, controlled by the Foo. */
export function deploymentFor(foo: Foo): Deployment {
  const name = foo.metadata?.name ?? '';
  const labels = { app: 'nginx', controller: name };
  return setControllerReference(foo, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: foo.spec.deploymentName,
      namespace: foo.metadata?.namespace ?? 'default',
    },
    spec: {
      replicas: foo.spec.replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { containers: [{ name: 'nginx', image: 'nginx:latest' }] },
      },
    },
  });
}

/**
 * Keeps each Foo's Deployment in existence and at the Foo's replicas, and reports the
 * Deployment's available replicas in the Foo's status. A Deployment of that name that the Foo
 * does not control is left alone: taking it over would hijack someone else's workload.
 */
export const fooController = controller(Foo)
  .owns(Deployment)
  .reconcile(async (foo, { client, cache, events, log }) => {
    const namespace = foo.metadata?.namespace ?? 'default';
    const name = foo.spec.deploymentName;
    let deployment = await cache.get(Deployment, name, namespace);
    if (!deployment) {
      deployment = await client.create(deploymentFor(foo));
      log.info({ deployment: name, replicas: foo.spec.replicas }, 'created Deployment');
    }

    if (controllerOf(deployment)?.uid !== foo.metadata?.uid) {
      const message = `Resource "${name}" already exists and is not managed by Foo`;
      events.warning(ERR_RESOURCE_EXISTS, message);
      log.warn({ deployment: name }, message);
      // Nothing of ours changes when the stranger goes away, so look again later.
      return { requeueAfter: 30_000 };
    }

    if (deployment.spec?.replicas !== foo.spec.replicas) {
      const scaled = structuredClone(deployment);
      scaled.spec = { ...scaled.spec, replicas: foo.spec.replicas } as typeof scaled.spec;
      deployment = await client.update(scaled);
      log.info({ deployment: name, replicas: foo.spec.replicas }, 'scaled Deployment');
    }

    const available = deployment.status?.availableReplicas ?? 0;
    const { changed } = await writeStatus(client, foo, { ...foo.status, availableReplicas: available });
    if (changed) log.info({ availableReplicas: available }, 'updated status');
    events.normal(SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED);
    return undefined;
  });
