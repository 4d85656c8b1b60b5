/**
 * The registry entry of `ConfigMap` (core/v1 `configmaps`): its resource type and
 * validation, printer columns.
 */
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { docs } from '../shared/descriptions.js';
import { invalid, isObj, strMap, tooLong } from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { age, immutableUpdate, MAX_SECRET_SIZE, nameOf, validateKeys } from './shared.js';

const configmaps: KindBehaviour = {
  validate(obj, old) {
    const out = immutableUpdate(obj, old, ['data', 'binaryData']);
    out.push(...validateKeys(obj.data, 'data'));
    const binary = isObj(obj.binaryData) ? obj.binaryData : {};
    for (const key of Object.keys(isObj(obj.data) ? obj.data : {})) {
      if (Object.hasOwn(binary, key))
        out.push(invalid(`data[${key}]`, key, 'duplicate of key present in binaryData'));
    }
    out.push(...validateKeys(obj.binaryData, 'binaryData'));
    let size = 0;
    for (const v of Object.values(strMap(obj.data))) size += Buffer.byteLength(v, 'utf8');
    for (const v of Object.values(strMap(obj.binaryData))) size += Buffer.from(v, 'base64').length;
    // field.NewPath(""), the whole object, which apimachinery prints as `[]`.
    if (size > MAX_SECRET_SIZE) out.push(tooLong('[]', MAX_SECRET_SIZE));
    return out;
  },
  columns: [nameColumn(), col('Data', 'string', docs.configMap.data), ageColumn()],
  row: (obj, now) => [
    nameOf(obj),
    Object.keys(isObj(obj.data) ? obj.data : {}).length +
      Object.keys(isObj(obj.binaryData) ? obj.binaryData : {}).length,
    age(obj, now),
  ],
};

/** `ConfigMap` (core/v1 `configmaps`): how the registry serves, validates and prints it. */
export const configMapKind: ResourceType = coreKind({
  behaviour: configmaps,
  resource: 'configmaps',
  kind: 'ConfigMap',
  shortNames: ['cm'],
});
