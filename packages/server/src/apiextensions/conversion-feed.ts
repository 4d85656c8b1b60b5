import type { ResourceType } from '../registry/types.js';
import type { Store } from '../storage/store.js';
import { collectionPrefix } from '../storage/store.js';
import type { StoredObject, Unsubscribe } from '../storage/types.js';
import { presentAll } from './conversion.js';

/**
 * Converts the custom resources of a CRD with a conversion webhook as they are written, to every
 * served version but the storage version, as kube-apiserver does: each served version of a CRD
 * has its own watch cache, which decodes — converts through the webhook — every object written,
 * whether or not anyone reads that version (kubernetes/kubernetes#129979: "1 conversion request
 * for each non-storage apiVersion for every CR create/update"). Lists and watches of that version
 * then find the objects converted, as kube serves them from that cache.
 *
 * The objects written within one turn of the event loop go in one review per version (kube sends
 * one per object; a webhook must accept any number). A list that comes while a review is under
 * way waits for it rather than converting again. A failed conversion is not kept: the next read
 * of that version converts again and answers the failure, as a read does without this feed.
 * Deletions convert nothing: the last state was converted when it was written.
 *
 * Returns the function that stops the feed (the CRD's types changed, or it is no longer served).
 */
export function convertAsWritten(store: Store, types: readonly ResourceType[]): Unsubscribe {
  const targets = types.filter(
    (t) => t.custom?.conversion === 'Webhook' && t.version !== t.custom.storageVersion,
  );
  const first = types[0];
  if (!first || targets.length === 0) return () => undefined;
  let written: StoredObject[] = [];
  let scheduled: NodeJS.Immediate | undefined;
  const flush = () => {
    scheduled = undefined;
    const batch = written;
    written = [];
    for (const t of targets) {
      const converting = presentAll(t, batch);
      // Answered to the reader that needs the object; here, nobody waits.
      if (converting instanceof Promise) converting.catch(() => undefined);
    }
  };
  const unsubscribe = store.watch(collectionPrefix(first.group, first.resource), store.revision, (ev) => {
    if (ev.type === 'DELETED') return;
    written.push(ev.object);
    // After the write's answer, as a watch cache converts after the write is committed.
    scheduled ??= setImmediate(flush);
  });
  return () => {
    unsubscribe();
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    written = [];
  };
}
