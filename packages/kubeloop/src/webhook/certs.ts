/**
 * The webhook server's certificates: read from a directory (`tls.crt`, `tls.key`, as
 * controller-runtime's webhook server and a mounted cert-manager Secret lay them out), made with
 * a local CA when the directory has none, and watched so a rotation takes effect without a
 * restart (controller-runtime's `certwatcher`: file events plus a poll).
 */
import { existsSync, type FSWatcher, watch as fsWatch } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import { createCertificateAuthority, issueServingCertificate } from '../pki/index.js';

export { DEFAULT_CERT_DIR } from './defaults.js';

/** Where the serving certificate lives. */
export interface CertificateFiles {
  readonly dir: string;
  /** default `tls.crt` */
  readonly certName?: string;
  /** default `tls.key` */
  readonly keyName?: string;
}

/** The files read, and the CA bundle clients verify them with. */
export interface LoadedCertificate {
  readonly cert: string;
  readonly key: string;
  /** PEM of the CA (the directory's `ca.crt`, else the certificate chain itself). */
  readonly caBundle: string;
  /** True when the SDK generated the CA and certificate because the directory had none. */
  readonly generated: boolean;
}

const paths = (f: CertificateFiles) => ({
  cert: join(f.dir, f.certName ?? 'tls.crt'),
  key: join(f.dir, f.keyName ?? 'tls.key'),
  ca: join(f.dir, 'ca.crt'),
});

/**
 * Reads the certificate and key from `files.dir`; when neither exists, makes a local CA and a
 * serving certificate for `hosts`, writes `ca.crt`, `tls.crt`, `tls.key` there (so a restart
 * keeps the same CA and registered configurations stay valid) and returns them.
 */
export async function ensureCertificates(
  files: CertificateFiles,
  hosts: readonly string[],
): Promise<LoadedCertificate> {
  const p = paths(files);
  if (!existsSync(p.cert) && !existsSync(p.key)) {
    const ca = createCertificateAuthority('kubeloop-webhook-ca');
    const serving = issueServingCertificate(ca, hosts, 'kubeloop-webhook');
    await mkdir(files.dir, { recursive: true, mode: 0o700 });
    await writeFile(p.ca, ca.cert, { mode: 0o644 });
    await writeFile(p.key, serving.key, { mode: 0o600 });
    await writeFile(p.cert, serving.cert, { mode: 0o644 });
    return { cert: serving.cert, key: serving.key, caBundle: ca.cert, generated: true };
  }
  const [cert, key] = await Promise.all([readFile(p.cert, 'utf8'), readFile(p.key, 'utf8')]);
  const caBundle = existsSync(p.ca) ? await readFile(p.ca, 'utf8') : cert;
  return { cert, key, caBundle, generated: false };
}

/**
 * Watches a certificate and key pair and hands each new valid pair to `onChange`
 * (controller-runtime's `certwatcher`): `fs.watch` on the directory catches a Secret volume's
 * symlink swap at once, and a poll (default every 10 s) catches what events miss. A pair that
 * does not load (a half-written file, a key that does not match) is skipped; the previous one
 * keeps serving.
 */
export class CertWatcher {
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private last = '';
  private reading: Promise<void> | undefined;
  /** The read that follows the one in flight, shared by every check made meanwhile. */
  private queued: Promise<void> | undefined;

  constructor(
    private readonly files: CertificateFiles,
    private readonly onChange: (pair: { cert: string; key: string; context: SecureContext }) => void,
    private readonly pollIntervalMs = 10_000,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /** Starts watching; `current` is the pair already in use. */
  start(current: { cert: string; key: string }): void {
    this.last = current.cert + current.key;
    try {
      this.watcher = fsWatch(this.files.dir, () => this.check());
      this.watcher.on('error', (err) => this.onError(err));
    } catch (err) {
      // Without file events the poll still sees rotations.
      this.onError(err);
    }
    this.timer = setInterval(() => this.check(), this.pollIntervalMs);
    this.timer.unref();
  }

  /**
   * Reads the files now (also what events and the poll do); resolves once a read that began
   * after this call is done. A read already in flight may have seen the files before the change
   * the caller knows of (a file event fires after the first of two writes), so the caller waits
   * for the next one.
   */
  check(): Promise<void> {
    if (this.reading) {
      this.queued ??= this.reading.then(() => {
        this.queued = undefined;
        return this.check();
      });
      return this.queued;
    }
    this.reading = this.read().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async read(): Promise<void> {
    const p = paths(this.files);
    let cert: string;
    let key: string;
    try {
      [cert, key] = await Promise.all([readFile(p.cert, 'utf8'), readFile(p.key, 'utf8')]);
    } catch {
      return; // mid-rotation: the files come back on the next event or poll
    }
    // A file read between its truncation and its write is empty, and Node makes a context of
    // an empty pair that fails every handshake: mid-rotation too.
    if (cert.trim() === '' || key.trim() === '') return;
    if (cert + key === this.last) return;
    let context: SecureContext;
    try {
      context = createSecureContext({ cert, key });
    } catch (err) {
      this.onError(err);
      return;
    }
    this.last = cert + key;
    this.onChange({ cert, key, context });
  }

  stop(): void {
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
  }
}
