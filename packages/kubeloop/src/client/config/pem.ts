/** Early checks of PEM certificates and keys, so that a broken one is reported where it was configured. */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { ConfigError } from './errors.js';
import type { Origin } from './types.js';

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Checks that `pem` holds one or more certificates; returns it unchanged. */
export function checkCertificates(pem: string, where: Origin, what: string): string {
  const blocks = pem.match(CERT_BLOCK);
  if (!blocks) throw new ConfigError(`${what} does not contain a PEM certificate`, where);
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (err) {
      throw new ConfigError(`${what} holds an invalid certificate: ${(err as Error).message}`, where, err);
    }
  }
  return pem;
}

/** Checks a client certificate and its key, and that they belong together. */
export function checkKeyPair(cert: string, key: string, certWhere: Origin, keyWhere: Origin): void {
  checkCertificates(cert, certWhere, 'the client certificate');
  let keyObject: KeyObject;
  try {
    keyObject = createPrivateKey(key);
  } catch (err) {
    throw new ConfigError(
      `the client key is not a valid PEM private key: ${(err as Error).message}`,
      keyWhere,
      err,
    );
  }
  const first = cert.match(CERT_BLOCK)?.[0] ?? cert;
  if (!new X509Certificate(first).checkPrivateKey(keyObject)) {
    throw new ConfigError('the client key does not match the client certificate', keyWhere);
  }
}

/** Decodes a `*-data` field (base64); Go's decoder rejects what is not base64, and so do we. */
export function decodeBase64Field(value: unknown, where: Origin): string {
  if (typeof value !== 'string') throw new ConfigError('must be a base64 string', where);
  const compact = value.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
    throw new ConfigError('is not valid base64', where);
  }
  return Buffer.from(compact, 'base64').toString('utf8');
}
