/**
 * kubeloop — write Kubernetes operators in TypeScript.
 *
 * The root export is what an operator author starts with: the object model (`Status` errors,
 * selectors, metadata validation — also alone as `kubeloop/api`) and resource declarations
 * (`defineResource`, TypeBox's `Type`, Kubernetes' schema vocabulary `Kube`, `Static`).
 *
 * @example
 * ```ts
 * import { defineResource, Type, type Static } from 'kubeloop';
 * export const Foo = defineResource({ group: 'example.com', version: 'v1', kind: 'Foo',
 *   spec: Type.Object({ replicas: Type.Integer({ minimum: 1 }) }) });
 * export type Foo = Static<typeof Foo>;
 * ```
 */
export * from './api/index.js';
export * from './schema/define/index.js';
