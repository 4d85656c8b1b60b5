/** Names of scaffolded things, checked as Kubernetes checks them. */
import { pluralOf } from 'kubeloop';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Throws unless `value` is a DNS-1123 label (a project's name, a group). */
export function checkLabel(what: string, value: string): string {
  if (value.length > 63 || !DNS1123_LABEL.test(value))
    throw new Error(
      `${what} ${JSON.stringify(value)} must be a DNS-1123 label: lower case letters, digits and '-', starting and ending with a letter or digit`,
    );
  return value;
}

/** Throws unless `value` is a DNS-1123 subdomain (a domain). */
export function checkSubdomain(what: string, value: string): string {
  if (value.length > 253 || !DNS1123_SUBDOMAIN.test(value))
    throw new Error(`${what} ${JSON.stringify(value)} must be a DNS-1123 subdomain, e.g. example.com`);
  return value;
}

/** Throws unless `value` is a Kubernetes API version (`v1`, `v1alpha1`, `v2beta3`). */
export function checkVersion(value: string): string {
  if (!/^v\d+((alpha|beta)\d+)?$/.test(value))
    throw new Error(
      `--version ${JSON.stringify(value)} must be a Kubernetes version: v1, v1alpha1, v2beta1…`,
    );
  return value;
}

/** Throws unless `value` is a CamelCase kind starting with an upper case letter. */
export function checkKind(value: string): string {
  if (!/^[A-Z][A-Za-z0-9]*$/.test(value) || value.length > 63)
    throw new Error(
      `--kind ${JSON.stringify(value)} must be CamelCase, starting with an upper case letter (e.g. Memcached)`,
    );
  return value;
}

/** `Memcached` → `memcached`, `CronJob` → `cronjob` (file names, as kubebuilder's). */
export function lowerKind(kind: string): string {
  return kind.toLowerCase();
}

/** `CronJob` → `cronJob` (a value's identifier). */
export function camelKind(kind: string): string {
  return kind.charAt(0).toLowerCase() + kind.slice(1);
}

/** The resource's plural, as `defineResource` derives it. */
export function pluralFor(kind: string): string {
  return pluralOf(kind);
}

/** A project's name from a folder's name: lower case, other characters as '-'. */
export function projectNameFrom(folder: string): string {
  const name = folder
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return name === '' ? 'operator' : name;
}

/**
 * `kind` with its indefinite article, as it is read aloud: "an EtcdCluster", "a Memcached",
 * "a UserProfile" (a vowel letter sounding as a consonant), "an HourlyJob" (a silent h).
 */
export function withArticle(kind: string, capital = false): string {
  const vowelSound =
    (/^[aeiou]/i.test(kind) && !/^(uni|use|usa|usu|uti|ure|euro|eu[^a-z]|one|once)/i.test(kind)) ||
    /^(hour|honest|honou?r|heir)/i.test(kind) ||
    // An acronym spelled out: "an SQLServer", "an XMLDoc", "an NFSShare".
    /^[FHLMNRSX][A-Z]/.test(kind);
  const article = vowelSound ? 'an' : 'a';
  return `${capital ? article.charAt(0).toUpperCase() + article.slice(1) : article} ${kind}`;
}
