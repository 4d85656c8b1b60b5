import { createPrivateKey, X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueClientCertificate, issueServingCertificate } from './pki.js';

describe('pki', () => {
  it('creates a CA that signs serving and client certificates Node (OpenSSL) accepts', async () => {
    const ca = await createCertificateAuthority('test-ca');
    const caCert = new X509Certificate(ca.cert);
    expect(caCert.ca).toBe(true);
    expect(caCert.subject).toBe('CN=test-ca');
    expect(caCert.verify(caCert.publicKey)).toBe(true);
    expect(createPrivateKey(ca.key).asymmetricKeyType).toBe('ec');

    const serving = await issueServingCertificate(ca, ['localhost', '127.0.0.1', '::1', '10.0.0.7']);
    const s = new X509Certificate(serving.cert);
    expect(s.ca).toBe(false);
    expect(s.checkIssued(caCert)).toBe(true);
    expect(s.verify(caCert.publicKey)).toBe(true);
    expect(s.checkHost('localhost')).toBe('localhost');
    expect(s.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(s.checkIP('::1')).toBe('::1');
    expect(s.checkIP('10.0.0.7')).toBe('10.0.0.7');
    expect(s.checkIP('10.0.0.8')).toBeUndefined();
    expect(s.keyUsage).toContain('1.3.6.1.5.5.7.3.1');
    expect(Date.parse(s.validTo)).toBeGreaterThan(Date.now() + 300 * 24 * 3600 * 1000);
    expect(s.checkPrivateKey(createPrivateKey(serving.key))).toBe(true);

    const client = await issueClientCertificate(ca, 'alice', ['dev', 'ops']);
    const c = new X509Certificate(client.cert);
    expect(c.verify(caCert.publicKey)).toBe(true);
    expect(c.subject.split('\n')).toEqual(['O=dev', 'O=ops', 'CN=alice']);
    expect(c.keyUsage).toContain('1.3.6.1.5.5.7.3.2');
  });

  it('issues from a CA whose certificate came from elsewhere, matching its subject bytes', async () => {
    const ca = await createCertificateAuthority('other-ca');
    const leaf = new X509Certificate((await issueServingCertificate(ca, ['example.test'])).cert);
    expect(leaf.issuer).toBe('CN=other-ca');
    expect(leaf.checkIssued(new X509Certificate(ca.cert))).toBe(true);
  });
});
