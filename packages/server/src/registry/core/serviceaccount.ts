/**
 * The registry entry of `ServiceAccount` (core/v1 `serviceaccounts`): its resource type and
 * validation, printer columns.
 */
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { docs } from '../shared/descriptions.js';
import { objs } from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { age, nameOf } from './shared.js';

// ---------------------------------------------------------------------------------------------
// ServiceAccounts
const serviceaccounts: KindBehaviour = {
  columns: [nameColumn(), col('Secrets', 'string', docs.serviceAccount.secrets), ageColumn()],
  row: (obj, now) => [nameOf(obj), objs(obj.secrets).length, age(obj, now)],
};

/** `ServiceAccount` (core/v1 `serviceaccounts`): how the registry serves, validates and prints it. */
export const serviceAccountKind: ResourceType = coreKind({
  behaviour: serviceaccounts,
  resource: 'serviceaccounts',
  kind: 'ServiceAccount',
  shortNames: ['sa'],
  subresources: { token: true },
  returnDeletedObject: true,
});
