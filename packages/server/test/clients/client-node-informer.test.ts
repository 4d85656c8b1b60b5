/**
 * `@kubernetes/client-node`'s informer (`makeInformer`: list, then watch from the list's
 * resourceVersion) through what ends watches in real clusters: the server dropping the stream,
 * which the informer resumes from its last resourceVersion without listing again, and a
 * resourceVersion that has left the server's history, which the server answers with an ERROR
 * event of 410 Expired and the informer answers by listing again, reporting what changed
 * meanwhile through its add, update and delete handlers.
 */
import {
  CoreV1Api,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { eventually } from '../kubectl.js';

const NS = 'default';
const SELECTOR = 'informed=yes';
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let cp: ControlPlane;
let core: CoreV1Api;
let kc: KubeConfig;

beforeAll(async () => {
  // A history of 20 events: a few dozen writes put an informer's resourceVersion out of reach.
  cp = await startTestEnv({ controllers: false, watchHistorySize: 20 });
  kc = new KubeConfig();
  kc.loadFromString(cp.kubeconfig);
  core = kc.makeApiClient(CoreV1Api);
});

afterAll(async () => {
  await cp?.stop();
});

const create = (name: string, labels: Record<string, string> = { informed: 'yes' }) =>
  core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name, labels }, data: { v: '1' } } });
const setValue = (name: string, v: string) =>
  core.patchNamespacedConfigMap({ name, namespace: NS, body: { data: { v } } }, mergePatch);

describe('a client-node informer', () => {
  it('resumes after a dropped watch, and lists again after a 410', async () => {
    await create('keep');
    await create('changes');
    await create('goes');

    let lists = 0;
    const informer = makeInformer<V1ConfigMap>(
      kc,
      `/api/v1/namespaces/${NS}/configmaps`,
      () => {
        lists++;
        return core.listNamespacedConfigMap({ namespace: NS, labelSelector: SELECTOR });
      },
      SELECTOR,
    );
    const log: string[] = [];
    informer.on('add', (o) => log.push(`add ${o.metadata?.name}`));
    informer.on('update', (o) => log.push(`update ${o.metadata?.name}=${o.data?.v}`));
    informer.on('delete', (o) => log.push(`delete ${o.metadata?.name}`));
    const errors: unknown[] = [];
    // client-node aborts its own watch request when stopped or restarted, and reports that
    // abort as an error; anything else is the server's doing.
    informer.on('error', (err) => {
      if ((err as { type?: string })?.type !== 'aborted') errors.push(err);
    });
    const names = () =>
      informer
        .list(NS)
        .map((o) => `${o.metadata?.name}=${o.data?.v}`)
        .sort();

    await informer.start();
    try {
      await eventually(() => cp.faults.openWatches === 1, 10_000, 'the informer to watch');
      expect(log.sort()).toEqual(['add changes', 'add goes', 'add keep']);
      expect(lists).toBe(1);

      // 1. The server drops the stream: the informer watches again from where it was, without
      // listing, and misses nothing made after.
      log.length = 0;
      expect(cp.faults.dropWatches()).toBe(1);
      await eventually(() => cp.faults.openWatches === 1, 10_000, 'the informer to watch again');
      await setValue('changes', '2');
      await create('new');
      await core.deleteNamespacedConfigMap({ name: 'goes', namespace: NS });
      await eventually(() => log.length >= 3, 10_000, 'three events after the drop');
      expect(log).toEqual(['update changes=2', 'add new', 'delete goes']);
      expect(names()).toEqual(['changes=2', 'keep=1', 'new=1']);
      expect(lists).toBe(1);

      // 2. The informer is away while its objects change and the history moves past its
      // resourceVersion (writes to objects it does not select still take revisions). Back, it
      // watches from its old resourceVersion, gets 410 Expired, lists again and reports the
      // differences.
      await informer.stop();
      log.length = 0;
      await setValue('changes', '3');
      await core.deleteNamespacedConfigMap({ name: 'new', namespace: NS });
      await create('later');
      await create('noise', { informed: 'no' });
      for (let i = 0; i < 30; i++) await setValue('noise', String(i));
      await informer.start();
      await eventually(() => lists === 2, 10_000, 'the informer to list again after the 410');
      await eventually(() => log.length >= 3, 10_000, 'the differences of the new list');
      expect(log.sort()).toEqual(['add later', 'delete new', 'update changes=3']);
      expect(names()).toEqual(['changes=3', 'keep=1', 'later=1']);

      // It watches on from the new list.
      log.length = 0;
      await setValue('keep', '4');
      await eventually(() => log.length >= 1, 10_000, 'an event after the new list');
      expect(log).toEqual(['update keep=4']);
      expect(lists).toBe(2);
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  });
});
