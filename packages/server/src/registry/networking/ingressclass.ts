/**
 * The registry entry of `IngressClass` (networking.k8s.io/v1 `ingressclasses`): its resource type and
 * validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { regexError } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { networkingKind } from '../shared/define.js';
import {
  dig,
  forbidden,
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isObj,
  isSet,
  notSupported,
  type Obj,
  required,
  str,
  tooLong,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { ageOf, NET, nameOf, validateTypedReference } from './shared.js';

// ---------------------------------------------------------------------------------------------
// IngressClasses
/** `validateIngressClassSpec`: a domain-prefixed controller name of at most 250 characters, the parameters. */
function validateIngressClass(obj: Obj): StatusCause[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const out: StatusCause[] = [];
  const controller = str(spec.controller);
  if (Buffer.byteLength(controller) > 250) out.push(tooLong('spec.controller', 250));
  out.push(...domainPrefixedPath(controller, 'spec.controller'));
  const params = spec.parameters;
  if (isObj(params)) {
    out.push(...validateTypedReference(params, 'spec.parameters'));
    const scope = params.scope;
    if (!isSet(scope)) out.push(required('spec.parameters.scope'));
    else if (scope !== 'Cluster' && scope !== 'Namespace')
      out.push(notSupported('spec.parameters.scope', scope, ['Cluster', 'Namespace']));
    else if (scope === 'Namespace') {
      if (!isSet(params.namespace))
        out.push(required('spec.parameters.namespace', "`parameters.scope` is set to 'Namespace'"));
      else {
        const ns = str(params.namespace);
        for (const msg of isDNS1123Label(ns)) out.push(invalid('spec.parameters.namespace', ns, msg));
      }
    } else if (isSet(params.namespace))
      out.push(forbidden('spec.parameters.namespace', "`parameters.scope` is set to 'Cluster'"));
  }
  return out;
}

const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const HTTP_PATH = /^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;

/** apimachinery `IsDomainPrefixedPath`. */
function domainPrefixedPath(value: string, path: string): StatusCause[] {
  if (!value) return [required(path)];
  const slash = value.indexOf('/');
  const [host, rest] = slash < 0 ? [value, ''] : [value.slice(0, slash), value.slice(slash + 1)];
  if (slash < 0 || !host || !rest)
    return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const out = isDNS1123Subdomain(host).map((msg) => invalid(path, host, msg));
  if (!HTTP_PATH.test(rest)) out.push(invalid(path, rest, regexError('Invalid path', HTTP_PATH_FMT)));
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
