/**
 * The registry entry of `IngressClass` (networking.k8s.io/v1 `ingressclasses`): its resource type and
 * validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { networkingKind } from '../shared/define.js';
import {
  dig,
  invalid,
  isDNS1123Subdomain,
  isObj,
  notSupported,
  type Obj,
  required,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { ageOf, NET, nameOf } from './shared.js';

// ---------------------------------------------------------------------------------------------
// IngressClasses
/** `validateIngressClassSpec`: a domain-prefixed controller name of at most 250 characters. */
function validateIngressClass(obj: Obj): StatusCause[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const out: StatusCause[] = [];
  const controller = str(spec.controller);
  if (!controller) out.push(required('spec.controller'));
  else {
    if (controller.length > 250)
      out.push({
        reason: 'FieldValueTooLong',
        field: 'spec.controller',
        message: 'Too long: may not be more than 250 bytes',
      });
    const slash = controller.indexOf('/');
    const domain = slash < 0 ? controller : controller.slice(0, slash);
    if (slash < 0 || slash === controller.length - 1)
      out.push(
        invalid('spec.controller', controller, 'must be a domain-prefixed path (such as "acme.io/foo")'),
      );
    for (const msg of isDNS1123Subdomain(domain)) out.push(invalid('spec.controller', domain, msg));
  }
  const params = spec.parameters;
  if (isObj(params)) {
    if (!str(params.kind)) out.push(required('spec.parameters.kind'));
    if (!str(params.name)) out.push(required('spec.parameters.name'));
    const scope = params.scope;
    if (scope !== undefined && scope !== 'Cluster' && scope !== 'Namespace')
      out.push(notSupported('spec.parameters.scope', scope, ['Cluster', 'Namespace']));
    if (scope === 'Namespace' && !str(params.namespace))
      out.push(required('spec.parameters.namespace', '`parameters.scope` is set to "Namespace"'));
  }
  return out;
}
const ingressclasses: KindBehaviour = {
  validate: validateIngressClass,
  columns: [
    nameColumn(),
    col('Controller', 'string', fieldDoc(`${NET}.IngressClassSpec`, 'controller')),
    col('Parameters', 'string', fieldDoc(`${NET}.IngressClassSpec`, 'parameters')),
    ageColumn(),
  ],
  row: (obj, now) => {
    const params = dig(obj, 'spec', 'parameters');
    let parameters = '<none>';
    if (isObj(params)) {
      const kind = str(params.apiGroup) ? `${str(params.kind)}.${str(params.apiGroup)}` : str(params.kind);
      parameters = `${kind}/${str(params.name)}`;
    }
    return [nameOf(obj), str(dig(obj, 'spec', 'controller')), parameters, ageOf(obj, now)];
  },
};

/** `IngressClass` (networking.k8s.io/v1 `ingressclasses`): how the registry serves, validates and prints it. */
export const ingressClassKind: ResourceType = networkingKind({
  behaviour: ingressclasses,
  resource: 'ingressclasses',
  kind: 'IngressClass',
  namespaced: false,
});
