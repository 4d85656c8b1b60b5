/**
 * The key service account tokens are signed with (kube-apiserver's
 * `--service-account-signing-key-file`): RSA 2048, kept in the server's storage beside the CA so
 * that tokens stay valid across restarts of a `--data-dir` server. A new server generates it in
 * the background (RSA key generation takes a few hundred ms, more than the whole start-up
 * budget): it is made on first use, and until it exists no token can have been issued.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';

/** Where the key is kept (the journal's metadata, as PKCS#8 PEM). */
export interface KeyStore {
  get(): string | undefined;
  set(pem: string): void;
}

/** The key and what is derived from it. */
export interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** `keyIDFromPublicKey`: base64url (no padding) of the SHA-256 of the PKIX DER public key. */
  kid: string;
  /** The public key as the JWKS document lists it (go-jose's field order). */
  jwk: Record<string, string>;
}

function derive(privateKey: KeyObject): SigningKey {
  const publicKey = createPublicKey(privateKey);
  const der = publicKey.export({ type: 'spki', format: 'der' });
  const kid = createHash('sha256').update(der).digest('base64url');
  const { n, e } = publicKey.export({ format: 'jwk' });
  return { privateKey, publicKey, kid, jwk: { use: 'sig', kty: 'RSA', kid, alg: 'RS256', n: n!, e: e! } };
}

/**
 * The server's signing key: loaded at once when stored, else generated the first time a token is
 * issued or the JWKS is asked for (a server that never issues one never pays for it), off the
 * event loop.
 */
export class ServiceAccountSigningKey {
  private key: SigningKey | undefined;
  private pending: Promise<SigningKey> | undefined;

  constructor(
    private readonly store: KeyStore,
    private readonly log?: (msg: string, fields: Record<string, unknown>) => void,
  ) {
    const stored = store.get();
    if (stored) {
      this.key = derive(createPrivateKey(stored));
      this.pending = Promise.resolve(this.key);
    }
  }

  /** The key if it exists yet (verification: a token cannot predate the key). */
  current(): SigningKey | undefined {
    return this.key;
  }

  /** The key, made and stored on first use (issuing, and the JWKS document). */
  get(): Promise<SigningKey> {
    this.pending ??= new Promise<SigningKey>((resolve, reject) => {
      generateKeyPair('rsa', { modulusLength: 2048 }, (err, _pub, priv) => {
        if (err) return reject(err);
        const key = derive(priv);
        try {
          this.store.set(priv.export({ type: 'pkcs8', format: 'pem' }) as string);
        } catch (e) {
          // The server stopped (storage closed) while the key was being made: nothing was signed with it.
          this.log?.('service account signing key not persisted', { err: String(e) });
        }
        this.key = key;
        resolve(key);
      });
    });
    return this.pending;
  }

  /** Resolves once a key being generated is stored (so that the storage can close after it). */
  async settled(): Promise<void> {
    await this.pending?.catch(() => undefined);
  }
}
