/** apiextensions.k8s.io/v1 CustomResourceDefinitions: defaults and the checks of the CRD's own fields. */
import type { StatusCause } from 'kubeloop/api';
import type { CustomResourceDefinition } from 'kubeloop/schema';
import { crdSupport } from '../../apiextensions/schema-module.js';
import type { KindBehaviour } from '../shared/behaviour.js';
import { createdAtBehaviour } from '../shared/default.js';
import { defineKind } from '../shared/define.js';
import { crdStatusStrategy } from '../shared/status-strategy.js';
import { dig, ensureObj, isObj, numOr, type Obj, objs, str, strs } from '../shared/util.js';
import type { ResourceType } from '../types.js';

const _APPROVAL = 'api-approved.kubernetes.io';

/** `SetDefaults_CustomResourceDefinition`, plus the stored version the strategy records for a new storage version. */
function defaults(obj: Obj): void {
  crdSupport.get().schema.setCustomResourceDefinitionDefaults(obj as unknown as CustomResourceDefinition);
  const spec = ensureObj(obj, 'spec');
  const names = ensureObj(spec, 'names');
  if (!str(names.singular)) names.singular = str(names.kind).toLowerCase();
  if (!str(names.listKind) && str(names.kind)) names.listKind = `${str(names.kind)}List`;
  if (!isObj(spec.conversion)) spec.conversion = { strategy: 'None' };
  const service = dig(spec, 'conversion', 'webhook', 'clientConfig', 'service');
  if (isObj(service) && numOr(service.port) === undefined) service.port = 443;
  const status = ensureObj(obj, 'status');
  // CustomResourceDefinitionNames is a struct, so Go serializes an empty acceptedNames.
  if (!isObj(status.acceptedNames)) status.acceptedNames = { kind: '', plural: '' };
  const storage = objs(spec.versions).find((v) => v.storage === true);
  const stored = strs(status.storedVersions);
  if (storage && !stored.includes(str(storage.name))) status.storedVersions = [...stored, str(storage.name)];
}

/**
 * The CRD's own validation (names, versions, schemas, CEL rules, subresources, columns,
 * conversion, protected groups, update rules) is the SDK's `kubeloop/schema` — the same code
 * an operator author runs on a generated CRD — loaded by `load` before any write of a CRD.
 */
function validate(obj: Obj, old?: Obj): StatusCause[] {
  return crdSupport
    .get()
    .schema.validateCustomResourceDefinition(
      obj as unknown as CustomResourceDefinition,
      old as unknown as CustomResourceDefinition | undefined,
    );
}

const customresourcedefinitions: KindBehaviour = {
  ...createdAtBehaviour(),
  defaults,
  validate,
  // The CRD checks (and the CEL library they compile rules with) load on the first CRD write.
  load: crdSupport.load,
};

/** `CustomResourceDefinition` (apiextensions.k8s.io/v1 `customresourcedefinitions`): how the registry serves, validates and prints it. */
export const customResourceDefinitionKind: ResourceType = defineKind({
  statusStrategy: crdStatusStrategy,
  behaviour: customresourcedefinitions,
  group: 'apiextensions.k8s.io',
  version: 'v1',
  defPackage: 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1',
  resource: 'customresourcedefinitions',
  // Its strategy refuses an update without a resourceVersion (AllowUnconditionalUpdate false).
  allowUnconditionalUpdate: false,
  kind: 'CustomResourceDefinition',
  namespaced: false,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  generation: true,
  subresources: { status: true },
  returnDeletedObject: true,
  deletionFinalizers: ['customresourcecleanup.apiextensions.k8s.io'],
});
