import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { dig, ensureObj, invalid, isQualifiedName, str, strs } from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { namespaceStorage } from './namespace-storage.js';
import { age } from './shared.js';

// ---------------------------------------------------------------------------------------------
// Namespaces
const STANDARD_FINALIZERS = ['kubernetes', 'orphan', 'foregroundDeletion'];
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
  validate(obj) {
    const out: StatusCause[] = [];
    strs(dig(obj, 'spec', 'finalizers')).forEach((f, i) => {
      const field = `spec.finalizers[${i}]`;
      for (const m of isQualifiedName(f)) out.push(invalid(field, f, m));
      if (!f.includes('/') && !STANDARD_FINALIZERS.includes(f)) {
        out.push(invalid(field, f, 'name is neither a standard finalizer name nor is it fully qualified'));
      }
    });
    return out;
  },
  columns: [nameColumn(), col('Status', 'string', 'The status of the namespace'), ageColumn()],
  row: (obj, now) => [str(dig(obj, 'metadata', 'name')), str(dig(obj, 'status', 'phase')), age(obj, now)],
  fieldSelectors: {
    'status.phase': (o) => str(dig(o, 'status', 'phase')),
    name: (o) => str(dig(o, 'metadata', 'name')),
  },
  storage: namespaceStorage,
};

/** `Namespace` (core/v1 `namespaces`): how the registry serves, validates and prints it. */
export const namespaceKind: ResourceType = coreKind({
  behaviour: namespaces,
  resource: 'namespaces',
  kind: 'Namespace',
  namespaced: false,
  shortNames: ['ns'],
  nameValidation: 'label',
  subresources: { status: true },
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  returnDeletedObject: true,
});
