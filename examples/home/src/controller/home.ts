import { ConfigMap } from 'kubeloop/client';
import { controller, controllerOf, setControllerReference, writeStatus } from 'kubeloop/runtime';
import { Home } from '../api/ajd/v1/home.js';

/** The name of a Home's ConfigMap. */
export const configMapName = (home: Home): string => `${home.metadata?.name ?? ''}-rooms`;

/**
 * The data of a Home's ConfigMap: one key per room (`floor=<n> area=<m²>`), and the Home's
 * owner and floors, for whatever reads the Home's plan without reading Homes (a pod mounting it).
 */
export function roomsData(home: Home): Record<string, string> {
  const data: Record<string, string> = {};
  for (const room of home.spec.rooms)
    data[room.name] = `floor=${room.floor ?? 0}${room.area !== undefined ? ` area=${room.area}` : ''}`;
  if (home.spec.owner !== undefined) data['.owner'] = home.spec.owner;
  if (home.spec.floors !== undefined) data['.floors'] = String(home.spec.floors);
  return data;
}

const sameData = (a: Record<string, string> | undefined, b: Record<string, string>) =>
  JSON.stringify(Object.entries(a ?? {}).sort()) === JSON.stringify(Object.entries(b).sort());

/**
 * Keeps each Home's ConfigMap of rooms (`<home>-rooms`, owned by the Home: deleted with it) in
 * line with its rooms, and reports their count and total area in the status. What reaches it
 * is already defaulted and validated by the Home's webhooks: every room has a floor, names are
 * unique, and an owner is set.
 */
export const homeController = controller(Home)
  .owns(ConfigMap)
  .reconcile(async (home, { client, cache, events, log }) => {
    const namespace = home.metadata?.namespace ?? 'default';
    const name = configMapName(home);
    const data = roomsData(home);
    let cm = await cache.get(ConfigMap, name, namespace);
    if (!cm) {
      cm = await client.create(
        setControllerReference<ConfigMap>(home, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, namespace, labels: { 'ajd.my.domain/home': home.metadata?.name ?? '' } },
          data,
        }),
      );
      events.normal('Created', `Created ConfigMap ${name} of ${home.spec.rooms.length} rooms`);
    } else if (controllerOf(cm)?.uid !== home.metadata?.uid) {
      const message = `ConfigMap "${name}" already exists and is not managed by this Home`;
      events.warning('ErrResourceExists', message);
      // Nothing of ours changes when the stranger goes away: look again later.
      return { requeueAfter: 30_000 };
    } else if (!sameData(cm.data, data)) {
      cm = await client.update({ ...cm, data });
      events.normal('Updated', `Updated ConfigMap ${name}: ${home.spec.rooms.length} rooms`);
    }
    const area = home.spec.rooms.reduce((sum, r) => sum + (r.area ?? 0), 0);
    const { changed } = await writeStatus(client, home, {
      observedGeneration: home.metadata?.generation,
      rooms: home.spec.rooms.length,
      area,
      configMap: name,
    });
    if (changed) log.info({ rooms: home.spec.rooms.length, area }, 'updated status');
    return undefined;
  });
