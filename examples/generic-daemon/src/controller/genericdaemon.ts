import { DaemonSet } from 'kubeloop/client';
import { controller, controllerOf, setControllerReference, writeStatus } from 'kubeloop/runtime';
import { GenericDaemon } from '../api/mydomain/v1beta1/genericdaemon.js';

/** The node label whose value a GenericDaemon's `spec.label` selects. */
export const NODE_LABEL = 'daemon';

/** The label of a GenericDaemon's pods naming it (the DaemonSet's selector, immutable as selectors are). */
export const DAEMON_LABEL = 'mydomain.com/genericdaemon';

/** The name of a GenericDaemon's DaemonSet. */
export const daemonSetName = (gd: GenericDaemon): string => `${gd.metadata?.name ?? ''}-daemon`;

/** The node selector of a GenericDaemon's pods: `daemon=<label>`, or none (every node) without a label. */
export function nodeSelectorOf(gd: GenericDaemon): Record<string, string> | undefined {
  return gd.spec.label ? { [NODE_LABEL]: gd.spec.label } : undefined;
}

/** The DaemonSet a GenericDaemon wants: its image on the selected nodes, controlled by the GenericDaemon. */
export function daemonSetFor(gd: GenericDaemon): DaemonSet {
  const labels = { [DAEMON_LABEL]: gd.metadata?.name ?? '' };
  const nodeSelector = nodeSelectorOf(gd);
  return setControllerReference(gd, {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: daemonSetName(gd), namespace: gd.metadata?.namespace ?? 'default', labels },
    spec: {
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          ...(nodeSelector ? { nodeSelector } : {}),
          containers: [{ name: 'daemon', image: gd.spec.image }],
        },
      },
    },
  });
}

const sameSelector = (a: Record<string, string> | undefined, b: Record<string, string> | undefined) =>
  JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});

/**
 * Keeps each GenericDaemon's DaemonSet in existence, running its image on the nodes its label
 * selects, and reports in `status.installed` how many nodes run it ready. Which nodes those are
 * is the DaemonSet controller's business: relabelling a node moves the daemon without this
 * controller doing anything but keeping the node selector right. A DaemonSet of that name that
 * the GenericDaemon does not control is left alone (taking it over would hijack a stranger's workload).
 */
export const genericDaemonController = controller(GenericDaemon)
  .owns(DaemonSet)
  .reconcile(async (gd, { client, cache, events, log }) => {
    const namespace = gd.metadata?.namespace ?? 'default';
    const name = daemonSetName(gd);
    let ds = await cache.get(DaemonSet, name, namespace);
    if (!ds) {
      ds = await client.create(daemonSetFor(gd));
      log.info({ daemonSet: name, image: gd.spec.image, label: gd.spec.label }, 'created DaemonSet');
      events.normal('Created', `Created DaemonSet ${name}`);
    }
    if (controllerOf(ds)?.uid !== gd.metadata?.uid) {
      const message = `DaemonSet "${name}" already exists and is not managed by GenericDaemon`;
      events.warning('ErrResourceExists', message);
      log.warn({ daemonSet: name }, message);
      // Nothing of ours changes when the stranger goes away: look again later.
      return { requeueAfter: 30_000 };
    }

    const podSpec = ds.spec?.template?.spec;
    const image = podSpec?.containers?.[0]?.image;
    if (image !== gd.spec.image || !sameSelector(podSpec?.nodeSelector, nodeSelectorOf(gd))) {
      const wanted = daemonSetFor(gd);
      const updated = structuredClone(ds);
      // Only the template changes: the selector of a DaemonSet is immutable, and ours never moves.
      updated.spec = { ...updated.spec, template: wanted.spec?.template } as typeof updated.spec;
      ds = await client.update(updated);
      log.info({ daemonSet: name, image: gd.spec.image, label: gd.spec.label }, 'updated DaemonSet');
      events.normal(
        'Updated',
        `Updated DaemonSet ${name}: image ${gd.spec.image}, label ${gd.spec.label ?? '(none)'}`,
      );
    }

    const installed = ds.status?.numberReady ?? 0;
    const { changed } = await writeStatus(client, gd, { ...gd.status, installed });
    if (changed) log.info({ installed }, 'updated status');
    return undefined;
  });
