/** Label and field selectors of lists and watches, as the generic registry applies them. */
import { ApiError, type FieldSelector, goQuote, matchesFields, matchesLabels } from 'kubeloop/api';
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

/**
 * Checks that every field of a selector is supported, as the apiserver's field label conversion
 * does: the kind's own conversion function when it has one (its `fieldSelectors`), a custom
 * resource's (`crConverter`: its name, its namespace when namespaced, its selectable fields), or
 * apimachinery's default for the rest.
 */
export function checkFieldSelector(t: ResourceType, sel: FieldSelector | undefined): void {
  const b = t.behaviour;
  for (const { field } of sel ?? []) {
    if (t.custom) {
      if (
        field === 'metadata.name' ||
        (field === 'metadata.namespace' && t.namespaced) ||
        b.fieldSelectors?.[field]
      )
        continue;
      throw ApiError.badRequest(`field label not supported: ${field}`);
    }
    if (!b.fieldSelectors) {
      if (field === 'metadata.name' || field === 'metadata.namespace') continue;
      throw ApiError.badRequest(
        `${goQuote(field)} is not a known field selector: only "metadata.name", "metadata.namespace"`,
      );
    }
    const metadata = b.fieldSelectorMetadata ?? ['metadata.name', 'metadata.namespace'];
    if ((metadata as readonly string[]).includes(field) || b.fieldSelectors[field]) continue;
    throw ApiError.badRequest(b.unsupportedFieldLabel?.(field) ?? `field label not supported: ${field}`);
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
