/**
 * The log backend (`plugin/pkg/audit/log`): one JSON event per line, appended to
 * `--audit-log-path` (`-` is standard output), in the order the stages happen. With
 * `--audit-log-maxsize`, the file is rotated as kube's lumberjack rotates it: renamed to
 * `<name>-<timestamp><ext>`, keeping at most `--audit-log-maxbackup` old files no older than
 * `--audit-log-maxage` days.
 */
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';

/** Where events go. */
export interface AuditSink {
  write(line: string): void;
  close(): void;
}

/** Options of the log backend (kube-apiserver's `--audit-log-*` flags). */
export interface AuditLogOptions {
  /** `--audit-log-path`: the file, or `-` for standard output. */
  path: string;
  /** `--audit-log-maxsize`: megabytes before the file is rotated; 0 (default) never. */
  maxSizeMB?: number;
  /** `--audit-log-maxbackup`: rotated files kept; 0 (default) keeps all. */
  maxBackups?: number;
  /** `--audit-log-maxage`: days a rotated file is kept; 0 (default) keeps them. */
  maxAgeDays?: number;
}

/**
 * Opens the log backend. Writes are synchronous (kube's log backend defaults to `blocking`
 * mode): when the response is sent its events are in the file, so a reader sees them in order.
 */
export function openLogBackend(o: AuditLogOptions): AuditSink {
  if (o.path === '-') {
    return { write: (line) => void process.stdout.write(line), close: () => undefined };
  }
  mkdirSync(dirname(o.path), { recursive: true, mode: 0o700 });
  let fd = openSync(o.path, 'a', 0o600);
  let size = statSync(o.path).size;
  const max = (o.maxSizeMB ?? 0) * 1024 * 1024;
  let closed = false;
  return {
    write(line) {
      // Connections that end after the server stopped have nowhere to write to.
      if (closed) return;
      const bytes = Buffer.from(line);
      if (max > 0 && size > 0 && size + bytes.length > max) {
        closeSync(fd);
        rotate(o);
        fd = openSync(o.path, 'a');
        size = 0;
      }
      writeSync(fd, bytes);
      size += bytes.length;
    },
    close() {
      if (!closed) closeSync(fd);
      closed = true;
    },
  };
}

/** lumberjack's backup name: `<name>-2006-01-02T15-04-05.000<ext>` in UTC. */
function rotate(o: AuditLogOptions): void {
  const ext = extname(o.path);
  const stem = basename(o.path, ext);
  const stamp = new Date().toISOString().replace(/:/g, '-').replace(/Z$/, '');
  renameSync(o.path, join(dirname(o.path), `${stem}-${stamp}${ext}`));
  const backups = readdirSync(dirname(o.path))
    .filter((f) => f.startsWith(`${stem}-`) && f.endsWith(ext) && f !== basename(o.path))
    .sort()
    .reverse();
  const maxAgeMs = (o.maxAgeDays ?? 0) * 86_400_000;
  backups.forEach((f, i) => {
    const path = join(dirname(o.path), f);
    const tooMany = (o.maxBackups ?? 0) > 0 && i >= o.maxBackups!;
    const tooOld = maxAgeMs > 0 && Date.now() - statSync(path).mtimeMs > maxAgeMs;
    if (tooMany || tooOld) unlinkSync(path);
  });
}
