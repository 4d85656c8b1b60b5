/**
 * Credentials of a request: an `Authorization` header and/or a TLS client certificate, from
 * whichever method the configuration names. Methods whose credentials change (token files,
 * exec plugins) refresh them when the server answers 401.
 */
import { readFile, stat } from 'node:fs/promises';
import { ConfigError, describeFsError } from '../config/errors.js';
import type { ConnectionConfig, Origin } from '../config/types.js';
import { ExecPlugin } from './exec.js';

/** What one request authenticates with. Compared by identity to know whether a refresh changed anything. */
export interface Credentials {
  /** Value of the `Authorization` header. */
  authorization?: string;
  /** PEM client certificate and key for the TLS handshake. */
  cert?: string;
  key?: string;
}

/** A source of credentials. */
export interface Authenticator {
  /** The credentials to use now (may read a file or run a plugin). */
  credentials(): Promise<Credentials>;
  /**
   * Called when the server answered 401 to a request made with `used`. Returns true when new
   * credentials are available, so the request is worth one more try.
   */
  refresh(used: Credentials): Promise<boolean>;
}

const NONE: Credentials = Object.freeze({});

class StaticAuthenticator implements Authenticator {
  constructor(private readonly creds: Credentials) {}
  credentials(): Promise<Credentials> {
    return Promise.resolve(this.creds);
  }
  refresh(): Promise<boolean> {
    return Promise.resolve(false);
  }
}

/**
 * A bearer token read from a file, re-read whenever the file changes (kubelet rotates projected
 * service-account tokens by swapping the file): one `stat` per request, a read only on change.
 * The last token read successfully stays in use while the file is briefly missing.
 */
export class TokenFileAuthenticator implements Authenticator {
  private current: Credentials | undefined;
  private stamp = '';

  constructor(
    readonly file: string,
    private readonly base: Credentials,
    private readonly origin: Origin | undefined,
    initialToken?: string,
  ) {
    if (initialToken) this.current = { ...base, authorization: `Bearer ${initialToken}` };
  }

  async credentials(): Promise<Credentials> {
    let stamp: string;
    try {
      const st = await stat(this.file);
      stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch (err) {
      if (this.current) return this.current;
      throw this.error(`cannot read token file ${this.file}: ${describeFsError(err)}`, err);
    }
    if (stamp !== this.stamp || !this.current) await this.read(stamp);
    return this.current!;
  }

  async refresh(used: Credentials): Promise<boolean> {
    this.stamp = '';
    try {
      await this.credentials();
    } catch {
      return false;
    }
    return this.current !== undefined && this.current.authorization !== used.authorization;
  }

  private async read(stamp: string): Promise<void> {
    let token: string;
    try {
      token = (await readFile(this.file, 'utf8')).trim();
    } catch (err) {
      if (this.current) return;
      throw this.error(`cannot read token file ${this.file}: ${describeFsError(err)}`, err);
    }
    if (token === '') {
      if (this.current) return;
      throw this.error(`token file ${this.file} is empty`);
    }
    this.stamp = stamp;
    if (this.current?.authorization !== `Bearer ${token}`)
      this.current = { ...this.base, authorization: `Bearer ${token}` };
  }

  private error(problem: string, cause?: unknown): ConfigError {
    return new ConfigError(problem, this.origin ?? { file: this.file }, cause);
  }
}

/** Credentials from an exec plugin, combined with a configured client certificate when the plugin gives only a token. */
class ExecAuthenticator implements Authenticator {
  constructor(
    private readonly plugin: ExecPlugin,
    private readonly base: Credentials,
  ) {}

  async credentials(): Promise<Credentials> {
    const out = await this.plugin.credentials();
    if (out.cert || !this.base.cert) return out;
    return this.merged(out);
  }

  async refresh(used: Credentials): Promise<boolean> {
    return this.plugin.refresh(used.authorization, used.cert);
  }

  private readonly cache = new WeakMap<Credentials, Credentials>();
  private merged(out: Credentials): Credentials {
    let m = this.cache.get(out);
    if (!m) {
      m = { ...this.base, ...out };
      this.cache.set(out, m);
    }
    return m;
  }
}

/** The authenticator a connection configuration calls for. */
export function createAuthenticator(config: ConnectionConfig): Authenticator {
  const base: Credentials =
    config.certData && config.keyData ? Object.freeze({ cert: config.certData, key: config.keyData }) : NONE;
  if (config.exec) {
    return new ExecAuthenticator(new ExecPlugin(config.exec, config, config.origins?.exec), base);
  }
  if (config.tokenFile) {
    return new TokenFileAuthenticator(config.tokenFile, base, config.origins?.tokenFile, config.token);
  }
  if (config.token)
    return new StaticAuthenticator(Object.freeze({ ...base, authorization: `Bearer ${config.token}` }));
  if (config.username !== undefined || config.password !== undefined) {
    const basic = Buffer.from(`${config.username ?? ''}:${config.password ?? ''}`).toString('base64');
    return new StaticAuthenticator(Object.freeze({ ...base, authorization: `Basic ${basic}` }));
  }
  return new StaticAuthenticator(base);
}
