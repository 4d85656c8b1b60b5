/**
 * The registry entry of `Event` (core/v1 `events`): its resource type and
 * defaults, validation, printer columns, field selectors.
 */
import type { StatusCause } from 'kubeloop/api';
import { col, type KindBehaviour } from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { docs } from '../shared/descriptions.js';
import {
  dig,
  int,
  invalid,
  isObj,
  isQualifiedName,
  type Obj,
  objAt,
  parseTime,
  required,
  since,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { nameOf } from './shared.js';

// ---------------------------------------------------------------------------------------------
// Events (core/v1; events.k8s.io/v1 events are printed by converting them to this shape)
/** The core/v1 view of an event, whichever API group it was written through. */

export interface CoreEventView {
  name: string;
  namespace: string;
  involvedObject: Obj;
  reason: string;
  message: string;
  source: Obj;
  firstTimestamp: unknown;
  lastTimestamp: unknown;
  count: number;
  type: string;
  eventTime: unknown;
  series: Obj | undefined;
  reportingController: string;
  reportingInstance: string;
  action: string;
}

export function coreEventView(obj: Obj): CoreEventView {
  return {
    name: nameOf(obj),
    namespace: str(dig(obj, 'metadata', 'namespace')),
    involvedObject: objAt(obj, 'involvedObject') ?? {},
    reason: str(obj.reason),
    message: str(obj.message),
    source: objAt(obj, 'source') ?? {},
    firstTimestamp: obj.firstTimestamp,
    lastTimestamp: obj.lastTimestamp,
    count: int(obj.count),
    type: str(obj.type),
    eventTime: obj.eventTime,
    series: objAt(obj, 'series'),
    reportingController: str(obj.reportingComponent),
    reportingInstance: str(obj.reportingInstance),
    action: str(obj.action),
  };
}
/** The cells of printers.go `printEvent` (wide form). */

export function eventRow(e: CoreEventView, now: Date): unknown[] {
  let first = since(e.firstTimestamp, now);
  if (parseTime(e.firstTimestamp) === undefined) first = since(e.eventTime, now);
  let last = since(e.lastTimestamp, now);
  if (parseTime(e.lastTimestamp) === undefined) last = first;
  let count = e.count;
  if (e.series) {
    last = since(e.series.lastObservedTime, now);
    count = int(e.series.count);
  } else if (count === 0) count = 1;
  const kind = str(e.involvedObject.kind).toLowerCase();
  const target = str(e.involvedObject.name) ? `${kind}/${str(e.involvedObject.name)}` : kind;
  const component = str(e.source.component) || e.reportingController;
  const instance = str(e.source.host) || e.reportingInstance;
  const source = instance ? `${component}, ${instance}` : component;
  return [
    last,
    e.type,
    e.reason,
    target,
    str(e.involvedObject.fieldPath),
    source,
    e.message.trim(),
    first,
    count,
    e.name,
  ];
}

export const eventColumns = () => [
  col('Last Seen', 'string', docs.event.lastTimestamp),
  col('Type', 'string', docs.event.type),
  col('Reason', 'string', docs.event.reason),
  col('Object', 'string', docs.event.involvedObject),
  col('Subobject', 'string', docs.objectReference.fieldPath, 1),
  col('Source', 'string', docs.event.source, 1),
  col('Message', 'string', docs.event.message),
  col('First Seen', 'string', docs.event.firstTimestamp, 1),
  col('Count', 'string', docs.event.count, 1),
  col('Name', 'string', docs.meta.name, 1, 'name'),
];
/** `legacyValidateEvent` on the core view; `reportingField` names reportingController as the request's API spells it. */

export function legacyValidateEvent(e: CoreEventView, reportingField: string): StatusCause[] {
  const out: StatusCause[] = [];
  const ns = str(e.involvedObject.namespace);
  if (parseTime(e.eventTime) === undefined) {
    if (!ns) {
      if (e.namespace !== '' && e.namespace !== 'default') {
        out.push(invalid('involvedObject.namespace', ns, 'does not match event.namespace'));
      }
    } else if (e.namespace !== ns)
      out.push(invalid('involvedObject.namespace', ns, 'does not match event.namespace'));
  } else {
    if (!ns && e.namespace !== 'default' && e.namespace !== 'kube-system') {
      out.push(invalid('involvedObject.namespace', ns, 'does not match event.namespace'));
    }
    if (!e.reportingController) out.push(required(reportingField));
    for (const m of isQualifiedName(e.reportingController))
      out.push(invalid(reportingField, e.reportingController, m));
    if (!e.reportingInstance) out.push(required('reportingInstance'));
    if (e.reportingInstance.length > 128)
      out.push(invalid('reportingInstance', '', 'can have at most 128 characters'));
    if (!e.action) out.push(required('action'));
    if (e.action.length > 128) out.push(invalid('action', '', 'can have at most 128 characters'));
    if (!e.reason) out.push(required('reason'));
    if (e.reason.length > 128) out.push(invalid('reason', '', 'can have at most 128 characters'));
    if (e.message.length > 1024) out.push(invalid('message', '', 'can have at most 1024 characters'));
  }
  return out;
}
const events: KindBehaviour = {
  // Events have no dependents: a delete never waits for the garbage collector (eventStrategy).
  storage: { garbageCollectionPolicy: 'Unsupported' },
  defaults(obj) {
    // Go serializes these structs and non-omitempty strings even when empty.
    if (!isObj(obj.involvedObject)) obj.involvedObject = {};
    if (!isObj(obj.source)) obj.source = {};
    for (const k of ['eventTime', 'firstTimestamp', 'lastTimestamp']) if (obj[k] === undefined) obj[k] = null;
    for (const k of ['reportingComponent', 'reportingInstance']) if (obj[k] === undefined) obj[k] = '';
  },
  validate: (obj) => legacyValidateEvent(coreEventView(obj), 'reportingComponent'),
  columns: eventColumns(),
  row: (obj, now) => eventRow(coreEventView(obj), now),
  fieldSelectors: {
    'involvedObject.kind': (o) => str(dig(o, 'involvedObject', 'kind')),
    'involvedObject.namespace': (o) => str(dig(o, 'involvedObject', 'namespace')),
    'involvedObject.name': (o) => str(dig(o, 'involvedObject', 'name')),
    'involvedObject.uid': (o) => str(dig(o, 'involvedObject', 'uid')),
    'involvedObject.apiVersion': (o) => str(dig(o, 'involvedObject', 'apiVersion')),
    'involvedObject.resourceVersion': (o) => str(dig(o, 'involvedObject', 'resourceVersion')),
    'involvedObject.fieldPath': (o) => str(dig(o, 'involvedObject', 'fieldPath')),
    reason: (o) => str(o.reason),
    reportingComponent: (o) => str(o.reportingComponent),
    source: (o) => str(dig(o, 'source', 'component')) || str(o.reportingComponent),
    type: (o) => str(o.type),
  },
};

/** `Event` (core/v1 `events`): how the registry serves, validates and prints it. */
export const eventKind: ResourceType = coreKind({
  behaviour: events,
  resource: 'events',
  kind: 'Event',
  // legacyValidateEvent leaves the name alone for core/v1: only the generic path-segment rule holds.
  nameValidation: 'path-segment',
  shortNames: ['ev'],
});
