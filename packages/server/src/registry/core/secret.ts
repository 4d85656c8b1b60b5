/**
 * The registry entry of `Secret` (core/v1 `secrets`): its resource type and
 * defaults, validation, printer columns, field selectors.
 */
import type { StatusCause } from 'kubeloop/api';
import { goJsonSyntaxError, goJsonTypeName } from '../../util/go-json.js';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { docs } from '../shared/descriptions.js';
import { def, dig, ensureObj, invalid, isObj, required, str, strMap, tooLong } from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { age, immutableUpdate, MAX_SECRET_SIZE, nameOf, validateKeys } from './shared.js';

const secrets: KindBehaviour = {
  defaults(obj) {
    def(obj, 'type', 'Opaque');
    // The v1 → internal conversion folds `stringData` into `data`; stringData wins and is never stored.
    if (isObj(obj.stringData)) {
      const data = ensureObj(obj, 'data');
      for (const [k, v] of Object.entries(strMap(obj.stringData)))
        data[k] = Buffer.from(v, 'utf8').toString('base64');
      delete obj.stringData;
    }
  },
  validate(obj, old) {
    const out: StatusCause[] = [];
    if (old) {
      if (str(obj.type) !== str(old.type)) out.push(invalid('type', str(obj.type), 'field is immutable'));
      out.push(...immutableUpdate(obj, old, ['data']));
    }
    out.push(...validateKeys(obj.data, 'data'));
    const data = strMap(obj.data);
    let size = 0;
    for (const v of Object.values(data)) size += Buffer.from(v, 'base64').length;
    if (size > MAX_SECRET_SIZE) out.push(tooLong('data', MAX_SECRET_SIZE));
    const has = (k: string): boolean => Object.hasOwn(data, k);
    switch (str(obj.type)) {
      case 'kubernetes.io/service-account-token':
        if (!str(dig(obj, 'metadata', 'annotations', 'kubernetes.io/service-account.name'))) {
          out.push(required('metadata.annotations[kubernetes.io/service-account.name]'));
        }
        break;
      case 'kubernetes.io/dockercfg':
      case 'kubernetes.io/dockerconfigjson': {
        const key = obj.type === 'kubernetes.io/dockercfg' ? '.dockercfg' : '.dockerconfigjson';
        if (!has(key)) out.push(required(`data[${key}]`));
        else {
          // json.Unmarshal into a map[string]interface{}: Go's syntax error, else its type error (null is an empty map).
          const bytes = Buffer.from(data[key]!, 'base64');
          let message = goJsonSyntaxError(bytes);
          if (message === undefined) {
            const parsed: unknown = JSON.parse(bytes.toString('utf8'));
            if (parsed !== null && !isObj(parsed))
              message = `json: cannot unmarshal ${goJsonTypeName(parsed)} into Go value of type map[string]interface {}`;
          }
          if (message !== undefined) out.push(invalid(`data[${key}]`, '<secret contents redacted>', message));
        }
        break;
      }
      case 'kubernetes.io/basic-auth':
        if (!has('username') && !has('password'))
          out.push(required('data[username]'), required('data[password]'));
        break;
      case 'kubernetes.io/ssh-auth':
        if (!data['ssh-privatekey']) out.push(required('data[ssh-privatekey]'));
        break;
      case 'kubernetes.io/tls':
        if (!has('tls.crt')) out.push(required('data[tls.crt]'));
        if (!has('tls.key')) out.push(required('data[tls.key]'));
        break;
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('Type', 'string', docs.secret.type),
    col('Data', 'string', docs.secret.data),
    ageColumn(),
  ],
  row: (obj, now) => [nameOf(obj), str(obj.type), Object.keys(strMap(obj.data)).length, age(obj, now)],
  fieldSelectors: { type: (o) => str(o.type) },
};

/** `Secret` (core/v1 `secrets`): how the registry serves, validates and prints it. */
export const secretKind: ResourceType = coreKind({ behaviour: secrets, resource: 'secrets', kind: 'Secret' });
