import { queryBool } from './params.js';

/**
 * What a request URL addresses, the way Kubernetes' `RequestInfoFactory` reads it:
 * `/api/v1/namespaces/ns/pods/name/status`, `/apis/apps/v1/deployments`, `/api/v1/watch/...`.
 */
export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** get, list, watch, create, update, patch, delete, deletecollection (resource requests), else the lowercased HTTP method. */
  verb: string;
  apiPrefix: string;
  group: string;
  version: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** Parses method + path (+ query for `watch=true`) into a {@link RequestInfo}. */
export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    group: '',
    version: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
  // One split; `i` walks it rather than slicing a new array per step.
  const parts = path.split('/').filter((p) => p !== '');
  if (parts.length === 0) return info;
  const prefix = parts[0]!;
  if (prefix !== 'api' && prefix !== 'apis') return info;
  info.apiPrefix = prefix;
  let i = 1;
  if (prefix === 'apis') {
    if (parts.length - i < 2) return info; // /apis or /apis/<group>: discovery
    info.group = parts[i++]!;
  }
  if (parts.length - i < 2) {
    if (parts.length - i === 1) info.version = parts[i]!;
    return info; // /api, /api/v1, /apis/g/v: discovery
  }
  info.version = parts[i++]!;
  info.isResourceRequest = true;

  let watchPath = false;
  if (parts[i] === 'watch') {
    watchPath = true;
    i++;
  }

  if (parts[i] === 'namespaces') {
    if (parts.length - i > 1) {
      info.namespace = parts[i + 1]!;
      if (parts.length - i > 2 && !NAMESPACE_SUBRESOURCES.has(parts[i + 2]!)) i += 2;
    }
  }
  const rest = parts.length - i;
  info.resource = parts[i] ?? '';
  if (rest >= 2) info.name = parts[i + 1]!;
  if (rest >= 3) info.subresource = parts[i + 2]!;
  if (rest > 3) info.subresource = parts.slice(i + 2).join('/');

  const isWatchQuery = queryBool(query, 'watch') === true;
  switch (method) {
    case 'GET':
    case 'HEAD':
      // `watch` in the query counts only without a name (RequestInfoFactory): a named GET is a get.
      info.verb = watchPath || (isWatchQuery && !info.name) ? 'watch' : info.name ? 'get' : 'list';
      break;
    case 'POST':
      info.verb = 'create';
      break;
    case 'PUT':
      info.verb = 'update';
      break;
    case 'PATCH':
      info.verb = 'patch';
      break;
    case 'DELETE':
      info.verb = info.name ? 'delete' : 'deletecollection';
      break;
    default:
      info.verb = method.toLowerCase();
  }
  // A watch of a single object by path becomes a watch of the collection filtered by name.
  if (info.verb === 'watch' && info.name) info.verb = 'watch';
  return info;
}
