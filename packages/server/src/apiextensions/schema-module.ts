/**
 * What serving CustomResourceDefinitions takes — `kubeloop/schema` (CRD validation, structural
 * schemas, CEL rules, with the CEL library) and the custom resource types built from a CRD —
 * loaded with the first write of a CRD or the first stored CRD, not at start. Every CRD reaches
 * the CRD controller through such a write or the start's snapshot, and custom resources are
 * served only from a CRD, so whatever uses these modules finds them loaded.
 */
import { lazyModule } from '../util/lazy-module.js';

/** `kubeloop/schema` and `customResourceTypes`, loaded on demand. */
export const crdSupport = lazyModule(async () => {
  const [schema, types] = await Promise.all([import('kubeloop/schema'), import('./custom-resource-type.js')]);
  return { schema, customResourceTypes: types.customResourceTypes };
});
