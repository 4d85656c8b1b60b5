/** `fieldValidation` query parameter of a write; kube-apiserver treats an absent one as `Warn`. */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** Options of {@link applyMergePatch} and {@link applyJsonPatch}. */
export interface PatchOptions {
  /**
   * The request's `fieldValidation`. With `Warn` or `Strict` the apiserver first decodes the
   * body strictly into the patch's Go type, which changes the wording of some 400 errors.
   * Defaults to `Warn`, like kube-apiserver.
   */
  fieldValidation?: FieldValidation;
}
