/**
 * The registry entry of `StorageClass` (storage.k8s.io/v1 `storageclasses`): its resource type and
 * defaults, validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { storageKind } from '../shared/define.js';
import {
  def,
  dig,
  duplicate,
  FIELD_IMMUTABLE,
  forbidden,
  invalid,
  isObj,
  isQualifiedName,
  notSupported,
  type Obj,
  objs,
  required,
  semanticEqual,
  str,
  strs,
  tooLong,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { ageOf, nameOf, STORAGE } from './shared.js';

const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
const BETA_DEFAULT_CLASS_ANNOTATION = 'storageclass.beta.kubernetes.io/is-default-class';
// ---------------------------------------------------------------------------------------------
// StorageClasses

/**
 * `validateAllowedTopologies` with core's `ValidateTopologySelectorTerm`: each expression's key a
 * label name and once per term, its values given and each once, and no term twice. kube compares
 * a term with a list that starts with one empty term per term, so a term without expressions is
 * a duplicate too.
 */
function validateAllowedTopologies(topologies: unknown): StatusCause[] {
  const out: StatusCause[] = [];
  const terms = objs(topologies);
  const seen: Map<string, string[]>[] = terms.map(() => new Map());
  terms.forEach((term, i) => {
    const path = `allowedTopologies[${i}]`;
    const expressions = new Map<string, string[]>();
    objs(term.matchLabelExpressions).forEach((req, j) => {
      const rp = `${path}.matchLabelExpressions[${j}]`;
      const values = strs(req.values);
      if (values.length === 0) out.push(required(`${rp}.values`));
      values.forEach((v, k) => {
        if (values.indexOf(v) < k) out.push(duplicate(`${rp}.values[${k}]`, v));
      });
      const key = str(req.key);
      for (const msg of isQualifiedName(key)) out.push(invalid(`${rp}.key`, key, msg));
      if (expressions.has(key)) out.push(duplicate(`${rp}.key`, key));
      expressions.set(key, [...new Set(values)].sort());
    });
    if (seen.some((other) => sameTerm(other, expressions)))
      out.push(duplicate(`${path}.matchLabelExpressions`, ''));
    seen.push(expressions);
  });
  return out;
}

const sameTerm = (a: Map<string, string[]>, b: Map<string, string[]>): boolean =>
  a.size === b.size && [...a].every(([k, v]) => semanticEqual(v, b.get(k)));
const storageclasses: KindBehaviour = {
  /** `SetDefaults_StorageClass`. */
  defaults(obj) {
    def(obj, 'reclaimPolicy', 'Delete');
    def(obj, 'volumeBindingMode', 'Immediate');
  },
  /** `ValidateStorageClass` and, on update, `ValidateStorageClassUpdate`. */
  validate(obj, old) {
    const out: StatusCause[] = [];
    const provisioner = str(obj.provisioner);
    if (!provisioner) out.push(required('provisioner'));
    else
      for (const msg of isQualifiedName(provisioner.toLowerCase()))
        out.push(invalid('provisioner', provisioner.toLowerCase(), msg));
    const params = isObj(obj.parameters) ? obj.parameters : {};
    if (Object.keys(params).length > 512)
      out.push({
        reason: 'FieldValueTooMany',
        field: 'parameters',
        message: 'Too many: must have at most 512 items',
      });
    if (Object.keys(params).some((k) => k === ''))
      out.push(invalid('parameters', '', 'field can not be empty.'));
    let size = 0;
    for (const [k, v] of Object.entries(params)) size += Buffer.byteLength(k) + Buffer.byteLength(str(v));
    if (size > 256 * 1024) out.push(tooLong('parameters', 256 * 1024));
    const reclaim = obj.reclaimPolicy;
    if (typeof reclaim === 'string' && reclaim !== 'Delete' && reclaim !== 'Retain')
      out.push(notSupported('reclaimPolicy', reclaim, ['Delete', 'Retain']));
    const mode = obj.volumeBindingMode;
    if (mode === undefined || mode === null) out.push(required('volumeBindingMode'));
    else if (mode !== 'Immediate' && mode !== 'WaitForFirstConsumer')
      out.push(notSupported('volumeBindingMode', mode, ['Immediate', 'WaitForFirstConsumer']));
    out.push(...validateAllowedTopologies(obj.allowedTopologies));
    if (old) {
      if (!semanticEqual(obj.parameters ?? {}, old.parameters ?? {}))
        out.push(forbidden('parameters', 'updates to parameters are forbidden.'));
      if (obj.provisioner !== old.provisioner)
        out.push(forbidden('provisioner', 'updates to provisioner are forbidden.'));
      if (obj.reclaimPolicy !== old.reclaimPolicy)
        out.push(forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
      if (obj.volumeBindingMode !== old.volumeBindingMode)
        out.push(invalid('volumeBindingMode', obj.volumeBindingMode, FIELD_IMMUTABLE));
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('Provisioner', 'string', fieldDoc(`${STORAGE}.StorageClass`, 'provisioner')),
    col('ReclaimPolicy', 'string', fieldDoc(`${STORAGE}.StorageClass`, 'reclaimPolicy')),
    col('VolumeBindingMode', 'string', fieldDoc(`${STORAGE}.StorageClass`, 'volumeBindingMode')),
    col('AllowVolumeExpansion', 'string', fieldDoc(`${STORAGE}.StorageClass`, 'allowVolumeExpansion')),
    ageColumn(),
  ],
  row(obj, now) {
    const annotations = isObj(dig(obj, 'metadata', 'annotations'))
      ? (dig(obj, 'metadata', 'annotations') as Obj)
      : {};
    const isDefault =
      annotations[DEFAULT_CLASS_ANNOTATION] === 'true' ||
      annotations[BETA_DEFAULT_CLASS_ANNOTATION] === 'true';
    return [
      isDefault ? `${nameOf(obj)} (default)` : nameOf(obj),
      str(obj.provisioner),
      str(obj.reclaimPolicy) || 'Delete',
      str(obj.volumeBindingMode) || 'Immediate',
      obj.allowVolumeExpansion === true,
      ageOf(obj, now),
    ];
  },
};

/** `StorageClass` (storage.k8s.io/v1 `storageclasses`): how the registry serves, validates and prints it. */
export const storageClassKind: ResourceType = storageKind({
  behaviour: storageclasses,
  resource: 'storageclasses',
  kind: 'StorageClass',
  shortNames: ['sc'],
});
