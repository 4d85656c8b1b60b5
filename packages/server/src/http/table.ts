import type { ResourceType } from '../registry/types.js';
import type { StoredObject } from '../storage/types.js';
import type { Obj } from '../util/object.js';

/** `includeObject` of a Table request: what each row carries besides its cells. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** `meta.k8s.io/v1` PartialObjectMetadata of a stored object. */
export function partialObjectMetadata(o: StoredObject): Obj {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.object.metadata };
}

/** One Table row for an object, as the apiserver's TableConvertor renders it. */
export function tableRow(t: ResourceType, o: StoredObject, include: IncludeObject, now: Date): Obj {
  const row: Obj = { cells: t.behaviour.row(o.object as Obj, now) };
  if (include === 'Metadata') row.object = partialObjectMetadata(o);
  else if (include === 'Object') row.object = o.object;
  return row;
}

/** A `meta.k8s.io/v1` Table of objects. */
export function table(
  t: ResourceType,
  items: StoredObject[],
  include: IncludeObject,
  listMeta: Obj,
  withColumns = true,
): Obj {
  const now = new Date();
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: withColumns ? t.behaviour.columns : [],
    rows: items.map((o) => tableRow(t, o, include, now)),
  };
}
