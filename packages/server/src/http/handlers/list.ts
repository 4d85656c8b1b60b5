/** GET of a collection (`list`): objects, a Table or metadata, items written from their cached JSON. */
import type { ServerResponse } from 'node:http';
import { convertForFieldSelector, presentAll } from '../../apiextensions/conversion.js';
import { listItemJson, listItemObject } from '../../registry/list-item.js';
import type { ListOutcome, ListParams } from '../../registry/rest.js';
import { apiVersionOf, storageOf } from '../../registry/types.js';
import { collectionPrefix } from '../../storage/store.js';
import type { Obj } from '../../util/object.js';
import { JSON_HEADERS } from '../api-response.js';
import { includeObject, listParams } from '../params.js';
import { partialObjectMetadata, table } from '../table.js';
import type { HandlerScope, ResourceRequest } from './scope.js';

/**
 * Synchronous unless the page goes through a conversion webhook, which converts the page's
 * objects in one ConversionReview.
 */
export function list(s: HandlerScope, r: ResourceRequest): void | Promise<void> {
  const { t, query } = r;
  const params = listParams(query);
  if (t.custom?.conversion === 'Webhook') {
    s.rest.checkFieldSelector(t, params.fieldSelector);
    const { group, resource } = storageOf(t);
    const converting = convertForFieldSelector(
      t,
      () =>
        s.rest.store.list(collectionPrefix(group, resource, t.namespaced ? r.namespace : undefined)).items,
      (params.fieldSelector ?? []).map((f) => f.field),
    );
    if (converting) return converting.then(() => listPage(s, r, params));
  }
  return listPage(s, r, params);
}

function listPage(s: HandlerScope, r: ResourceRequest, params: ListParams): void | Promise<void> {
  const { t } = r;
  const out = s.rest.list(t, r.namespace, params);
  if (t.custom || t.storedAs) {
    const items = presentAll(t, out.items);
    if (items instanceof Promise)
      return items.then((i) => {
        out.items = i;
        writeList(s, r, out);
      });
    out.items = items;
  }
  writeList(s, r, out);
}

function writeList(s: HandlerScope, r: ResourceRequest, out: ListOutcome): void {
  const { t, res, query } = r;
  const listMeta: Obj = { resourceVersion: out.resourceVersion };
  if (out.continue !== undefined) listMeta.continue = out.continue;
  if (out.remainingItemCount !== undefined) listMeta.remainingItemCount = out.remainingItemCount;

  switch (r.media.representation.as) {
    case 'Table':
      s.out.json(r, 200, table(t, out.items, includeObject(query), listMeta));
      return;
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      s.out.json(r, 200, {
        kind: 'PartialObjectMetadataList',
        apiVersion: 'meta.k8s.io/v1',
        metadata: listMeta,
        items: out.items.map(partialObjectMetadata),
      });
      return;
    default: {
      if (r.media.protobuf) {
        const items = out.items.map((i) => listItemObject(t, i));
        const list = { kind: t.listKind, apiVersion: apiVersionOf(t), metadata: listMeta, items };
        if (s.out.protobuf(res, 200, list)) return;
      }
      // Items are written from their cached encodings: no re-serialisation of stored objects.
      const head = `{"kind":${JSON.stringify(t.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(t))},"metadata":${JSON.stringify(listMeta)},"items":[`;
      const items = out.items.map((i) => listItemJson(t, i));
      if (r.media.yaml) {
        s.out.json(r, 200, JSON.parse(`${head}${items.join(',')}]}`));
        return;
      }
      res.writeHead(200, JSON_HEADERS);
      writeChunked(res, head, items, ']}\n');
    }
  }
}

/** Writes `head`, the items' cached JSON separated by commas, and `tail`, in a few large chunks. */
function writeChunked(res: ServerResponse, head: string, items: string[], tail: string): void {
  let buf = head;
  for (let i = 0; i < items.length; i++) {
    buf += i === 0 ? items[i]! : `,${items[i]!}`;
    if (buf.length > 256 * 1024) {
      res.write(buf);
      buf = '';
    }
  }
  res.end(buf + tail);
}
