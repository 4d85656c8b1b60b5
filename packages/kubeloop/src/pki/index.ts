import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  verify,
} from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * Certificates for a local cluster and its webhooks, issued with `node:crypto` and a small DER
 * encoder: an ECDSA P-256 CA, serving certificates, client certificates for users, and the
 * signing of certificate requests. The control plane and the SDK's webhook server share it.
 *
 * Hand-written rather than `@peculiar/x509` (the project's choice for certificates elsewhere)
 * because loading that library and its dependency-injection container cost the control plane
 * about 14 MB of RSS and 200 ms of start-up, for three fixed certificate shapes.
 */

/** A certificate and its private key, PEM-encoded. */
export interface KeyPair {
  cert: string;
  key: string;
}

const DAY = 24 * 60 * 60 * 1000;

// --- DER -----------------------------------------------------------------------------------

function der(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, content]);
}
const seq = (...items: Buffer[]) => der(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => der(0x31, Buffer.concat(items));
const octets = (b: Buffer) => der(0x04, b);
const bits = (b: Buffer, unused = 0) => der(0x03, Buffer.concat([Buffer.from([unused]), b]));
const bool = (v: boolean) => der(0x01, Buffer.from([v ? 0xff : 0]));
const utf8 = (s: string) => der(0x0c, Buffer.from(s, 'utf8'));
const explicit = (n: number, content: Buffer) => der(0xa0 | n, content);

function integer(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0 && (b[i + 1]! & 0x80) === 0) i++;
  const v = b.subarray(i);
  return der(0x02, (v[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), v]) : v);
}

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const chunk = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return der(0x06, Buffer.from(out));
}

function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14); // YYYYMMDDHHMMSS
  return d.getUTCFullYear() < 2050
    ? der(0x17, Buffer.from(`${iso.slice(2)}Z`, 'ascii'))
    : der(0x18, Buffer.from(`${iso}Z`, 'ascii'));
}

const OID = {
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

/** Key usage bits, numbered as in RFC 5280 (digitalSignature = 0 …). */
const USAGE = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 } as const;

function keyUsage(...usages: (keyof typeof USAGE)[]): Buffer {
  let byte = 0;
  for (const u of usages) byte |= 0x80 >> USAGE[u];
  let unused = 0;
  while (unused < 7 && ((byte >> unused) & 1) === 0) unused++;
  return bits(Buffer.from([byte]), unused);
}

function name(commonName: string, organizations: readonly string[] = []): Buffer {
  const rdn = (type: string, value: string) => set(seq(oid(type), utf8(value)));
  return seq(...organizations.map((o) => rdn(OID.organization, o)), rdn(OID.commonName, commonName));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));
}

function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  const [head = '', tail = ''] = ip.split('::');
  const groups = (s: string) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = ip.includes('::') ? groups(tail) : [];
  const all = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return Buffer.from(all.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]));
}

function subjectAltNames(hosts: readonly string[]): Buffer {
  return seq(
    ...[...new Set(hosts)].map((h) =>
      isIPv4(h) || isIPv6(h) ? der(0x87, ipBytes(h)) : der(0x82, Buffer.from(h, 'ascii')),
    ),
  );
}

/** SHA-1 of the public key's bits (RFC 5280's method 1 for key identifiers). */
function keyId(key: KeyObject): Buffer {
  const spki = key.export({ type: 'spki', format: 'der' });
  // For P-256 the BIT STRING holding the point closes the SubjectPublicKeyInfo.
  return createHash('sha1')
    .update(spki.subarray(spki.length - 65))
    .digest();
}

interface Template {
  subject: Buffer;
  issuer: Buffer;
  publicKey: KeyObject;
  signingKey: KeyObject;
  days: number;
  /** Overrides `days`: the end of validity (a CSR's `expirationSeconds`). */
  notAfter?: Date;
  extensions: Buffer[];
}

function certificate(t: Template): string {
  const now = Date.now();
  const algorithm = seq(oid(OID.ecdsaWithSHA256));
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    algorithm,
    t.issuer,
    seq(time(new Date(now - DAY)), time(t.notAfter ?? new Date(now + t.days * DAY))),
    t.subject,
    t.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, seq(...t.extensions)),
  );
  const signature = sign('sha256', tbs, { key: t.signingKey, dsaEncoding: 'der' });
  const cert = seq(tbs, algorithm, bits(signature));
  const b64 = cert.toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END CERTIFICATE-----\n`;
}

function newKey(): { publicKey: KeyObject; privateKey: KeyObject; pem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { publicKey, privateKey, pem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}

/** Reads one TLV at `at`: where its content starts and where the element ends. */
function readTlv(buf: Buffer, at: number): { content: number; end: number } {
  let len = buf[at + 1]!;
  let content = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[content + i]!;
    content += n;
  }
  return { content, end: content + len };
}

/**
 * The subject Name of a certificate, as its exact DER bytes: an issued certificate's issuer must
 * match them byte for byte (a CA kept in a data directory may come from another encoder).
 */
function subjectOf(certPem: string): Buffer {
  const d = Buffer.from(certPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const tbs = readTlv(d, readTlv(d, 0).content);
  let at = tbs.content;
  // version [0], serialNumber, signature, issuer, validity, then subject
  if (d[at] === 0xa0) at = readTlv(d, at).end;
  for (let i = 0; i < 4; i++) at = readTlv(d, at).end;
  return d.subarray(at, readTlv(d, at).end);
}

/** The CA's subject and key, read back from its PEM. */
function loadCa(ca: KeyPair): { subject: Buffer; key: KeyObject; keyId: Buffer } {
  const key = createPrivateKey(ca.key);
  return { subject: subjectOf(ca.cert), key, keyId: keyId(createPublicKey(key)) };
}

/** Generates the cluster's certificate authority (ECDSA P-256, 10 years). */
export function createCertificateAuthority(commonName = 'kubeloop-ca'): KeyPair {
  const k = newKey();
  const subject = name(commonName);
  const cert = certificate({
    subject,
    issuer: subject,
    publicKey: k.publicKey,
    signingKey: k.privateKey,
    days: 3650,
    extensions: [
      extension(OID.basicConstraints, true, seq(bool(true))),
      extension(OID.keyUsage, true, keyUsage('digitalSignature', 'keyCertSign', 'cRLSign')),
      extension(OID.subjectKeyIdentifier, false, octets(keyId(k.publicKey))),
    ],
  });
  return { cert, key: k.pem };
}

/** Issues a serving certificate for `hosts` (DNS names and IP addresses), signed by `ca`. */
export function issueServingCertificate(
  ca: KeyPair,
  hosts: readonly string[],
  commonName = 'kubeloop-apiserver',
  days = 365,
): KeyPair {
  const issuer = loadCa(ca);
  const k = newKey();
  const cert = certificate({
    subject: name(commonName),
    issuer: issuer.subject,
    publicKey: k.publicKey,
    signingKey: issuer.key,
    days,
    extensions: [
      extension(OID.basicConstraints, true, seq()),
      extension(OID.keyUsage, true, keyUsage('digitalSignature', 'keyEncipherment')),
      extension(OID.extKeyUsage, false, seq(oid(OID.serverAuth))),
      extension(OID.subjectAltName, false, subjectAltNames(hosts)),
      extension(OID.authorityKeyIdentifier, false, seq(der(0x80, issuer.keyId))),
    ],
  });
  return { cert, key: k.pem };
}

/**
 * Issues a client certificate for `user` in `groups` (subject CN and O, as kube-apiserver's x509
 * authenticator reads them), signed by `ca`.
 */
export function issueClientCertificate(ca: KeyPair, user: string, groups: readonly string[] = []): KeyPair {
  const issuer = loadCa(ca);
  const k = newKey();
  const cert = certificate({
    subject: name(user, groups),
    issuer: issuer.subject,
    publicKey: k.publicKey,
    signingKey: issuer.key,
    days: 365,
    extensions: [
      extension(OID.basicConstraints, true, seq()),
      extension(OID.keyUsage, true, keyUsage('digitalSignature')),
      extension(OID.extKeyUsage, false, seq(oid(OID.clientAuth))),
      extension(OID.authorityKeyIdentifier, false, seq(der(0x80, issuer.keyId))),
    ],
  });
  return { cert, key: k.pem };
}

/** A PKCS#10 request's subject (exact DER) and public key, its self-signature checked. */
export function readCertificateRequest(pem: string): { subject: Buffer; publicKey: KeyObject } {
  const d = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const outer = readTlv(d, 0);
  const info = readTlv(d, outer.content);
  const version = readTlv(d, info.content);
  const subjectEnd = readTlv(d, version.end).end;
  const spkiEnd = readTlv(d, subjectEnd).end;
  const subject = d.subarray(version.end, subjectEnd);
  const publicKey = createPublicKey({ key: d.subarray(subjectEnd, spkiEnd), format: 'der', type: 'spki' });
  const algorithm = readTlv(d, info.end);
  const signature = readTlv(d, algorithm.end);
  // The BIT STRING's first byte counts unused bits (0 for signatures).
  const sig = d.subarray(signature.content + 1, signature.end);
  const ok = verify('sha256', d.subarray(outer.content, info.end), publicKey, sig);
  if (!ok) throw new Error('the request is not signed by its own key');
  return { subject, publicKey };
}

/** What a signed certificate may be used for, in CertificateSigningRequest `usages` terms. */
export type CertificateUsage = 'digital signature' | 'key encipherment' | 'client auth' | 'server auth';

/**
 * Signs a PKCS#10 request with `ca` (the CertificateSigningRequest signers of
 * kube-controller-manager): the request's subject and key, the given usages, valid until `notAfter`.
 */
export function signCertificateRequest(
  ca: KeyPair,
  requestPem: string,
  usages: readonly CertificateUsage[],
  notAfter: Date,
): string {
  const issuer = loadCa(ca);
  const { subject, publicKey } = readCertificateRequest(requestPem);
  const bitsOf = usages.flatMap((u) =>
    u === 'digital signature'
      ? ['digitalSignature' as const]
      : u === 'key encipherment'
        ? ['keyEncipherment' as const]
        : [],
  );
  const ext = usages.flatMap((u) =>
    u === 'client auth' ? [oid(OID.clientAuth)] : u === 'server auth' ? [oid(OID.serverAuth)] : [],
  );
  return certificate({
    subject,
    issuer: issuer.subject,
    publicKey,
    signingKey: issuer.key,
    days: 365,
    notAfter,
    extensions: [
      extension(OID.basicConstraints, true, seq()),
      ...(bitsOf.length > 0 ? [extension(OID.keyUsage, true, keyUsage(...bitsOf))] : []),
      ...(ext.length > 0 ? [extension(OID.extKeyUsage, false, seq(...ext))] : []),
      extension(OID.authorityKeyIdentifier, false, seq(der(0x80, issuer.keyId))),
    ],
  });
}
