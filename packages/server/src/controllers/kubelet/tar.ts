/**
 * A minimal tar (ustar, with PAX and GNU long names when reading) for `kubectl cp`, which runs
 * `tar cf - <path>` and `tar -xmf - -C <dir>` in the container: enough to write regular files and
 * directories, and to read what Go's archive/tar (kubectl's side) writes.
 */

const BLOCK = 512;
/** GNU tar pads an archive to a record of 20 blocks. */
const RECORD = 20 * BLOCK;

/** One member of an archive. */
export interface TarEntry {
  /** Relative path; directories without a trailing slash. */
  name: string;
  type: 'file' | 'dir';
  mode: number;
  mtime: Date;
  data: Buffer;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(name: string, type: 'file' | 'dir' | 'pax', mode: number, size: number, mtime: Date): Buffer {
  const h = Buffer.alloc(BLOCK);
  const { prefix, base } = splitName(name) ?? { prefix: '', base: name.slice(0, 100) };
  h.write(base, 0, 100, 'utf8');
  h.write(octal(mode & 0o7777, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(Math.floor(mtime.getTime() / 1000), 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(type === 'dir' ? '5' : type === 'pax' ? 'x' : '0', 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write('root', 265, 'ascii');
  h.write('root', 297, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

/** ustar's split of a path into prefix (155 bytes) and name (100), or undefined when it does not fit. */
function splitName(name: string): { prefix: string; base: string } | undefined {
  if (Buffer.byteLength(name) <= 100) return { prefix: '', base: name };
  for (let cut = name.indexOf('/'); cut > 0; cut = name.indexOf('/', cut + 1)) {
    if (Buffer.byteLength(name.slice(0, cut)) > 155) return undefined;
    if (Buffer.byteLength(name.slice(cut + 1)) <= 100)
      return { prefix: name.slice(0, cut), base: name.slice(cut + 1) };
  }
  return undefined;
}

const pad = (n: number): Buffer => Buffer.alloc((BLOCK - (n % BLOCK)) % BLOCK);

/** Writes an archive of the entries (directories with a trailing slash, as GNU tar does). */
export function packTar(entries: TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const name = e.type === 'dir' ? `${e.name}/` : e.name;
    const size = e.type === 'dir' ? 0 : e.data.length;
    if (!splitName(name)) {
      // A path too long for ustar goes in a PAX extended header before the member.
      const record = paxRecord('path', name);
      parts.push(
        header('PaxHeaders/member', 'pax', 0o644, record.length, e.mtime),
        record,
        pad(record.length),
      );
    }
    parts.push(header(name, e.type, e.mode, size, e.mtime));
    if (size > 0) parts.push(e.data, pad(size));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  const body = Buffer.concat(parts);
  return Buffer.concat([body, Buffer.alloc((RECORD - (body.length % RECORD)) % RECORD)]);
}

/** `"<len> key=value\n"`, where len counts the whole record, itself included. */
function paxRecord(key: string, value: string): Buffer {
  const rest = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(rest) + 1;
  while (String(len).length + Buffer.byteLength(rest) !== len)
    len = String(len).length + Buffer.byteLength(rest);
  return Buffer.from(`${len}${rest}`);
}

/** Why an archive cannot be read (tar's "This does not look like a tar archive"). */
export class TarError extends Error {}

const field = (b: Buffer, off: number, len: number): string => {
  const s = b.subarray(off, off + len);
  const end = s.indexOf(0);
  return s.subarray(0, end < 0 ? len : end).toString('utf8');
};
const num = (b: Buffer, off: number, len: number): number => {
  if (b[off]! & 0x80) {
    // base-256 (GNU) for large values
    let v = 0;
    for (let i = off + 1; i < off + len; i++) v = v * 256 + b[i]!;
    return v;
  }
  const s = field(b, off, len).trim();
  return s === '' ? 0 : Number.parseInt(s, 8);
};

/** Reads the regular files and directories of an archive (other member types are skipped). */
export function unpackTar(archive: Buffer): TarEntry[] {
  const out: TarEntry[] = [];
  let off = 0;
  let longName: string | undefined;
  let paxPath: string | undefined;
  while (off + BLOCK <= archive.length) {
    const h = archive.subarray(off, off + BLOCK);
    if (h.every((b) => b === 0)) break;
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
    if (sum !== num(h, 148, 8)) throw new TarError('This does not look like a tar archive');
    const size = num(h, 124, 12);
    const type = String.fromCharCode(h[156]!);
    const data = archive.subarray(off + BLOCK, off + BLOCK + size);
    off += BLOCK + size + ((BLOCK - (size % BLOCK)) % BLOCK);
    if (type === 'L') {
      longName = field(data, 0, data.length);
      continue;
    }
    if (type === 'x') {
      for (const line of data.toString('utf8').split('\n')) {
        const m = /^\d+ path=(.*)$/.exec(line);
        if (m) paxPath = m[1];
      }
      continue;
    }
    if (type === 'g') continue;
    const prefix = field(h, 345, 155);
    let name = paxPath ?? longName ?? (prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100));
    paxPath = undefined;
    longName = undefined;
    if (type !== '0' && type !== '\0' && type !== '5' && type !== '7') continue;
    const isDir = type === '5' || name.endsWith('/');
    name = name.replace(/\/+$/, '');
    out.push({
      name,
      type: isDir ? 'dir' : 'file',
      mode: num(h, 100, 8),
      mtime: new Date(num(h, 136, 12) * 1000),
      data: isDir ? Buffer.alloc(0) : Buffer.from(data),
    });
  }
  return out;
}
