/**
 * Exec credential plugins (`client.authentication.k8s.io/v1`): run a command that prints an
 * `ExecCredential`, use its token or client certificate until `expirationTimestamp`, and run it
 * again when the credentials expire or the server answers 401.
 */
import type { JsonObject as Obj } from '../../api/object.js';
import { ConfigError } from '../config/errors.js';
import type { ConnectionConfig, ExecConfig, Origin } from '../config/types.js';

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a plugin gave: an `Authorization` header value and/or a client certificate. */
export interface ExecCredentials {
  authorization?: string;
  cert?: string;
  key?: string;
}

interface Cached {
  creds: ExecCredentials;
  /** Epoch ms; undefined means "until the server rejects it". */
  expiresAt: number | undefined;
}

/** Runs one exec plugin and caches what it prints. Concurrent callers share one run. */
export class ExecPlugin {
  private cached: Cached | undefined;
  private running: Promise<Cached> | undefined;

  constructor(
    private readonly exec: ExecConfig,
    private readonly cluster: Pick<
      ConnectionConfig,
      'server' | 'caData' | 'tlsServerName' | 'insecureSkipTlsVerify'
    >,
    private readonly origin: Origin | undefined,
    private readonly now: () => number = Date.now,
  ) {
    if (exec.interactiveMode === 'Always') {
      // A library has no terminal to hand over to a plugin that insists on prompting.
      throw this.error(
        'exec plugin requires interactive mode (interactiveMode: Always), which a library client cannot provide',
      );
    }
  }

  /** Cached credentials while they are valid, else the plugin's fresh output. */
  async credentials(): Promise<ExecCredentials> {
    const c = this.cached;
    if (c && (c.expiresAt === undefined || this.now() < c.expiresAt)) return c.creds;
    return (await this.run()).creds;
  }

  /**
   * After a 401: runs the plugin again unless another caller already did since `used` was
   * handed out. True when the credentials changed.
   */
  async refresh(usedAuthorization: string | undefined, usedCert: string | undefined): Promise<boolean> {
    const c = this.cached;
    if (c && (c.creds.authorization !== usedAuthorization || c.creds.cert !== usedCert)) return true;
    this.cached = undefined;
    let next: Cached;
    try {
      next = await this.run();
    } catch {
      return false;
    }
    return next.creds.authorization !== usedAuthorization || next.creds.cert !== usedCert;
  }

  private run(): Promise<Cached> {
    this.running ??= this.execute().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async execute(): Promise<Cached> {
    const { stdout } = await this.spawn();
    const cached = this.parse(stdout);
    this.cached = cached;
    return cached;
  }

  private execInfo(): string {
    const spec: Obj = { interactive: false };
    if (this.exec.provideClusterInfo) {
      const cluster: Obj = { server: this.cluster.server };
      if (this.cluster.tlsServerName) cluster['tls-server-name'] = this.cluster.tlsServerName;
      if (this.cluster.insecureSkipTlsVerify) cluster['insecure-skip-tls-verify'] = true;
      if (this.cluster.caData) {
        cluster['certificate-authority-data'] = Buffer.from(this.cluster.caData).toString('base64');
      }
      if (this.exec.clusterConfig !== undefined) cluster.config = this.exec.clusterConfig;
      spec.cluster = cluster;
    }
    return JSON.stringify({ apiVersion: this.exec.apiVersion, kind: 'ExecCredential', spec });
  }

  private async spawn(): Promise<{ stdout: string }> {
    // Loaded here, not with the module: a process whose kubeconfig has no exec plugin (every
    // operator in a cluster) would otherwise load node:child_process at start (~4.5 ms of CPU).
    const { spawn } = await import('node:child_process');
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const e of this.exec.env ?? []) env[e.name] = e.value;
    env.KUBERNETES_EXEC_INFO = this.execInfo();
    return new Promise((resolve, reject) => {
      const child = spawn(this.exec.command, this.exec.args ?? [], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(this.exec.cwd !== undefined && { cwd: this.exec.cwd }),
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => err.push(d));
      child.on('error', (e: NodeJS.ErrnoException) => {
        const hint = this.exec.installHint ? `\n${this.exec.installHint}` : '';
        const problem =
          e.code === 'ENOENT'
            ? `exec plugin: executable ${this.exec.command} not found${hint}`
            : `exec plugin: cannot run ${this.exec.command}: ${e.message}${hint}`;
        reject(this.error(problem, e));
      });
      child.on('close', (code, signal) => {
        const stderr = Buffer.concat(err).toString('utf8').trim();
        if (code !== 0) {
          const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
          reject(this.error(`exec plugin ${this.exec.command} ${how}${stderr ? `: ${stderr}` : ''}`));
          return;
        }
        resolve({ stdout: Buffer.concat(out).toString('utf8') });
      });
    });
  }

  private parse(stdout: string): Cached {
    let doc: unknown;
    try {
      doc = JSON.parse(stdout);
    } catch (e) {
      throw this.error(
        `exec plugin ${this.exec.command} did not print an ExecCredential as JSON: ${(e as Error).message}`,
        e,
      );
    }
    if (!isObj(doc) || doc.kind !== 'ExecCredential') {
      throw this.error(
        `exec plugin ${this.exec.command} did not print an ExecCredential (kind: ExecCredential)`,
      );
    }
    if (doc.apiVersion !== this.exec.apiVersion) {
      throw this.error(
        `exec plugin is configured to use API version ${this.exec.apiVersion}, plugin returned version ${String(doc.apiVersion)}`,
      );
    }
    const status = doc.status;
    if (!isObj(status)) throw this.error("exec plugin didn't return a status field");
    const str = (k: string): string | undefined => {
      const v = status[k];
      if (v === undefined || v === null || v === '') return undefined;
      if (typeof v !== 'string') throw this.error(`exec plugin returned a non-string status.${k}`);
      return v;
    };
    const token = str('token');
    const cert = str('clientCertificateData');
    const key = str('clientKeyData');
    if (!token && !cert && !key) throw this.error("exec plugin didn't return a token or cert/key pair");
    if (Boolean(cert) !== Boolean(key))
      throw this.error('exec plugin returned only certificate or private key, not both');
    let expiresAt: number | undefined;
    const exp = str('expirationTimestamp');
    if (exp !== undefined) {
      expiresAt = Date.parse(exp);
      if (Number.isNaN(expiresAt))
        throw this.error(`exec plugin returned an invalid expirationTimestamp ${JSON.stringify(exp)}`);
    }
    const creds: ExecCredentials = Object.freeze({
      ...(token && { authorization: `Bearer ${token}` }),
      ...(cert && key && { cert, key }),
    });
    return { creds, expiresAt };
  }

  private error(problem: string, cause?: unknown): ConfigError {
    return new ConfigError(problem, this.origin ?? {}, cause);
  }
}
