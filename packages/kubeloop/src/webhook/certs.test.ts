import { writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueServingCertificate } from '../pki/index.js';
import { CertWatcher } from './certs.js';

describe('CertWatcher', () => {
  let dir: string;
  let watcher: CertWatcher | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubeloop-certwatch-'));
  });
  afterEach(async () => {
    watcher?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const pair = (name: string) => issueServingCertificate(createCertificateAuthority(name), ['127.0.0.1']);
  const write = async (p: { cert: string; key: string }) => {
    await writeFile(join(dir, 'tls.key'), p.key);
    await writeFile(join(dir, 'tls.crt'), p.cert);
  };

  it('skips a pair read between a truncation and its write (empty files), keeping the one serving', async () => {
    const first = pair('first');
    await write(first);
    const seen: string[] = [];
    watcher = new CertWatcher({ dir }, ({ cert }) => seen.push(cert), 3_600_000);
    await writeFile(join(dir, 'tls.crt'), '');
    await watcher.check();
    expect(seen).toEqual([]);
    await writeFile(join(dir, 'tls.crt'), first.cert);
    await watcher.check();
    expect(seen).toEqual([first.cert]);
  });

  it('answers a check made while a read is in flight only after a read that saw the files as they are now', async () => {
    const first = pair('first');
    const second = pair('second');
    await write(first);
    const seen: string[] = [];
    let during: Promise<void> | undefined;
    watcher = new CertWatcher(
      { dir },
      ({ cert }) => {
        seen.push(cert);
        if (cert !== first.cert) return;
        // The rotation lands while the read of the first pair is still in flight.
        writeFileSync(join(dir, 'tls.key'), second.key);
        writeFileSync(join(dir, 'tls.crt'), second.cert);
        during = watcher?.check();
      },
      3_600_000,
    );
    await watcher.check();
    await during;
    expect(seen).toEqual([first.cert, second.cert]);
  });
});
