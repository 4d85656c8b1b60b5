/** certificates.k8s.io/v1 CertificateSigningRequests: validation and printer. */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import {
  dig,
  duplicate,
  GoValue,
  humanDuration,
  invalid,
  isDNS1123Subdomain,
  isObj,
  notSupported,
  numOr,
  type Obj,
  objs,
  required,
  since,
  str,
  strs,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';

const CERTS = 'io.k8s.api.certificates.v1';
const KEY_USAGES = [
  'any',
  'cert sign',
  'client auth',
  'code signing',
  'content commitment',
  'crl sign',
  'data encipherment',
  'decipher only',
  'digital signature',
  'email protection',
  'encipher only',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'key agreement',
  'key encipherment',
  'microsoft sgc',
  'netscape sgc',
  'ocsp signing',
  's/mime',
  'server auth',
  'signing',
  'timestamping',
];
const CONDITION_TYPES = ['Approved', 'Denied', 'Failed'];

/** `%#v` of a `[]byte`, as field.Error prints it. */
const goBytes = (b: Buffer): GoValue =>
  new GoValue(`[]byte{${[...b].map((x) => `0x${x.toString(16)}`).join(', ')}}`);

/** `validateSignerName`: `<domain>/<path>`, the domain a DNS subdomain. */
function validateSignerName(name: string): StatusCause[] {
  const path = 'spec.signerName';
  if (!name) return [required(path, 'signerName must be provided')];
  const slash = name.indexOf('/');
  if (slash < 0)
    return [
      invalid(path, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'"),
    ];
  const out: StatusCause[] = [];
  for (const msg of isDNS1123Subdomain(name.slice(0, slash)))
    out.push(invalid(path, name.slice(0, slash), msg));
  if (slash === name.length - 1) out.push(invalid(path, name, 'validating path: must not be empty'));
  return out;
}

/** `ValidateCertificateRequest`'s rules: a PEM request, a signer, known usages, a sane duration. */
function validateCsr(obj: Obj): StatusCause[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const out: StatusCause[] = [];
  const request = str(spec.request);
  const bytes = Buffer.from(request, 'base64');
  if (!/-----BEGIN CERTIFICATE REQUEST-----/.test(bytes.toString('latin1')))
    out.push(
      invalid(
        'spec.request',
        // An absent request is a nil slice.
        typeof spec.request === 'string' ? goBytes(bytes) : new GoValue('[]byte(nil)'),
        'PEM block type must be CERTIFICATE REQUEST',
      ),
    );
  const usages = strs(spec.usages);
  if (usages.length === 0) out.push(required('spec.usages', 'usages must be provided'));
  usages.forEach((u, i) => {
    if (!KEY_USAGES.includes(u)) out.push(notSupported(`spec.usages[${i}]`, u, KEY_USAGES));
  });
  usages.forEach((u, i) => {
    if (usages.indexOf(u) < i) out.push(duplicate(`spec.usages[${i}]`, u));
  });
  out.push(...validateSignerName(str(spec.signerName)));
  const seconds = numOr(spec.expirationSeconds);
  if (seconds !== undefined && seconds < 600)
    out.push(
      invalid(
        'spec.expirationSeconds',
        seconds,
        'may not specify a duration less than 600 seconds (10 minutes)',
      ),
    );
  const seen = new Set<string>();
  objs(dig(obj, 'status', 'conditions')).forEach((c, i) => {
    const type = str(c.type);
    if (!type) out.push(required(`status.conditions[${i}].type`));
    else if (['Approved', 'Denied', 'Failed'].includes(type) && seen.has(type))
      out.push({
        reason: 'FieldValueDuplicate',
        field: `status.conditions[${i}].type`,
        message: `Duplicate value: ${JSON.stringify(type)}`,
      });
    seen.add(type);
  });
  if (seen.has('Approved') && seen.has('Denied'))
    out.push(
      invalid('status.conditions', '<conditions>', 'Approved and Denied conditions are mutually exclusive'),
    );
  return out;
}

/** printers.go `extractCSRStatus`: the condition types, `Pending` when none. */
function csrCondition(obj: Obj): string {
  const types = objs(dig(obj, 'status', 'conditions'))
    .map((c) => str(c.type))
    .filter((t) => CONDITION_TYPES.includes(t));
  const issued = str(dig(obj, 'status', 'certificate')) !== '';
  if (types.length === 0) return issued ? 'Issued' : 'Pending';
  return issued ? `${types.join(',')},Issued` : types.join(',');
}

const certificatesigningrequests: KindBehaviour = {
  /** The create strategy's PrepareForCreate: the request is the caller's, whatever the body said. */
  setRequester(obj, user) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    obj.spec = spec;
    spec.username = user.username;
    if (user.uid) spec.uid = user.uid;
    else delete spec.uid;
    if (user.groups.length > 0) spec.groups = [...user.groups];
    else delete spec.groups;
    delete spec.extra;
  },
  validate: validateCsr,
  columns: [
    nameColumn(),
    ageColumn(),
    col('SignerName', 'string', fieldDoc(`${CERTS}.CertificateSigningRequestSpec`, 'signerName')),
    col('Requestor', 'string', fieldDoc(`${CERTS}.CertificateSigningRequestSpec`, 'username')),
    col(
      'RequestedDuration',
      'string',
      fieldDoc(`${CERTS}.CertificateSigningRequestSpec`, 'expirationSeconds'),
    ),
    col('Condition', 'string', fieldDoc(`${CERTS}.CertificateSigningRequestStatus`, 'conditions')),
  ],
  row(obj, now) {
    const seconds = numOr(dig(obj, 'spec', 'expirationSeconds'));
    return [
      str(dig(obj, 'metadata', 'name')),
      since(dig(obj, 'metadata', 'creationTimestamp'), now),
      str(dig(obj, 'spec', 'signerName')),
      str(dig(obj, 'spec', 'username')),
      seconds === undefined ? '<none>' : humanDuration(seconds * 1000),
      csrCondition(obj),
    ];
  },
  fieldSelectors: { 'spec.signerName': (o) => str(dig(o, 'spec', 'signerName')) },
  fieldSelectorMetadata: ['metadata.name'],
};

/** `CertificateSigningRequest` (certificates.k8s.io/v1 `certificatesigningrequests`): how the registry serves, validates and prints it. */
export const certificateSigningRequestKind: ResourceType = defineKind({
  behaviour: certificatesigningrequests,
  group: 'certificates.k8s.io',
  version: 'v1',
  defPackage: 'io.k8s.api.certificates.v1',
  resource: 'certificatesigningrequests',
  kind: 'CertificateSigningRequest',
  namespaced: false,
  shortNames: ['csr'],
  nameValidation: 'path-segment',
  subresources: { status: true, approval: true },
});
