/**
 * A Job's failure and success policies and its per-index backoff, validated as kube-apiserver
 * 1.32 validates them (`validateJobSpec`'s later half: `podFailurePolicy`, `successPolicy`,
 * `backoffLimitPerIndex`/`maxFailedIndexes`, `managedBy`).
 */
import { fieldErrors, isDNS1123Subdomain, isQualifiedName, OMIT_VALUE, type StatusCause } from 'kubeloop/api';
import {
  duplicate,
  GoValue,
  invalid,
  isObj,
  notSupported,
  numOr,
  type Obj,
  objs,
  required,
  str,
  tooLong,
} from '../shared/util.js';

const MAX_PARALLELISM_FOR_INDEXED = 100_000;
const MAX_FAILED_INDEXES_FOR_INDEXED = 100_000;
const COMPLETIONS_SOFT_LIMIT = 100_000;
const PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS = 10_000;
const MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS = 10_000;
const MAX_POD_FAILURE_POLICY_RULES = 20;
const MAX_EXIT_CODES_VALUES = 255;
const MAX_POD_CONDITIONS_PATTERNS = 20;
const MAX_MANAGED_BY_LENGTH = 63;
const MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024;
const MAX_SUCCESS_POLICY_RULES = 20;

const ACTIONS = ['Count', 'FailIndex', 'FailJob', 'Ignore'];
const OPERATORS = ['In', 'NotIn'];
const CONDITION_STATUSES = ['False', 'True', 'Unknown'];
const HTTP_PATH = /^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;

const set = (v: unknown): boolean => v !== undefined && v !== null;

/** Go's `fmt.Sprintf("valid values: %q", list)`. */
const validValues = (list: readonly string[]): string =>
  `valid values: [${list.map((v) => JSON.stringify(v)).join(' ')}]`;

/** `IsDomainPrefixedPath` and the length limit of `spec.managedBy`. */
export function validateManagedBy(managedBy: unknown): StatusCause[] {
  if (!set(managedBy)) return [];
  const path = 'spec.managedBy';
  const value = str(managedBy);
  const out: StatusCause[] = [];
  if (value === '') out.push(required(path));
  else {
    const slash = value.indexOf('/');
    const [host, rest] = slash < 0 ? [value, ''] : [value.slice(0, slash), value.slice(slash + 1)];
    if (slash < 0 || host === '' || rest === '')
      out.push(invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")'));
    else {
      for (const m of isDNS1123Subdomain(host)) out.push(invalid(path, host, m));
      if (!HTTP_PATH.test(rest))
        out.push(
          invalid(
            path,
            rest,
            "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')",
          ),
        );
    }
  }
  if (value.length > MAX_MANAGED_BY_LENGTH) out.push(tooLong(path, MAX_MANAGED_BY_LENGTH));
  return out;
}

/** The completion-mode rules: Indexed's limits, and what only Indexed Jobs may set. */
export function validateIndexedLimits(spec: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  const mode = set(spec.completionMode) ? str(spec.completionMode) : undefined;
  const completions = numOr(spec.completions);
  const parallelism = numOr(spec.parallelism);
  const perIndex = numOr(spec.backoffLimitPerIndex);
  const maxFailed = numOr(spec.maxFailedIndexes);
  if (mode === 'Indexed') {
    if (parallelism !== undefined && parallelism > MAX_PARALLELISM_FOR_INDEXED)
      out.push(
        invalid(
          'spec.parallelism',
          parallelism,
          `must be less than or equal to ${MAX_PARALLELISM_FOR_INDEXED} when completion mode is Indexed`,
        ),
      );
    if (completions !== undefined && maxFailed !== undefined && maxFailed > completions)
      out.push(invalid('spec.maxFailedIndexes', maxFailed, 'must be less than or equal to completions'));
    if (maxFailed !== undefined && maxFailed > MAX_FAILED_INDEXES_FOR_INDEXED)
      out.push(
        invalid(
          'spec.maxFailedIndexes',
          maxFailed,
          `must be less than or equal to ${MAX_FAILED_INDEXES_FOR_INDEXED}`,
        ),
      );
    if (completions !== undefined && completions > COMPLETIONS_SOFT_LIMIT && perIndex !== undefined) {
      const suffix = `when completions are above ${COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index`;
      if (maxFailed === undefined)
        out.push(
          required(
            'spec.maxFailedIndexes',
            `must be specified when completions is above ${COMPLETIONS_SOFT_LIMIT}`,
          ),
        );
      if (parallelism !== undefined && parallelism > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS)
        out.push(
          invalid(
            'spec.parallelism',
            parallelism,
            `must be less than or equal to ${PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} ${suffix}`,
          ),
        );
      if (maxFailed !== undefined && maxFailed > MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS)
        out.push(
          invalid(
            'spec.maxFailedIndexes',
            maxFailed,
            `must be less than or equal to ${MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS} ${suffix}`,
          ),
        );
    }
  }
  if (mode === undefined || mode === 'NonIndexed') {
    if (perIndex !== undefined)
      out.push(invalid('spec.backoffLimitPerIndex', perIndex, 'requires indexed completion mode'));
    if (maxFailed !== undefined)
      out.push(invalid('spec.maxFailedIndexes', maxFailed, 'requires indexed completion mode'));
  }
  return out;
}

/** `validatePodFailurePolicy`: its rules' actions and their exit-code or pod-condition requirements. */
export function validatePodFailurePolicy(spec: Obj): StatusCause[] {
  const policy = spec.podFailurePolicy;
  if (!isObj(policy)) return [];
  const out: StatusCause[] = [];
  const rules = objs(policy.rules);
  const rulesPath = 'spec.podFailurePolicy.rules';
  if (rules.length > MAX_POD_FAILURE_POLICY_RULES)
    out.push(fieldErrors.tooMany(rulesPath, rules.length, MAX_POD_FAILURE_POLICY_RULES));
  const template = isObj(spec.template) && isObj(spec.template.spec) ? spec.template.spec : {};
  const containerNames = new Set(
    [...objs(template.containers), ...objs(template.initContainers)].map((c) => str(c.name)),
  );
  rules.forEach((rule, i) => {
    const path = `${rulesPath}[${i}]`;
    const action = str(rule.action);
    if (!action) out.push(required(`${path}.action`, validValues(ACTIONS)));
    else if (action === 'FailIndex') {
      if (!set(spec.backoffLimitPerIndex))
        out.push(invalid(`${path}.action`, action, 'requires the backoffLimitPerIndex to be set'));
    } else if (!ACTIONS.includes(action)) out.push(notSupported(`${path}.action`, action, ACTIONS));
    const onExitCodes = rule.onExitCodes;
    const onPodConditions = objs(rule.onPodConditions);
    if (isObj(onExitCodes))
      out.push(...validateOnExitCodes(onExitCodes, `${path}.onExitCodes`, containerNames));
    if (onPodConditions.length > 0)
      out.push(...validateOnPodConditions(onPodConditions, `${path}.onPodConditions`));
    if (isObj(onExitCodes) && onPodConditions.length > 0)
      out.push(
        fieldErrors.invalid(
          path,
          OMIT_VALUE,
          'specifying both OnExitCodes and OnPodConditions is not supported',
        ),
      );
    if (!isObj(onExitCodes) && onPodConditions.length === 0)
      out.push(
        fieldErrors.invalid(
          path,
          OMIT_VALUE,
          'specifying one of OnExitCodes and OnPodConditions is required',
        ),
      );
  });
  return out;
}

function validateOnExitCodes(req: Obj, path: string, containerNames: Set<string>): StatusCause[] {
  const out: StatusCause[] = [];
  const operator = str(req.operator);
  if (!operator) out.push(required(`${path}.operator`, validValues(OPERATORS)));
  else if (!OPERATORS.includes(operator)) out.push(notSupported(`${path}.operator`, operator, OPERATORS));
  if (set(req.containerName) && !containerNames.has(str(req.containerName)))
    out.push(
      invalid(
        `${path}.containerName`,
        str(req.containerName),
        'must be one of the container or initContainer names in the pod template',
      ),
    );
  const values = (Array.isArray(req.values) ? req.values : []).filter(
    (v): v is number => typeof v === 'number',
  );
  const goValues = new GoValue(`[]int32{${values.join(', ')}}`);
  if (values.length === 0)
    out.push(invalid(`${path}.values`, new GoValue('[]int32{}'), 'at least one value is required'));
  else if (values.length > MAX_EXIT_CODES_VALUES)
    out.push(fieldErrors.tooMany(`${path}.values`, values.length, MAX_EXIT_CODES_VALUES));
  const seen = new Set<number>();
  let ordered = true;
  values.forEach((v, j) => {
    if (operator === 'In' && v === 0)
      out.push(invalid(`${path}.values[${j}]`, v, 'must not be 0 for the In operator'));
    if (seen.has(v)) out.push(duplicate(`${path}.values[${j}]`, v));
    else seen.add(v);
    if (j > 0 && values[j - 1]! > v) ordered = false;
  });
  if (!ordered) out.push(invalid(`${path}.values`, goValues, 'must be ordered'));
  return out;
}

function validateOnPodConditions(patterns: Obj[], path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (patterns.length > MAX_POD_CONDITIONS_PATTERNS)
    out.push(fieldErrors.tooMany(path, patterns.length, MAX_POD_CONDITIONS_PATTERNS));
  patterns.forEach((p, j) => {
    const type = str(p.type);
    for (const m of isQualifiedName(type)) out.push(invalid(`${path}[${j}].type`, type, m));
    const status = str(p.status);
    if (!status) out.push(required(`${path}[${j}].status`, validValues(CONDITION_STATUSES)));
    else if (!CONDITION_STATUSES.includes(status))
      out.push(notSupported(`${path}[${j}].status`, status, CONDITION_STATUSES));
  });
  return out;
}

/** `validateIndexesFormat`: `1,3-5,7`, increasing, below `completions`; the number of indexes it names. */
export function parseIndexes(text: string, completions: number): number | string {
  if (text === '') return 0;
  let last: number | undefined;
  let total = 0;
  for (const interval of text.split(',')) {
    const limits = interval.split('-');
    if (limits.length > 2)
      return `the fragment ${JSON.stringify(interval)} violates the requirement that an index interval can have at most two parts separated by '-'`;
    const atoi = (s: string) => (/^[-+]?\d+$/.test(s) ? Number(s) : undefined);
    const x = atoi(limits[0]!);
    if (x === undefined) return `cannot convert string to integer for index: ${JSON.stringify(limits[0])}`;
    if (x >= completions) return `too large index: ${JSON.stringify(limits[0])}`;
    let y = x;
    if (limits.length > 1) {
      const parsed = atoi(limits[1]!);
      if (parsed === undefined)
        return `cannot convert string to integer for index: ${JSON.stringify(limits[1])}`;
      if (parsed >= completions) return `too large index: ${JSON.stringify(limits[1])}`;
      if (x >= parsed) return `non-increasing order, previous: ${x}, current: ${parsed}`;
      y = parsed;
    }
    if (last !== undefined && last >= x) return `non-increasing order, previous: ${last}, current: ${x}`;
    total += y - x + 1;
    last = y;
  }
  return total;
}

/** `spec.successPolicy`: Indexed Jobs only, each rule a count or a set of indexes within completions. */
export function validateSuccessPolicy(spec: Obj): StatusCause[] {
  const policy = spec.successPolicy;
  if (!isObj(policy)) return [];
  const path = 'spec.successPolicy';
  if (str(spec.completionMode) !== 'Indexed')
    return [invalid(path, new GoValue(goSuccessPolicy(policy)), 'requires indexed completion mode')];
  const out: StatusCause[] = [];
  const rules = objs(policy.rules);
  if (rules.length === 0)
    out.push(
      required(`${path}.rules`, 'at least one rules must be specified when the successPolicy is specified'),
    );
  if (rules.length > MAX_SUCCESS_POLICY_RULES)
    out.push(fieldErrors.tooMany(`${path}.rules`, rules.length, MAX_SUCCESS_POLICY_RULES));
  const completions = numOr(spec.completions) ?? 0;
  rules.forEach((rule, i) => {
    const rp = `${path}.rules[${i}]`;
    if (!set(rule.succeededCount) && !set(rule.succeededIndexes))
      out.push(required(rp, 'at least one of succeededCount or succeededIndexes must be specified'));
    let total = 0;
    if (set(rule.succeededIndexes)) {
      const indexes = str(rule.succeededIndexes);
      if (indexes.length > MAX_SUCCEEDED_INDEXES_LENGTH)
        out.push(tooLong(`${rp}.succeededIndexes`, MAX_SUCCEEDED_INDEXES_LENGTH));
      const parsed = parseIndexes(indexes, completions);
      if (typeof parsed === 'string')
        out.push(invalid(`${rp}.succeededIndexes`, indexes, `error parsing succeededIndexes: ${parsed}`));
      else total = parsed;
    }
    const count = numOr(rule.succeededCount);
    if (count !== undefined) {
      if (count < 0) out.push(invalid(`${rp}.succeededCount`, count, 'must be greater than or equal to 0'));
      if (count > completions)
        out.push(
          invalid(
            `${rp}.succeededCount`,
            count,
            `must be less than or equal to ${completions} (the number of specified completions)`,
          ),
        );
      if (set(rule.succeededIndexes) && count > total)
        out.push(
          invalid(
            `${rp}.succeededCount`,
            count,
            `must be less than or equal to ${total} (the number of indexes in the specified succeededIndexes field)`,
          ),
        );
    }
  });
  return out;
}

/** Go's `%#v` of a SuccessPolicy (pointers print as addresses in kube; here as the pointee). */
function goSuccessPolicy(policy: Obj): string {
  const rules = objs(policy.rules).map((r) => {
    const idx = set(r.succeededIndexes)
      ? `(*string)(${JSON.stringify(str(r.succeededIndexes))})`
      : '(*string)(nil)';
    const count = set(r.succeededCount) ? `(*int32)(${numOr(r.succeededCount) ?? 0})` : '(*int32)(nil)';
    return `batch.SuccessPolicyRule{SucceededIndexes:${idx}, SucceededCount:${count}}`;
  });
  return `batch.SuccessPolicy{Rules:[]batch.SuccessPolicyRule{${rules.join(', ')}}}`;
}
