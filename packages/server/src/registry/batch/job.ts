/** batch/v1 Jobs: defaults (with the generated selector), validation, printer and field selectors. */
import { goQuote, type StatusCause } from 'kubeloop/api';
import { containerCells } from '../apps/shared.js';
import { validatePodTemplate } from '../core/podspec.js';
import { defaultPodTemplate } from '../core/podspec-defaults.js';
import {
  ageColumn,
  CONTAINERS_DOC,
  col,
  IMAGES_DOC,
  type KindBehaviour,
  nameColumn,
} from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import { docs } from '../shared/descriptions.js';
import { specStatusStrategy } from '../shared/status-strategy.js';
import {
  dig,
  ensureObj,
  formatLabelSelector,
  GoValue,
  goLabelSelector,
  goStringMap,
  humanDuration,
  immutable,
  int,
  invalid,
  isDNS1123Label,
  isObj,
  labelSelectorAsSelector,
  nonNegative,
  notSupported,
  numOr,
  type Obj,
  objs,
  parseTime,
  required,
  selectorMatches,
  semanticEqual,
  since,
  str,
  strMap,
  validateLabelSelector,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import {
  validateIndexedLimits,
  validateManagedBy,
  validatePodFailurePolicy,
  validateSuccessPolicy,
} from './job-policies.js';

const CONTROLLER_UID = 'batch.kubernetes.io/controller-uid';
const LEGACY_CONTROLLER_UID = 'controller-uid';
const JOB_NAME = 'batch.kubernetes.io/job-name';
const LEGACY_JOB_NAME = 'job-name';
const MAX_INT32 = 2147483647;

/**
 * `SetDefaults_Job` and the template's pod defaults: what decoding the request applies, so the
 * field manager records them as the writer's. A Job without labels of its own takes the
 * template's labels object itself, as Go's `obj.Labels = labels` shares the map: the labels the
 * create strategy then adds to the template show in both.
 */
function defaults(obj: Obj): void {
  const spec = ensureObj(obj, 'spec');
  if (numOr(spec.completions) === undefined && numOr(spec.parallelism) === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  if (numOr(spec.parallelism) === undefined) spec.parallelism = 1;
  if (numOr(spec.backoffLimit) === undefined) {
    spec.backoffLimit = numOr(spec.backoffLimitPerIndex) !== undefined ? MAX_INT32 : 6;
  }
  if (!str(spec.completionMode)) spec.completionMode = 'NonIndexed';
  if (typeof spec.suspend !== 'boolean') spec.suspend = false;
  const pfp = spec.podFailurePolicy;
  if (isObj(pfp)) {
    for (const rule of objs(pfp.rules))
      for (const p of objs(rule.onPodConditions)) if (!str(p.status)) p.status = 'True';
  }
  if (!str(spec.podReplacementPolicy))
    spec.podReplacementPolicy = isObj(pfp) ? 'Failed' : 'TerminatingOrFailed';
  if (typeof spec.manualSelector !== 'boolean') spec.manualSelector = false;

  const template = ensureObj(spec, 'template');
  defaultPodTemplate(template);
  labelsFromTemplate(obj);
  ensureObj(obj, 'status');
}

/** A Job without labels of its own takes its template's (`SetDefaults_Job`, on decode and on read). */
function labelsFromTemplate(obj: Obj): void {
  const meta = ensureObj(obj, 'metadata');
  const templateLabels = dig(obj, 'spec', 'template', 'metadata', 'labels');
  if (
    isObj(templateLabels) &&
    Object.keys(templateLabels).length > 0 &&
    Object.keys(strMap(meta.labels)).length === 0
  )
    meta.labels = templateLabels;
}

/**
 * The create strategy's `generateSelector` (PrepareForCreate, after the field manager, so these
 * fields are owned by no manager), unless `manualSelector` is true:
 * `batch.kubernetes.io/controller-uid` (from `metadata.uid`, set just before) in the selector,
 * and the controller-uid and job-name labels on the pod template. Then the labels a Job without
 * labels of its own shows, as a real server's read-back defaulting gives them.
 */
function generateSelector(obj: Obj): void {
  const spec = ensureObj(obj, 'spec');
  const meta = ensureObj(obj, 'metadata');
  if (spec.manualSelector !== true) {
    const uid = str(meta.uid);
    const name = str(meta.name);
    const labels = ensureObj(ensureObj(ensureObj(spec, 'template'), 'metadata'), 'labels');
    // Labels the user set are kept; a conflict is reported by validation.
    for (const k of [LEGACY_JOB_NAME, JOB_NAME]) if (labels[k] === undefined) labels[k] = name;
    for (const k of [LEGACY_CONTROLLER_UID, CONTROLLER_UID]) if (labels[k] === undefined) labels[k] = uid;
    const selector = ensureObj(spec, 'selector');
    const matchLabels = ensureObj(selector, 'matchLabels');
    if (matchLabels[CONTROLLER_UID] === undefined) matchLabels[CONTROLLER_UID] = uid;
  }
  labelsFromTemplate(obj);
}

/** `ValidateHasLabel`. */
function hasLabel(labels: unknown, key: string, expected: string): StatusCause[] {
  const m = strMap(labels);
  const field = `spec.template.metadata.labels[${key}]`;
  if (!Object.hasOwn(m, key)) return [required(field, expected)];
  return m[key] === expected ? [] : [invalid(field, new GoValue(goStringMap(labels)), expected)];
}

/** `validateGeneratedSelector`: the generated labels and selector must not have been tampered with. */
function validateGeneratedSelector(obj: Obj): StatusCause[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  if (spec.manualSelector === true) return [];
  const labels = dig(spec, 'template', 'metadata', 'labels');
  if (!isObj(labels)) return [];
  const out: StatusCause[] = [];
  const uid = str(dig(obj, 'metadata', 'uid'));
  const name = str(dig(obj, 'metadata', 'name'));
  if (!uid) out.push(required('metadata.uid'));
  out.push(...hasLabel(labels, LEGACY_CONTROLLER_UID, uid));
  out.push(...hasLabel(labels, LEGACY_JOB_NAME, name));
  out.push(...hasLabel(labels, CONTROLLER_UID, uid));
  out.push(...hasLabel(labels, JOB_NAME, name));
  const selector = labelSelectorAsSelector(spec.selector);
  if (selector && !selectorMatches(selector, { [CONTROLLER_UID]: uid })) {
    out.push(
      invalid('spec.selector', new GoValue(goLabelSelector(spec.selector)), '`selector` not auto-generated'),
    );
  }
  return out;
}

function validateSpec(spec: Obj): StatusCause[] {
  // validateJobSpec, in its order.
  const out: StatusCause[] = [];
  for (const f of [
    'parallelism',
    'completions',
    'activeDeadlineSeconds',
    'backoffLimit',
    'ttlSecondsAfterFinished',
    'backoffLimitPerIndex',
    'maxFailedIndexes',
  ]) {
    out.push(...nonNegative(`spec.${f}`, spec[f]));
    if (
      f === 'maxFailedIndexes' &&
      numOr(spec.maxFailedIndexes) !== undefined &&
      numOr(spec.backoffLimitPerIndex) === undefined
    )
      out.push(required('spec.backoffLimitPerIndex', 'when maxFailedIndexes is specified'));
  }
  out.push(...validateManagedBy(spec.managedBy));
  const mode = str(spec.completionMode);
  if (mode && mode !== 'NonIndexed' && mode !== 'Indexed') {
    out.push(notSupported('spec.completionMode', mode, ['NonIndexed', 'Indexed']));
  }
  if (mode === 'Indexed' && numOr(spec.completions) === undefined) {
    out.push(required('spec.completions', 'when completion mode is Indexed'));
  }
  out.push(...validateIndexedLimits(spec));
  out.push(...validatePodFailurePolicy(spec));
  out.push(...validateSuccessPolicy(spec));
  const prp = str(spec.podReplacementPolicy);
  if (prp) {
    if (isObj(spec.podFailurePolicy)) {
      if (prp !== 'Failed') out.push(notSupported('spec.podReplacementPolicy', prp, ['Failed']));
    } else if (prp !== 'TerminatingOrFailed' && prp !== 'Failed') {
      out.push(notSupported('spec.podReplacementPolicy', prp, ['Failed', 'TerminatingOrFailed']));
    }
  }
  out.push(...validatePodTemplate(spec.template, 'spec.template'));
  // SetDefaults_PodSpec turns an unset restartPolicy into Always, so Always reads as "not set".
  const restart = str(dig(spec, 'template', 'spec', 'restartPolicy'));
  if (restart === 'Always' || restart === '') {
    out.push(required('spec.template.spec.restartPolicy', 'valid values: "OnFailure", "Never"'));
  } else if (restart !== 'OnFailure' && restart !== 'Never') {
    out.push(notSupported('spec.template.spec.restartPolicy', restart, ['OnFailure', 'Never']));
  } else if (isObj(spec.podFailurePolicy) && restart !== 'Never') {
    out.push(
      invalid(
        'spec.template.spec.restartPolicy',
        restart,
        'only "Never" is supported when podFailurePolicy is specified',
      ),
    );
  }
  // ValidateJobSpec: the selector, after the rest of the spec.
  const selector = spec.selector;
  if (selector === undefined || selector === null) out.push(required('spec.selector'));
  else out.push(...validateLabelSelector(selector, 'spec.selector'));
  const parsed = labelSelectorAsSelector(selector);
  const templateLabels = dig(spec, 'template', 'metadata', 'labels');
  if (parsed && !selectorMatches(parsed, strMap(templateLabels))) {
    out.push(
      invalid(
        'spec.template.metadata.labels',
        new GoValue(goStringMap(templateLabels)),
        '`selector` does not match template `labels`',
      ),
    );
  }
  return out;
}

/** Template fields a suspended Job that never started may still change (mutable scheduling directives). */
const SCHEDULING_DIRECTIVES = ['nodeSelector', 'affinity', 'tolerations', 'schedulingGates'];

function validateUpdate(obj: Obj, old: Obj): StatusCause[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const oldSpec = isObj(old.spec) ? old.spec : {};
  const out: StatusCause[] = [];
  const indexedScale =
    spec.completionMode === 'Indexed' &&
    oldSpec.completionMode === 'Indexed' &&
    numOr(spec.completions) === numOr(spec.parallelism) &&
    numOr(oldSpec.completions) === numOr(oldSpec.parallelism);
  if (!indexedScale) out.push(...immutable('spec.completions', spec.completions, oldSpec.completions));
  if (!semanticEqual(spec.selector, oldSpec.selector)) {
    out.push(invalid('spec.selector', new GoValue(goLabelSelector(spec.selector)), 'field is immutable'));
  }
  const template = structuredClone(isObj(spec.template) ? spec.template : {});
  const oldTemplate = structuredClone(isObj(oldSpec.template) ? oldSpec.template : {});
  if (spec.suspend === true && dig(old, 'status', 'startTime') === undefined) {
    const m = ensureObj(oldTemplate, 'metadata');
    const nm = isObj(template.metadata) ? template.metadata : {};
    m.labels = nm.labels;
    m.annotations = nm.annotations;
    const os = ensureObj(oldTemplate, 'spec');
    const ns = isObj(template.spec) ? template.spec : {};
    for (const f of SCHEDULING_DIRECTIVES) os[f] = ns[f];
  }
  out.push(...immutable('spec.template', template, oldTemplate, template));
  out.push(...immutable('spec.completionMode', spec.completionMode, oldSpec.completionMode));
  out.push(...immutable('spec.podFailurePolicy', spec.podFailurePolicy, oldSpec.podFailurePolicy));
  out.push(
    ...immutable('spec.backoffLimitPerIndex', spec.backoffLimitPerIndex, oldSpec.backoffLimitPerIndex),
  );
  return out;
}

const hasJobCondition = (status: Obj, type: string): boolean =>
  objs(status.conditions).find((c) => c.type === type)?.status === 'True';

/** printers.go `printJob`: STATUS, COMPLETIONS and DURATION. */
function jobCells(obj: Obj, now: Date): [string, string, string] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const status = isObj(obj.status) ? obj.status : {};
  const succeeded = int(status.succeeded);
  let completions: string;
  const c = numOr(spec.completions);
  if (c !== undefined) completions = `${succeeded}/${c}`;
  else {
    const parallelism = int(spec.parallelism);
    completions = parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
  }
  let duration = '';
  const start = parseTime(status.startTime);
  const end = parseTime(status.completionTime);
  if (start !== undefined) duration = humanDuration((end ?? now.getTime()) - start);
  let state: string;
  if (hasJobCondition(status, 'Complete')) state = 'Complete';
  else if (hasJobCondition(status, 'Failed')) state = 'Failed';
  else if (str(dig(obj, 'metadata', 'deletionTimestamp'))) state = 'Terminating';
  else if (hasJobCondition(status, 'Suspended')) state = 'Suspended';
  else if (hasJobCondition(status, 'FailureTarget')) state = 'FailureTarget';
  else state = 'Running';
  return [state, completions, duration];
}

const jobs: KindBehaviour = {
  defaults,
  prepare(obj, old) {
    if (!old) generateSelector(obj);
    // The shared labels object has served its purpose: the stored object gets two.
    const meta = isObj(obj.metadata) ? obj.metadata : undefined;
    const templateLabels = dig(obj, 'spec', 'template', 'metadata', 'labels');
    if (meta && isObj(templateLabels) && meta.labels === templateLabels) meta.labels = { ...templateLabels };
  },
  validate(obj, old) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out = validateGeneratedSelector(obj);
    out.push(...validateSpec(spec));
    // ValidateJob: an Indexed Job's last pod hostname (`<name>-<completions-1>`) must be a DNS label.
    const completions = numOr(spec.completions);
    if (str(spec.completionMode) === 'Indexed' && completions !== undefined && completions > 0) {
      const name = str(dig(obj, 'metadata', 'name'));
      const hostname = `${name}-${completions - 1}`;
      if (isDNS1123Label(hostname).length > 0)
        out.push(
          invalid('metadata.name', name, `will not able to create pod with invalid DNS label: ${hostname}`),
        );
    }
    if (old) out.push(...validateUpdate(obj, old));
    return out;
  },
  columns: [
    nameColumn(),
    col('Status', 'string', 'Status of the job.'),
    col('Completions', 'string', docs.jobStatus.succeeded),
    col('Duration', 'string', 'Time required to complete the job.'),
    ageColumn(),
    col('Containers', 'string', CONTAINERS_DOC, 1),
    col('Images', 'string', IMAGES_DOC, 1),
    col('Selector', 'string', docs.jobSpec.selector, 1),
  ],
  row(obj, now) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const [state, completions, duration] = jobCells(obj, now);
    const [names, images] = containerCells(spec.template);
    return [
      str(dig(obj, 'metadata', 'name')),
      state,
      completions,
      duration,
      since(dig(obj, 'metadata', 'creationTimestamp'), now),
      names,
      images,
      formatLabelSelector(spec.selector),
    ];
  },
  fieldSelectors: { 'status.successful': (o) => String(int(dig(o, 'status', 'succeeded'))) },
  unsupportedFieldLabel: (label) => `field label ${goQuote(label)} not supported for Job`,
};

/** `Job` (batch/v1 `jobs`): how the registry serves, validates and prints it. */
export const jobKind: ResourceType = defineKind({
  statusStrategy: specStatusStrategy,
  behaviour: jobs,
  group: 'batch',
  version: 'v1',
  defPackage: 'io.k8s.api.batch.v1',
  resource: 'jobs',
  kind: 'Job',
  categories: ['all'],
  generation: true,
  subresources: { status: true },
});
