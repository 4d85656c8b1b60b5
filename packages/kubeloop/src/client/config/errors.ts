/**
 * A broken or missing piece of client configuration, naming where it came from: the file
 * (kubeconfig, token file, service-account file) and the field inside it.
 *
 * @example
 * ```ts
 * try { await Client.fromKubeconfig(); }
 * catch (err) { if (err instanceof ConfigError) console.error(err.file, err.field, err.message); }
 * ```
 */
export class ConfigError extends Error {
  /** The file at fault, when there is one. */
  readonly file: string | undefined;
  /** The field at fault, e.g. `users["admin"].user.client-key` or `KUBERNETES_SERVICE_HOST`. */
  readonly field: string | undefined;

  constructor(
    problem: string,
    where: { file?: string | undefined; field?: string | undefined } = {},
    cause?: unknown,
  ) {
    const prefix = [where.file, where.field].filter((p) => p !== undefined && p !== '').join(': ');
    super(prefix ? `${prefix}: ${problem}` : problem, cause === undefined ? undefined : { cause });
    this.name = 'ConfigError';
    this.file = where.file;
    this.field = where.field;
  }
}

/** A file-system error in words (`no such file`, `permission denied`) rather than a bare code. */
export function describeFsError(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory, not a file';
    default:
      return err instanceof Error ? err.message : String(err);
  }
}
