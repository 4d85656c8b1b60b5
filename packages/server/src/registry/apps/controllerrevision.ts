/**
 * The registry entry of `ControllerRevision` (apps/v1 `controllerrevisions`): its resource type and
 * validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import { dig, immutable, invalid, isObj, objs, required, since, str } from '../shared/util.js';
import type { ResourceType } from '../types.js';

/** apps/v1 ControllerRevisions: the history of DaemonSets and StatefulSets. */
const controllerrevisions: KindBehaviour = {
  validate(obj, old) {
    const out: StatusCause[] = [];
    if (obj.data === undefined || obj.data === null) out.push(required('data', 'data is mandatory'));
    if (typeof obj.revision === 'number' && obj.revision < 0)
      out.push(invalid('revision', obj.revision, 'must be greater than or equal to 0'));
    if (old) out.push(...immutable('data', obj.data, old.data));
    return out;
  },
  columns: [
    nameColumn(),
    col('Controller', 'string', 'Controller of the object'),
    col('Revision', 'string', 'Revision indicates the revision of the state represented by Data.'),
    ageColumn(),
  ],
  row(obj, now) {
    const ref = objs(dig(obj, 'metadata', 'ownerReferences')).find((r) => r.controller === true);
    let controller = '<none>';
    if (isObj(ref)) {
      const apiVersion = str(ref.apiVersion);
      const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
      controller = `${str(ref.kind).toLowerCase()}${group ? `.${group}` : ''}/${str(ref.name)}`;
    }
    return [
      str(dig(obj, 'metadata', 'name')),
      controller,
      typeof obj.revision === 'number' ? obj.revision : 0,
      since(dig(obj, 'metadata', 'creationTimestamp'), now),
    ];
  },
};

/** `ControllerRevision` (apps/v1 `controllerrevisions`): how the registry serves, validates and prints it. */
export const controllerRevisionKind: ResourceType = defineKind({
  behaviour: controllerrevisions,
  group: 'apps',
  version: 'v1',
  defPackage: 'io.k8s.api.apps.v1',
  resource: 'controllerrevisions',
  kind: 'ControllerRevision',
});
