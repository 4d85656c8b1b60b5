/**
 * How a Kubernetes API server checks where a webhook is called: k8s.io/apiserver's
 * `util/webhook/validation.go` (`ValidateWebhookURL`, `ValidateWebhookService`), shared by
 * admission webhook configurations and CRD conversion webhooks, word for word.
 */
import { fieldErrors } from './field-errors.js';
import { isDNS1123Subdomain } from './names.js';
import type { StatusCause } from './status.js';

const FORM = '; desired format: https://host[/path]';

/** Go's `url.Parse` fields the checks read. WHATWG's parser refuses what Go reads as relative. */
function goUrlParts(raw: string): {
  scheme: string;
  host: string;
  user: string;
  fragment: string;
  query: string;
} {
  try {
    const u = new URL(raw);
    return {
      scheme: u.protocol.slice(0, -1),
      host: u.host,
      user: u.password ? `${u.username}:${u.password}` : u.username,
      fragment: u.hash.slice(1),
      query: u.search.slice(1),
    };
  } catch {
    // Go parses it anyway (a relative reference, or a scheme with nothing Go calls a host).
    const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(raw)?.[1]?.toLowerCase() ?? '';
    const hash = raw.indexOf('#');
    const query = raw.indexOf('?');
    return {
      scheme,
      host: '',
      user: '',
      fragment: hash >= 0 ? raw.slice(hash + 1) : '',
      query: query >= 0 ? raw.slice(query + 1, hash > query ? hash : undefined) : '',
    };
  }
}

/** `ValidateWebhookURL`: an https URL with a host and no user information, fragment or query. */
export function validateWebhookURL(path: string, raw: string, forceHttps = true): StatusCause[] {
  const u = goUrlParts(raw);
  const out: StatusCause[] = [];
  if (forceHttps && u.scheme !== 'https')
    out.push(fieldErrors.invalid(path, u.scheme, `'https' is the only allowed URL scheme${FORM}`));
  if (u.host === '') out.push(fieldErrors.invalid(path, u.host, `host must be provided${FORM}`));
  if (u.user !== '')
    out.push(fieldErrors.invalid(path, u.user, 'user information is not permitted in the URL'));
  if (u.fragment !== '')
    out.push(fieldErrors.invalid(path, u.fragment, 'fragments are not permitted in the URL'));
  if (u.query !== '')
    out.push(fieldErrors.invalid(path, u.query, 'query parameters are not permitted in the URL'));
  return out;
}

/**
 * `ValidateWebhookService`: a named Service in a namespace, a valid port, and a path of DNS
 * subdomain segments.
 */
export function validateWebhookService(
  path: string,
  namespace: string,
  name: string,
  urlPath: string | undefined,
  port: number,
): StatusCause[] {
  const out: StatusCause[] = [];
  if (name === '') out.push(fieldErrors.required(`${path}.name`, 'service name is required'));
  if (namespace === '') out.push(fieldErrors.required(`${path}.namespace`, 'service namespace is required'));
  if (!(Number.isInteger(port) && port >= 1 && port <= 65535))
    out.push(
      fieldErrors.invalid(`${path}.port`, port, 'port is not valid: must be between 1 and 65535, inclusive'),
    );
  if (urlPath === undefined || urlPath === '' || urlPath === '/') return out;
  const p = `${path}.path`;
  if (urlPath === '//') return [...out, fieldErrors.invalid(p, urlPath, 'segment[0] may not be empty')];
  if (!urlPath.startsWith('/')) out.push(fieldErrors.invalid(p, urlPath, "must start with a '/'"));
  let rest = urlPath.slice(1);
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  rest.split('/').forEach((step, i) => {
    if (step === '') out.push(fieldErrors.invalid(p, urlPath, `segment[${i}] may not be empty`));
    else
      for (const failure of isDNS1123Subdomain(step))
        out.push(fieldErrors.invalid(p, urlPath, `segment[${i}]: ${failure}`));
  });
  return out;
}
