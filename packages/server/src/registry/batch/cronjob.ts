/** batch/v1 CronJobs: defaults, validation (schedule, time zone, job template) and printer. */
import { cronScheduleError, knownTimeZone, type StatusCause } from 'kubeloop/api';
import { containerCells } from '../apps/shared.js';
import { validatePodTemplate } from '../core/podspec.js';
import { defaultPodTemplate } from '../core/podspec-defaults.js';
import {
  ageColumn,
  CONTAINERS_DOC,
  col,
  fieldDoc,
  IMAGES_DOC,
  type KindBehaviour,
  nameColumn,
} from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import { specStatusStrategy } from '../shared/status-strategy.js';
import {
  dig,
  ensureObj,
  formatLabelSelector,
  invalid,
  isObj,
  nonNegative,
  notSupported,
  numOr,
  type Obj,
  objs,
  required,
  since,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';

const BATCH = 'io.k8s.api.batch.v1';
const CONCURRENCY_POLICIES = ['Allow', 'Forbid', 'Replace'];
/** A CronJob's Jobs are named `<cronjob>-<11 characters>`, which must stay a DNS-1035 label. */
const MAX_NAME_LENGTH = 52;

/** `SetDefaults_CronJob` plus the pod defaults of the job template. */
function defaults(obj: Obj): void {
  const spec = ensureObj(obj, 'spec');
  if (!str(spec.concurrencyPolicy)) spec.concurrencyPolicy = 'Allow';
  if (typeof spec.suspend !== 'boolean') spec.suspend = false;
  if (numOr(spec.successfulJobsHistoryLimit) === undefined) spec.successfulJobsHistoryLimit = 3;
  if (numOr(spec.failedJobsHistoryLimit) === undefined) spec.failedJobsHistoryLimit = 1;
  const jobSpec = ensureObj(ensureObj(spec, 'jobTemplate'), 'spec');
  defaultPodTemplate(ensureObj(jobSpec, 'template'));
  ensureObj(obj, 'status');
}

/** `validateTimeZone`. */
function validateTimeZone(tz: unknown): StatusCause[] {
  if (tz === undefined || tz === null) return [];
  const zone = str(tz);
  const path = 'spec.timeZone';
  if (zone === '') return [invalid(path, zone, 'timeZone must be nil or non-empty string')];
  for (const part of zone.split('/')) {
    if (part === '.' || part === '..' || part.startsWith('-') || !/^[A-Za-z.\-_0-9+]{1,14}$/.test(part))
      return [invalid(path, zone, `unknown time zone ${zone}`)];
  }
  if (zone.toLowerCase() === 'local')
    return [
      invalid(
        path,
        zone,
        'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones',
      ),
    ];
  if (!knownTimeZone(zone)) return [invalid(path, zone, `unknown time zone ${zone}`)];
  return [];
}

/** `ValidateCronJobSpec` with `ValidateJobTemplateSpec`'s pod-template rules. */
function validateSpec(spec: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  const schedule = str(spec.schedule);
  if (!schedule) out.push(required('spec.schedule'));
  else {
    const err = cronScheduleError(schedule);
    if (err) out.push(invalid('spec.schedule', schedule, err));
    if (schedule.includes('TZ'))
      out.push(
        invalid(
          'spec.schedule',
          schedule,
          'cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
        ),
      );
  }
  out.push(...nonNegative('spec.startingDeadlineSeconds', spec.startingDeadlineSeconds));
  const policy = str(spec.concurrencyPolicy);
  if (!policy) out.push(required('spec.concurrencyPolicy'));
  else if (!CONCURRENCY_POLICIES.includes(policy))
    out.push(notSupported('spec.concurrencyPolicy', policy, CONCURRENCY_POLICIES));
  out.push(...nonNegative('spec.successfulJobsHistoryLimit', spec.successfulJobsHistoryLimit));
  out.push(...nonNegative('spec.failedJobsHistoryLimit', spec.failedJobsHistoryLimit));
  out.push(...validateTimeZone(spec.timeZone));

  const jobSpec = dig(spec, 'jobTemplate', 'spec');
  const js = isObj(jobSpec) ? jobSpec : {};
  for (const f of [
    'parallelism',
    'completions',
    'activeDeadlineSeconds',
    'backoffLimit',
    'ttlSecondsAfterFinished',
  ])
    out.push(...nonNegative(`spec.jobTemplate.spec.${f}`, js[f]));
  if (js.manualSelector === true)
    out.push(notSupported('spec.jobTemplate.spec.manualSelector', true, ['nil', 'false']));
  out.push(...validatePodTemplate(js.template, 'spec.jobTemplate.spec.template'));
  // SetDefaults_PodSpec turns an unset restartPolicy into Always, so Always reads as "not set".
  const restart = str(dig(js, 'template', 'spec', 'restartPolicy'));
  if (restart === 'Always' || restart === '')
    out.push(
      required('spec.jobTemplate.spec.template.spec.restartPolicy', 'valid values: "OnFailure", "Never"'),
    );
  else if (restart !== 'OnFailure' && restart !== 'Never')
    out.push(
      notSupported('spec.jobTemplate.spec.template.spec.restartPolicy', restart, ['OnFailure', 'Never']),
    );
  return out;
}

const cronjobs: KindBehaviour = {
  defaults,
  validate(obj) {
    const out: StatusCause[] = [];
    const name = str(dig(obj, 'metadata', 'name'));
    if (name.length > MAX_NAME_LENGTH)
      out.push(invalid('metadata.name', name, `must be no more than ${MAX_NAME_LENGTH} characters`));
    out.push(...validateSpec(isObj(obj.spec) ? obj.spec : {}));
    return out;
  },
  columns: [
    nameColumn(),
    col('Schedule', 'string', fieldDoc(`${BATCH}.CronJobSpec`, 'schedule')),
    col('Timezone', 'string', fieldDoc(`${BATCH}.CronJobSpec`, 'timeZone')),
    col('Suspend', 'boolean', fieldDoc(`${BATCH}.CronJobSpec`, 'suspend')),
    col('Active', 'integer', fieldDoc(`${BATCH}.CronJobStatus`, 'active')),
    col('Last Schedule', 'string', fieldDoc(`${BATCH}.CronJobStatus`, 'lastScheduleTime')),
    ageColumn(),
    col('Containers', 'string', CONTAINERS_DOC, 1),
    col('Images', 'string', IMAGES_DOC, 1),
    col('Selector', 'string', fieldDoc(`${BATCH}.JobSpec`, 'selector'), 1),
  ],
  row(obj, now) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const status = isObj(obj.status) ? obj.status : {};
    const jobSpec = dig(spec, 'jobTemplate', 'spec');
    const [names, images] = containerCells(dig(jobSpec, 'template'));
    const last = status.lastScheduleTime;
    return [
      str(dig(obj, 'metadata', 'name')),
      str(spec.schedule),
      str(spec.timeZone) || '<none>',
      // printBoolPtr: True/False, "<unset>" for a nil pointer.
      typeof spec.suspend === 'boolean' ? (spec.suspend ? 'True' : 'False') : '<unset>',
      objs(status.active).length,
      last ? since(last, now) : '<none>',
      since(dig(obj, 'metadata', 'creationTimestamp'), now),
      names,
      images,
      formatLabelSelector(dig(jobSpec, 'selector')),
    ];
  },
};

/** `CronJob` (batch/v1 `cronjobs`): how the registry serves, validates and prints it. */
export const cronJobKind: ResourceType = defineKind({
  statusStrategy: specStatusStrategy,
  behaviour: cronjobs,
  group: 'batch',
  version: 'v1',
  defPackage: 'io.k8s.api.batch.v1',
  resource: 'cronjobs',
  kind: 'CronJob',
  shortNames: ['cj'],
  categories: ['all'],
  generation: true,
  subresources: { status: true },
});
