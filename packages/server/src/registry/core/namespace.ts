/**
 * The registry entry of `Namespace` (core/v1 `namespaces`): its resource type and
 * defaults, validation, printer columns, field selectors, storage hooks.
 */
import type { StatusCause } from 'kubeloop/api';
import { isObject, type Obj } from '../../util/object.js';
import { strings } from '../generic/object-meta.js';
import type { StorageHooks } from '../shared/behaviour.js';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { specStatusStrategy } from '../shared/status-strategy.js';
import { dig, ensureObj, invalid, isQualifiedName, str, strs } from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { age } from './shared.js';

// ---------------------------------------------------------------------------------------------
// Namespaces
const STANDARD_FINALIZERS = ['kubernetes', 'orphan', 'foregroundDeletion'];
/**
 * What a Namespace's storage does beyond the generic registry's (`pkg/registry/core/namespace`):
 * its deletion waits for the namespace controller to empty it and clear `spec.finalizers`.
 */
const namespaceStorage: StorageHooks = {
  statusOnCreate(obj) {
    // No phase yet: the namespace defaults read its absence as "create" and add both the
    // `kubernetes` finalizer and phase Active (PrepareForCreate), so deletion waits for the controller.
    obj.status = {};
  },
  waitsForFinalization: (obj) => strings((obj.spec as Obj | undefined)?.finalizers).length > 0,
  onDeletionStart(obj) {
    obj.status = { ...(isObject(obj.status) ? obj.status : {}), phase: 'Terminating' };
  },
};

const namespaces: KindBehaviour = {
  defaults(obj) {
    const m = ensureObj(obj, 'metadata');
    const name = str(m.name);
    if (name) ensureObj(m, 'labels')['kubernetes.io/metadata.name'] = name;
    const status = ensureObj(obj, 'status');
    // The create strategy adds the `kubernetes` finalizer; a stored namespace always has a phase,
    // so its absence marks a create (the finalizer may be removed later through /finalize).
    if (!str(status.phase)) {
      const spec = ensureObj(obj, 'spec');
      const finalizers = strs(spec.finalizers);
      if (!finalizers.includes('kubernetes')) spec.finalizers = [...finalizers, 'kubernetes'];
      status.phase = 'Active';
    }
  },
  prepare(obj, old, strategy) {
    // Only `/finalize` changes `spec.finalizers` (the namespace strategy's PrepareForUpdate keeps
    // the old ones; the finalize strategy takes the new ones).
    if (!old || strategy === 'finalize') return;
    const finalizers = dig(old, 'spec', 'finalizers');
    const spec = ensureObj(obj, 'spec');
    if (finalizers === undefined) delete spec.finalizers;
    else spec.finalizers = structuredClone(finalizers);
  },
  validate(obj, _old, strategy) {
    const out: StatusCause[] = [];
    strs(dig(obj, 'spec', 'finalizers')).forEach((f, i) => {
      // ValidateNamespace names the list; ValidateNamespaceFinalizeUpdate each entry.
      const field = strategy === 'finalize' ? `spec.finalizers[${i}]` : 'spec.finalizers';
      for (const m of isQualifiedName(f)) out.push(invalid(field, f, m));
      if (!f.includes('/') && !STANDARD_FINALIZERS.includes(f)) {
        out.push(invalid(field, f, 'name is neither a standard finalizer name nor is it fully qualified'));
      }
    });
    return out;
  },
  columns: [nameColumn(), col('Status', 'string', 'The status of the namespace'), ageColumn()],
  row: (obj, now) => [str(dig(obj, 'metadata', 'name')), str(dig(obj, 'status', 'phase')), age(obj, now)],
  fieldSelectors: { 'status.phase': (o) => str(dig(o, 'status', 'phase')) },
  fieldSelectorMetadata: ['metadata.name'],
  storage: namespaceStorage,
};

/** `Namespace` (core/v1 `namespaces`): how the registry serves, validates and prints it. */
export const namespaceKind: ResourceType = coreKind({
  statusStrategy: specStatusStrategy,
  behaviour: namespaces,
  resource: 'namespaces',
  kind: 'Namespace',
  namespaced: false,
  shortNames: ['ns'],
  nameValidation: 'label',
  subresources: { status: true, finalize: true },
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  returnDeletedObject: true,
});
