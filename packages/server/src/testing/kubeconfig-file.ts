import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControlPlane } from '../control-plane.js';

/** A control plane's admin kubeconfig written to a private temporary directory. */
export interface KubeconfigFile {
  /** The directory holding the file; other tools' state (a HOME, kubectl's cache) can go here too. */
  dir: string;
  /** The kubeconfig's path (mode 0600), for `kubectl --kubeconfig`, `KUBECONFIG` or a Python client. */
  path: string;
  /** Removes the directory and everything in it. */
  remove(): void;
}

/**
 * Writes the admin kubeconfig of `cp` to a fresh temporary directory, for clients that read
 * kubeconfig files (kubectl, the Python client, client-node's `loadFromFile`).
 *
 * @example
 * ```ts
 * const env = await startTestEnv();
 * const kubeconfig = kubeconfigFile(env);
 * execFileSync('/usr/bin/python3', ['my_check.py'], { env: { ...process.env, KUBECONFIG: kubeconfig.path } });
 * kubeconfig.remove();
 * await env.stop();
 * ```
 */
export function kubeconfigFile(cp: Pick<ControlPlane, 'kubeconfig'>, prefix = 'kubeloop-'): KubeconfigFile {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const path = join(dir, 'kubeconfig');
  writeFileSync(path, cp.kubeconfig, { mode: 0o600 });
  return { dir, path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
