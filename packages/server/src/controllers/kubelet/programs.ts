/**
 * The tools of the simulated image (`echo`, `printf`, `cat`, `ls`, `test`, `mkdir`, `rm`,
 * `touch`, `sleep`, `tar`, ...) over the container's in-memory filesystem, with a Debian image's
 * messages. The shell and the programs that run others (`sh`, `env`) are in shell.ts.
 */

import { fsMessage, type Program } from './process.js';
import { packTar, type TarEntry, TarError, unpackTar } from './tar.js';
import { FsError, resolvePath } from './vfs.js';

const echo: Program = async (args, _ctx, io) => {
  let newline = true;
  let escapes = false;
  while (args[0] && /^-[neE]+$/.test(args[0])) {
    const flag = args.shift()!;
    if (flag.includes('n')) newline = false;
    if (flag.includes('e')) escapes = true;
  }
  let out = args.join(' ');
  if (escapes) out = backslashEscapes(out);
  io.stdout(newline ? `${out}\n` : out);
  return 0;
};

function backslashEscapes(s: string): string {
  return s.replace(/\\(n|t|\\|r|0|a|b|e)/g, (_m, c: string) => {
    const map: Record<string, string> = {
      n: '\n',
      t: '\t',
      '\\': '\\',
      r: '\r',
      0: '\0',
      a: '\x07',
      b: '\b',
      e: '\x1b',
    };
    return map[c] ?? c;
  });
}

const printf: Program = async (args, _ctx, io) => {
  const [format, ...rest] = args;
  if (format === undefined) {
    io.stderr('printf: usage: printf format [arg ...]\n');
    return 2;
  }
  let out = '';
  let i = 0;
  do {
    out += backslashEscapes(format).replace(/%([sdc%])/g, (_m, c: string) => {
      if (c === '%') return '%';
      const v = rest[i++] ?? '';
      if (c === 'd') return String(Number.parseInt(v, 10) || 0);
      if (c === 'c') return v.slice(0, 1);
      return v;
    });
  } while (i < rest.length && /%[sdc]/.test(format));
  io.stdout(out);
  return 0;
};
const cat: Program = async (args, ctx, io) => {
  const files = args.filter((a) => a !== '--');
  if (files.length === 0) files.push('-');
  let code = 0;
  for (const f of files) {
    if (f === '-') {
      for await (const chunk of io.stdin.chunks()) io.stdout(chunk);
      continue;
    }
    try {
      io.stdout(ctx.fs.readFile(resolvePath(ctx.cwd, f)));
    } catch (err) {
      io.stderr(fsMessage('cat', err, f));
      code = 1;
    }
  }
  return code;
};

const ls: Program = async (args, ctx, io) => {
  const flags = new Set<string>();
  const paths: string[] = [];
  for (const a of args) {
    if (a.startsWith('-') && a.length > 1) for (const c of a.slice(1)) flags.add(c);
    else paths.push(a);
  }
  if (paths.length === 0) paths.push('.');
  let code = 0;
  const files: string[] = [];
  const dirs: string[] = [];
  for (const p of paths) {
    const node = ctx.fs.stat(resolvePath(ctx.cwd, p));
    if (!node) {
      io.stderr(`ls: cannot access '${p}': No such file or directory\n`);
      code = 2;
    } else if (node.type === 'dir' && !flags.has('d')) dirs.push(p);
    else files.push(p);
  }
  const line = (name: string, path: string): string => {
    if (!flags.has('l')) return `${name}\n`;
    const n = ctx.fs.stat(path)!;
    const perms = modeString(n.type, n.mode);
    const size = n.type === 'dir' ? 4096 : n.data.length;
    const date = n.mtime
      .toUTCString()
      .slice(4, 22)
      .replace(/(\d{2}) (\w{3}) (\d{4})/, '$2 $1');
    return `${perms} 1 root root ${String(size).padStart(5)} ${date} ${name}\n`;
  };
  let out = files.map((f) => line(f, resolvePath(ctx.cwd, f))).join('');
  for (const d of dirs) {
    const abs = resolvePath(ctx.cwd, d);
    let names = ctx.fs.readdir(abs);
    if (!flags.has('a') && !flags.has('A')) names = names.filter((n) => !n.startsWith('.'));
    if (flags.has('a')) names = ['.', '..', ...names];
    if (paths.length > 1) out += `${out ? '\n' : ''}${d}:\n`;
    if (flags.has('l')) out += `total ${names.length * 4}\n`;
    out += names.map((n) => line(n, n === '.' || n === '..' ? abs : resolvePath(abs, n))).join('');
  }
  io.stdout(out);
  return code;
};

function modeString(type: 'file' | 'dir', mode: number): string {
  const bits = 'rwxrwxrwx';
  let s = type === 'dir' ? 'd' : '-';
  for (let i = 0; i < 9; i++) s += mode & (1 << (8 - i)) ? bits[i] : '-';
  return s;
}

const test: Program = async (args, ctx) => {
  const a = args[args.length - 1] === ']' ? args.slice(0, -1) : args;
  const stat = (p: string | undefined) =>
    p === undefined ? undefined : ctx.fs.stat(resolvePath(ctx.cwd, p));
  const evaluate = (x: string[]): boolean => {
    if (x[0] === '!') return !evaluate(x.slice(1));
    if (x.length === 0) return false;
    if (x.length === 1) return x[0] !== '';
    if (x.length === 2) {
      const [op, v] = x;
      switch (op) {
        case '-d':
          return stat(v)?.type === 'dir';
        case '-f':
          return stat(v)?.type === 'file';
        case '-e':
        case '-r':
        case '-w':
          return stat(v) !== undefined;
        case '-s':
          return (stat(v)?.data.length ?? 0) > 0;
        case '-z':
          return v === '';
        case '-n':
          return v !== '';
        default:
          return false;
      }
    }
    const [l = '', op, r = ''] = x;
    switch (op) {
      case '=':
      case '==':
        return l === r;
      case '!=':
        return l !== r;
      case '-eq':
        return Number(l) === Number(r);
      case '-ne':
        return Number(l) !== Number(r);
      case '-lt':
        return Number(l) < Number(r);
      case '-le':
        return Number(l) <= Number(r);
      case '-gt':
        return Number(l) > Number(r);
      case '-ge':
        return Number(l) >= Number(r);
      default:
        return false;
    }
  };
  return evaluate(a) ? 0 : 1;
};

const mkdir: Program = async (args, ctx, io) => {
  const parents = args.includes('-p');
  let code = 0;
  for (const p of args.filter((a) => !a.startsWith('-'))) {
    try {
      ctx.fs.mkdir(resolvePath(ctx.cwd, p), { parents });
    } catch (err) {
      io.stderr(
        err instanceof FsError
          ? `mkdir: cannot create directory '${p}': ${err.reason}\n`
          : fsMessage('mkdir', err, p),
      );
      code = 1;
    }
  }
  return code;
};

const rm: Program = async (args, ctx, io) => {
  const flags = args.filter((a) => a.startsWith('-')).join('');
  let code = 0;
  for (const p of args.filter((a) => !a.startsWith('-'))) {
    try {
      ctx.fs.remove(resolvePath(ctx.cwd, p), { recursive: /[rR]/.test(flags) });
    } catch (err) {
      if (err instanceof FsError && err.code === 'ENOENT' && flags.includes('f')) continue;
      io.stderr(
        err instanceof FsError ? `rm: cannot remove '${p}': ${err.reason}\n` : fsMessage('rm', err, p),
      );
      code = 1;
    }
  }
  return code;
};

const touch: Program = async (args, ctx, io) => {
  let code = 0;
  for (const p of args.filter((a) => !a.startsWith('-'))) {
    const abs = resolvePath(ctx.cwd, p);
    try {
      const n = ctx.fs.stat(abs);
      if (n?.type === 'file') ctx.fs.writeFile(abs, n.data);
      else if (!n) ctx.fs.writeFile(abs, Buffer.alloc(0));
    } catch (err) {
      io.stderr(
        err instanceof FsError ? `touch: cannot touch '${p}': ${err.reason}\n` : fsMessage('touch', err, p),
      );
      code = 1;
    }
  }
  return code;
};

const sleep: Program = async (args, ctx) => {
  const seconds = Number(args[0] ?? 0);
  if (!Number.isFinite(seconds) || seconds <= 0) return 0;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, seconds * 1000);
    ctx.signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
  return 0;
};

/**
 * `tar cf - <paths>` and `tar xf - [-C dir]` (with `-m`, `-v`, `--no-same-owner`,
 * `--no-same-permissions`), the two forms `kubectl cp` runs.
 */
const tar: Program = async (args, ctx, io) => {
  let mode: 'c' | 'x' | 't' | undefined;
  let file: string | undefined;
  let dir = ctx.cwd;
  let verbose = false;
  const paths: string[] = [];
  const rest = [...args];
  // The first word may be a bundle of flags without a dash (`tar cf - x`).
  if (rest[0] && !rest[0].startsWith('-')) rest[0] = `-${rest[0]}`;
  while (rest.length > 0) {
    const a = rest.shift()!;
    if (a === '-C' || a === '--directory') dir = resolvePath(ctx.cwd, rest.shift() ?? '.');
    else if (a.startsWith('--directory=')) dir = resolvePath(ctx.cwd, a.slice(12));
    else if (a.startsWith('--')) continue;
    else if (a.startsWith('-') && a.length > 1) {
      for (const c of a.slice(1)) {
        if (c === 'c' || c === 'x' || c === 't') mode = c;
        else if (c === 'v') verbose = true;
        else if (c === 'f') file = rest.shift();
        else if (c === 'C') dir = resolvePath(ctx.cwd, rest.shift() ?? '.');
      }
    } else paths.push(a);
  }
  if (!mode) {
    io.stderr("tar: You must specify one of the '-Acdtrux', '--delete' or '--test-label' options\n");
    return 2;
  }
  if (file !== undefined && file !== '-') {
    io.stderr(`tar: ${file}: Cannot open: Read-only file system\n`);
    return 2;
  }
  if (mode === 'c') {
    if (paths.length === 0) {
      io.stderr('tar: Cowardly refusing to create an empty archive\n');
      return 2;
    }
    const entries: TarEntry[] = [];
    let code = 0;
    let warned = false;
    for (const p of paths) {
      const abs = resolvePath(dir, p);
      if (!ctx.fs.stat(abs)) {
        io.stderr(`tar: ${p}: Cannot stat: No such file or directory\n`);
        code = 2;
        continue;
      }
      if (p.startsWith('/') && !warned) {
        io.stderr("tar: Removing leading `/' from member names\n");
        warned = true;
      }
      const memberBase = p.replace(/^\/+/, '').replace(/\/+$/, '') || '.';
      for (const sub of ctx.fs.walk(abs)) {
        const n = ctx.fs.stat(sub)!;
        const name =
          sub === abs
            ? memberBase
            : `${memberBase === '.' ? '' : `${memberBase}/`}${sub.slice(abs.length + (abs === '/' ? 0 : 1))}`;
        entries.push({ name, type: n.type, mode: n.mode, mtime: n.mtime, data: n.data });
        if (verbose) io.stderr(`${name}${n.type === 'dir' ? '/' : ''}\n`);
      }
    }
    io.stdout(packTar(entries));
    if (code) io.stderr('tar: Exiting with failure status due to previous errors\n');
    return code;
  }
  const archive = await io.stdin.readAll();
  let entries: TarEntry[];
  try {
    entries = unpackTar(archive);
  } catch (err) {
    if (!(err instanceof TarError)) throw err;
    io.stderr(
      'tar: This does not look like a tar archive\ntar: Exiting with failure status due to previous errors\n',
    );
    return 2;
  }
  if (mode === 't') {
    io.stdout(entries.map((e) => `${e.name}${e.type === 'dir' ? '/' : ''}\n`).join(''));
    return 0;
  }
  if (!ctx.fs.stat(dir)) {
    io.stderr(
      `tar: ${dir}: Cannot open: No such file or directory\ntar: Error is not recoverable: exiting now\n`,
    );
    return 2;
  }
  let code = 0;
  for (const e of entries) {
    const target = resolvePath(dir, e.name);
    try {
      if (e.type === 'dir') ctx.fs.mkdir(target, { parents: true, mode: e.mode });
      else {
        const parent = target.slice(0, target.lastIndexOf('/')) || '/';
        ctx.fs.mkdir(parent, { parents: true });
        ctx.fs.writeFile(target, e.data, { mode: e.mode });
      }
      if (verbose) io.stdout(`${e.name}\n`);
    } catch (err) {
      if (!(err instanceof FsError)) throw err;
      io.stderr(`tar: ${e.name}: Cannot open: ${err.reason}\n`);
      code = 2;
    }
  }
  if (code) io.stderr('tar: Exiting with failure status due to previous errors\n');
  return code;
};

const hostname: Program = async (_a, ctx, io) => {
  io.stdout(`${ctx.hostname}\n`);
  return 0;
};
const pwd: Program = async (_a, ctx, io) => {
  io.stdout(`${ctx.cwd}\n`);
  return 0;
};
const constant =
  (out: string, code = 0): Program =>
  async (_a, _c, io) => {
    if (out) io.stdout(out);
    return code;
  };

/** The tools on the simulated image's PATH, by name (the shells aside). */
export const TOOLS: Record<string, Program> = {
  echo,
  printf,
  cat,
  ls,
  test,
  '[': test,
  true: constant(''),
  false: constant('', 1),
  mkdir,
  rm,
  touch,
  sleep,
  tar,
  hostname,
  pwd,
  whoami: constant('root\n'),
  id: constant('uid=0(root) gid=0(root) groups=0(root)\n'),
  uname: constant('Linux\n'),
};
