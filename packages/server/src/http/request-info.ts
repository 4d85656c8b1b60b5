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
  let parts = path.split('/').filter((p) => p !== '');
  if (parts.length === 0) return info;
  const prefix = parts[0]!;
  if (prefix !== 'api' && prefix !== 'apis') return info;
  info.apiPrefix = prefix;
  parts = parts.slice(1);
  if (prefix === 'apis') {
    if (parts.length < 2) return info; // /apis or /apis/<group>: discovery
    info.group = parts[0]!;
    parts = parts.slice(1);
  }
  if (parts.length < 2) {
    if (parts.length === 1) info.version = parts[0]!;
    return info; // /api, /api/v1, /apis/g/v: discovery
  }
  info.version = parts[0]!;
  parts = parts.slice(1);
  info.isResourceRequest = true;

  let watchPath = false;
  if (parts[0] === 'watch') {
    watchPath = true;
    parts = parts.slice(1);
  }

  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      info.namespace = parts[1]!;
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
    }
  }
  info.resource = parts[0] ?? '';
  if (parts.length >= 2) info.name = parts[1]!;
  if (parts.length >= 3) info.subresource = parts[2]!;
  if (parts.length > 3) info.subresource = parts.slice(2).join('/');

  const isWatchQuery = query.get('watch') === 'true' || query.get('watch') === '1';
  switch (method) {
    case 'GET':
    case 'HEAD':
      info.verb = watchPath || isWatchQuery ? 'watch' : info.name ? 'get' : 'list';
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
