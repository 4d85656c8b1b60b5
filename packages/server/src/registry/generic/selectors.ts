/** Label and field selectors of lists and watches, as the generic registry applies them. */
import { ApiError, type FieldSelector, matchesFields, matchesLabels } from 'kubeloop/api';
import { convertedView, presentAs } from '../../apiextensions/conversion.js';
import type { KubeObject, StoredObject } from '../../storage/types.js';
import type { Obj } from '../../util/object.js';
import type { ResourceType } from '../types.js';
import type { ListParams } from './list.js';

/** The value of a field selector's field for an object of this type. */
export function fieldValue(t: ResourceType, obj: Readonly<KubeObject>, field: string): string | undefined {
  const m = (obj.metadata ?? {}) as Obj;
  if (field === 'metadata.name') return String(m.name ?? '');
  if (field === 'metadata.namespace') return t.namespaced ? String(m.namespace ?? '') : '';
  const fn = t.behaviour.fieldSelectors?.[field];
  return fn ? fn(obj as Obj) : undefined;
}

/** Checks that every field of a selector is supported, as the apiserver's field label conversion does. */
export function checkFieldSelector(t: ResourceType, sel: FieldSelector | undefined): void {
  for (const r of sel ?? []) {
    if (r.field === 'metadata.name') continue;
    // crConverter.ConvertFieldLabel: a cluster-scoped custom resource has no namespace field.
    if (r.field === 'metadata.namespace' && (t.namespaced || !t.custom)) continue;
    if (!t.behaviour.fieldSelectors?.[r.field]) {
      throw ApiError.badRequest(`field label not supported: ${r.field}`);
    }
  }
}

/** A predicate for the label and field selectors of a list or watch; undefined when none. */
export function selectorMatcher(
  t: ResourceType,
  p: Pick<ListParams, 'labelSelector' | 'fieldSelector'>,
): ((o: StoredObject) => boolean) | undefined {
  const { labelSelector, fieldSelector } = p;
  if (!labelSelector?.length && !fieldSelector?.length) return undefined;
  return (o) => {
    const labels = (o.object.metadata as Obj | undefined)?.labels as Record<string, string> | undefined;
    if (labelSelector?.length && !matchesLabels(labelSelector, labels)) return false;
    if (fieldSelector?.length) {
      // Fields are selected as the request's kind spells them (regarding.name, not involvedObject.name).
      // Through a conversion webhook, the view a list converted first (see `convertedView`).
      const view = t.storedAs ? presentAs(t, o).object : (convertedView(t, o) ?? o).object;
      if (!matchesFields(fieldSelector, (f) => fieldValue(t, view, f))) return false;
    }
    return true;
  };
}
