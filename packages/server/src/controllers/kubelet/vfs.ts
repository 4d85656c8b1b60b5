/**
 * The filesystem of a simulated container: an in-memory writable layer (what `kubectl cp` writes
 * and reads back) with read-only mounts over it (ConfigMap and Secret volumes, computed from the
 * current objects at each exec). Paths are absolute POSIX paths; nothing touches the host.
 */

/** A file or directory. */
export interface FsNode {
  type: 'file' | 'dir';
  /** Content of a file. */
  data: Buffer;
  /** Permission bits (e.g. 0o644). */
  mode: number;
  mtime: Date;
}

/** An error of a filesystem call, with the errno name shells print (`No such file or directory`). */
export class FsError extends Error {
  constructor(
    readonly code: 'ENOENT' | 'ENOTDIR' | 'EISDIR' | 'EROFS' | 'EEXIST' | 'ENOTEMPTY',
    readonly path: string,
  ) {
    super(`${path}: ${FS_MESSAGES[code]}`);
    this.name = 'FsError';
  }
  /** The text a shell tool prints for it. */
  get reason(): string {
    return FS_MESSAGES[this.code];
  }
}

const FS_MESSAGES = {
  ENOENT: 'No such file or directory',
  ENOTDIR: 'Not a directory',
  EISDIR: 'Is a directory',
  EROFS: 'Read-only file system',
  EEXIST: 'File exists',
  ENOTEMPTY: 'Directory not empty',
} as const;

/** Normalises a path against a working directory: absolute, no `.`/`..`, no trailing slash. */
export function resolvePath(cwd: string, p: string): string {
  const parts = (p.startsWith('/') ? p : `${cwd}/${p}`).split('/');
  const out: string[] = [];
  for (const part of parts) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}

const parentOf = (p: string): string => (p === '/' ? '/' : p.slice(0, p.lastIndexOf('/')) || '/');
const dirNode = (mode = 0o755): FsNode => ({ type: 'dir', data: Buffer.alloc(0), mode, mtime: new Date() });

/** Directories every container image has. */
const BASE_DIRS = [
  '/bin',
  '/dev',
  '/etc',
  '/home',
  '/proc',
  '/root',
  '/run',
  '/sbin',
  '/sys',
  '/tmp',
  '/usr',
  '/usr/bin',
  '/usr/local',
  '/usr/local/bin',
  '/usr/sbin',
  '/var',
];

/**
 * A read-only mount: its files by path relative to the mount point (`key`, `dir/key`); a single
 * entry `''` makes the mount one file (a `subPath` mount).
 */
export interface Mount {
  path: string;
  files: Map<string, Buffer>;
  mode?: number;
}

/**
 * The writable layer of one container. It outlives execs (what one exec writes, the next reads),
 * and is dropped with the container.
 */
export class ContainerLayer {
  readonly nodes = new Map<string, FsNode>();
  constructor(files: Record<string, string> = {}) {
    this.nodes.set('/', dirNode());
    for (const d of BASE_DIRS) this.nodes.set(d, dirNode(d === '/tmp' ? 0o1777 : 0o755));
    for (const [p, content] of Object.entries(files)) {
      this.nodes.set(p, { type: 'file', data: Buffer.from(content), mode: 0o644, mtime: new Date() });
    }
  }
}

/** The view one exec has: the container's layer with the read-only mounts over it. */
export class ContainerFs {
  private readonly mounted = new Map<string, FsNode>();
  private readonly mountPoints: string[];

  constructor(
    private readonly layer: ContainerLayer,
    mounts: Mount[] = [],
  ) {
    this.mountPoints = mounts.map((m) => resolvePath('/', m.path));
    for (const m of mounts) {
      const root = resolvePath('/', m.path);
      const single = m.files.get('');
      if (single !== undefined) {
        this.mounted.set(root, { type: 'file', data: single, mode: m.mode ?? 0o644, mtime: new Date() });
        continue;
      }
      this.mounted.set(root, dirNode(0o1777));
      for (const [rel, data] of m.files) {
        const p = resolvePath(root, rel);
        for (let d = parentOf(p); d !== root && d !== '/'; d = parentOf(d)) this.mounted.set(d, dirNode());
        this.mounted.set(p, { type: 'file', data, mode: m.mode ?? 0o644, mtime: new Date() });
      }
    }
  }

  private readOnly(p: string): boolean {
    return this.mountPoints.some((m) => p === m || p.startsWith(`${m}/`));
  }

  /** The node at a path, or undefined. */
  stat(p: string): FsNode | undefined {
    if (this.readOnly(p)) return this.mounted.get(p);
    const n = this.layer.nodes.get(p);
    if (n) return n;
    // A mount point's parents exist even when the image lacks them.
    if (this.mountPoints.some((m) => m.startsWith(`${p}/`))) return dirNode();
    return undefined;
  }

  readFile(p: string): Buffer {
    const n = this.stat(p);
    if (!n) throw new FsError('ENOENT', p);
    if (n.type === 'dir') throw new FsError('EISDIR', p);
    return n.data;
  }

  /** The names in a directory, sorted. */
  readdir(p: string): string[] {
    const n = this.stat(p);
    if (!n) throw new FsError('ENOENT', p);
    if (n.type !== 'dir') throw new FsError('ENOTDIR', p);
    const prefix = p === '/' ? '/' : `${p}/`;
    const names = new Set<string>();
    const sources = this.readOnly(p)
      ? [this.mounted.keys()]
      : [this.layer.nodes.keys(), this.mountPoints.values()];
    for (const keys of sources) {
      for (const k of keys) {
        if (k !== p && k.startsWith(prefix)) names.add(k.slice(prefix.length).split('/')[0]!);
      }
    }
    return [...names].sort();
  }

  private checkParent(p: string): void {
    const parent = this.stat(parentOf(p));
    if (!parent) throw new FsError('ENOENT', p);
    if (parent.type !== 'dir') throw new FsError('ENOTDIR', p);
  }

  writeFile(p: string, data: Buffer, opts: { append?: boolean; mode?: number; mtime?: Date } = {}): void {
    if (this.readOnly(p)) throw new FsError('EROFS', p);
    this.checkParent(p);
    const old = this.layer.nodes.get(p);
    if (old?.type === 'dir') throw new FsError('EISDIR', p);
    const content = opts.append && old ? Buffer.concat([old.data, data]) : data;
    this.layer.nodes.set(p, {
      type: 'file',
      data: content,
      mode: opts.mode ?? old?.mode ?? 0o644,
      mtime: opts.mtime ?? new Date(),
    });
  }

  mkdir(p: string, opts: { parents?: boolean; mode?: number } = {}): void {
    const existing = this.stat(p);
    if (existing) {
      if (opts.parents && existing.type === 'dir') return;
      throw new FsError('EEXIST', p);
    }
    if (this.readOnly(p)) throw new FsError('EROFS', p);
    if (opts.parents && p !== '/') this.mkdir(parentOf(p), { parents: true });
    this.checkParent(p);
    this.layer.nodes.set(p, dirNode(opts.mode ?? 0o755));
  }

  remove(p: string, opts: { recursive?: boolean } = {}): void {
    const n = this.stat(p);
    if (!n) throw new FsError('ENOENT', p);
    if (this.readOnly(p)) throw new FsError('EROFS', p);
    if (n.type === 'dir') {
      if (!opts.recursive) throw new FsError('EISDIR', p);
      for (const k of [...this.layer.nodes.keys()]) if (k.startsWith(`${p}/`)) this.layer.nodes.delete(k);
    }
    this.layer.nodes.delete(p);
  }

  /** Every path under a directory (depth first, parents before children), the directory first. */
  walk(p: string): string[] {
    const n = this.stat(p);
    if (!n) throw new FsError('ENOENT', p);
    if (n.type === 'file') return [p];
    const out = [p];
    for (const name of this.readdir(p)) out.push(...this.walk(p === '/' ? `/${name}` : `${p}/${name}`));
    return out;
  }
}
