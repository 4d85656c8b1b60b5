/**
 * A ValidatingAdmissionPolicy compiled once per stored version (validating/plugin.go
 * `compilePolicy`): its variables, matchConditions, validations with their messageExpressions
 * and auditAnnotations, in one CEL environment per policy.
 */

import type { Obj } from '../../util/object.js';
import { AdmissionCelEnv, type CompiledExpression } from '../cel/index.js';

/** One validation of a policy. */
export interface CompiledValidation {
  expression: CompiledExpression;
  message?: string;
  messageExpression?: CompiledExpression;
  reason?: string;
}

/** A policy ready to be evaluated. */
export interface CompiledPolicy {
  name: string;
  spec: Obj;
  failurePolicy: 'Fail' | 'Ignore' | string;
  /** The paramKind's group, version and kind, when it has one. */
  paramKind?: { group: string; version: string; kind: string };
  matchConditions: { name: string; expression: CompiledExpression }[];
  validations: CompiledValidation[];
  auditAnnotations: { key: string; valueExpression: string; expression: CompiledExpression }[];
}

const objs = (v: unknown): Obj[] =>
  Array.isArray(v) ? v.filter((x): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x)) : [];
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** `apiVersion` → group and version. */
export function groupVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

/** Compiles a stored policy. */
export function compilePolicy(policy: Obj): CompiledPolicy {
  const spec = (policy.spec ?? {}) as Obj;
  const meta = (policy.metadata ?? {}) as Obj;
  const pk = spec.paramKind as Obj | undefined;
  const env = new AdmissionCelEnv({
    params: pk !== undefined && pk !== null,
    authorizer: true,
    variables: objs(spec.variables).map((v) => ({ name: str(v.name), expression: str(v.expression) })),
  });
  const bool = { returnTypes: ['bool'] };
  return {
    name: str(meta.name),
    spec,
    failurePolicy: str(spec.failurePolicy) || 'Fail',
    ...(pk && { paramKind: { ...groupVersion(str(pk.apiVersion)), kind: str(pk.kind) } }),
    matchConditions: objs(spec.matchConditions).map((c) => ({
      name: str(c.name),
      expression: env.compile(str(c.expression), bool),
    })),
    validations: objs(spec.validations).map((v) => ({
      expression: env.compile(str(v.expression), bool),
      ...(typeof v.message === 'string' && { message: v.message }),
      ...(str(v.messageExpression) && {
        messageExpression: env.compile(str(v.messageExpression), {
          returnTypes: ['string'],
          authorizer: false,
        }),
      }),
      ...(typeof v.reason === 'string' && { reason: v.reason }),
    })),
    auditAnnotations: objs(spec.auditAnnotations).map((a) => ({
      key: str(a.key),
      valueExpression: str(a.valueExpression),
      expression: env.compile(str(a.valueExpression), { returnTypes: ['string', 'null_type'] }),
    })),
  };
}
