/**
 * The programs of a simulated container: what `kubectl exec` runs in a pod of the local control
 * plane. A minimal image's tools (`echo`, `env`, `cat`, `ls`, `test`, `tar`, ...) and a small
 * POSIX shell (`sh -c '...'`: quotes, `$VAR`, `;`, `&&`, `||`, `|`, `>`, `>>`, `<`, `2>&1`), all
 * over the container's in-memory filesystem. Nothing runs on the host.
 *
 * Errors read as a Debian image's would (`sh: 1: foo: not found`, `cat: x: No such file or
 * directory`); a program that does not exist fails to start with runc's message, as containerd
 * reports it.
 */

import { packTar, type TarEntry, TarError, unpackTar } from './tar.js';
import { type ContainerFs, FsError, resolvePath } from './vfs.js';

/** The standard input of a process: its chunks until the client closes it. */
export interface Stdin {
  /** Reads everything until end of input. */
  readAll(): Promise<Buffer>;
  /** The chunks as they arrive. */
  chunks(): AsyncIterable<Buffer>;
}

/** An input with nothing in it (exec without `-i`). */
export const EMPTY_STDIN: Stdin = {
  readAll: () => Promise.resolve(Buffer.alloc(0)),
  chunks: async function* () {},
};

/** A stdin made of one buffer. */
export function bufferStdin(data: Buffer): Stdin {
  return {
    readAll: () => Promise.resolve(data),
    chunks: async function* () {
      if (data.length > 0) yield data;
    },
  };
}

/** Where a process's output goes. */
export interface ProcessIO {
  stdin: Stdin;
  stdout(data: Buffer | string): void;
  stderr(data: Buffer | string): void;
}

/** What a process sees of its container. */
export interface ProcessContext {
  fs: ContainerFs;
  /** Environment, in the order `env` prints it. */
  env: Map<string, string>;
  hostname: string;
  cwd: string;
  /** Writes to the container's main process output (`/proc/1/fd/1`, `/proc/1/fd/2`): its logs. */
  containerOutput(stream: 'stdout' | 'stderr', data: Buffer): void;
  /** Aborted when the exec's client goes away. */
  signal: AbortSignal;
  /** Whether stdin and stdout are a terminal (`kubectl exec -t`): a shell then prompts and echoes. */
  tty?: boolean;
}

/** How an exec ended: an exit code, or the runtime could not start the program. */
export type ExecOutcome = { exitCode: number } | { startError: string };

type Program = (args: string[], ctx: ProcessContext, io: ProcessIO) => Promise<number>;

const PATH_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/**
 * Runs a command (an exec's argv) in the container. A program that does not exist is reported as
 * runc reports it (`exec: "foo": executable file not found in $PATH`), not as an exit code.
 */
export async function execProgram(argv: string[], ctx: ProcessContext, io: ProcessIO): Promise<ExecOutcome> {
  const [cmd = '', ...args] = argv;
  const program = lookupProgram(cmd, ctx);
  if (typeof program === 'string') return { startError: program };
  try {
    return { exitCode: await program(args, ctx, io) };
  } catch (err) {
    if (err instanceof ExitSignal) return { exitCode: err.code };
    throw err;
  }
}

/** The program an argv[0] names, or runc's error for it. */
function lookupProgram(cmd: string, ctx: ProcessContext): Program | string {
  const prefix = 'OCI runtime exec failed: exec failed: unable to start container process: exec: ';
  if (cmd.includes('/')) {
    const p = resolvePath(ctx.cwd, cmd);
    const base = p.slice(p.lastIndexOf('/') + 1);
    const dir = p.slice(0, p.lastIndexOf('/')) || '/';
    if (PATH_DIRS.includes(dir) && PROGRAMS[base]) return PROGRAMS[base];
    const node = ctx.fs.stat(p);
    if (!node) return `${prefix}${JSON.stringify(cmd)}: stat ${p}: no such file or directory: unknown`;
    return `${prefix}${JSON.stringify(cmd)}: permission denied: unknown`;
  }
  const program = PROGRAMS[cmd];
  if (!program) return `${prefix}${JSON.stringify(cmd)}: executable file not found in $PATH: unknown`;
  return program;
}

/** `exit N` (or a fatal shell error) unwinding a script. */
class ExitSignal {
  constructor(readonly code: number) {}
}

function fsMessage(tool: string, err: unknown, path: string): string {
  if (err instanceof FsError) return `${tool}: ${path}: ${err.reason}\n`;
  throw err;
}

// ---- programs ----

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

const env: Program = async (args, ctx, io) => {
  if (args.length > 0) {
    // env NAME=value cmd ...: runs a program with more variables.
    const vars = new Map(ctx.env);
    while (args[0]?.includes('=')) {
      const a = args.shift()!;
      const eq = a.indexOf('=');
      vars.set(a.slice(0, eq), a.slice(eq + 1));
    }
    if (args.length > 0) {
      const outcome = await execProgram(args, { ...ctx, env: vars }, io);
      if ('startError' in outcome) {
        io.stderr(`env: '${args[0]}': No such file or directory\n`);
        return 127;
      }
      return outcome.exitCode;
    }
    io.stdout([...vars].map(([k, v]) => `${k}=${v}\n`).join(''));
    return 0;
  }
  io.stdout([...ctx.env].map(([k, v]) => `${k}=${v}\n`).join(''));
  return 0;
};

const printenv: Program = async (args, ctx, io) => {
  if (args.length === 0) return env([], ctx, io);
  let code = 0;
  for (const name of args) {
    const v = ctx.env.get(name);
    if (v === undefined) code = 1;
    else io.stdout(`${v}\n`);
  }
  return code;
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

const shell: Program = async (args, ctx, io) => {
  const rest = [...args];
  let script: string | undefined;
  while (rest[0]?.startsWith('-')) {
    const flag = rest.shift()!;
    if (flag.includes('c')) {
      script = rest.shift();
      if (script === undefined) {
        io.stderr('sh: 0: -c requires an argument\n');
        return 2;
      }
    }
  }
  const sh = new Shell(ctx, rest);
  if (script !== undefined) return sh.run(script, io);
  if (rest.length > 0) {
    const path = resolvePath(ctx.cwd, rest[0]!);
    let body: string;
    try {
      body = ctx.fs.readFile(path).toString('utf8');
    } catch {
      io.stderr(`sh: 0: cannot open ${rest[0]}: No such file\n`);
      return 2;
    }
    return sh.run(body, io);
  }
  if (ctx.tty) return interactive(sh, io);
  // A shell reading its script from stdin (`kubectl exec -i pod -- sh`): one line at a time as it arrives.
  let pending = '';
  let code = 0;
  for await (const chunk of io.stdin.chunks()) {
    pending += chunk.toString('utf8');
    let nl = pending.indexOf('\n');
    while (nl >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      code = await sh.run(line, { ...io, stdin: EMPTY_STDIN });
      if (sh.exited) return code;
      nl = pending.indexOf('\n');
    }
  }
  if (pending.trim()) code = await sh.run(pending, { ...io, stdin: EMPTY_STDIN });
  return code;
};

/**
 * A shell on a terminal (`kubectl exec -it pod -- sh`): the client's terminal is raw, so the
 * terminal side (this) echoes what is typed, edits the line (backspace, Ctrl-C, Ctrl-U), ends it
 * on Enter (`\r`), turns output newlines into `\r\n`, and the shell prompts with `# ` as root's
 * does; Ctrl-D on an empty line ends the shell.
 */
async function interactive(sh: Shell, io: ProcessIO): Promise<number> {
  const crlf = (d: Buffer | string) => Buffer.from(Buffer.from(d).toString('utf8').replace(/\r?\n/g, '\r\n'));
  const out = {
    ...io,
    stdin: EMPTY_STDIN,
    stdout: (d: Buffer | string) => io.stdout(crlf(d)),
    stderr: (d: Buffer | string) => io.stdout(crlf(d)),
  };
  let line = '';
  let code = 0;
  io.stdout('# ');
  for await (const chunk of io.stdin.chunks()) {
    for (const ch of chunk.toString('utf8')) {
      if (ch === '\r' || ch === '\n') {
        io.stdout('\r\n');
        code = await sh.run(line, out);
        line = '';
        if (sh.exited) return code;
        io.stdout('# ');
      } else if (ch === '\x7f' || ch === '\b') {
        if (line.length > 0) {
          line = line.slice(0, -1);
          io.stdout('\b \b');
        }
      } else if (ch === '\x03') {
        line = '';
        io.stdout('^C\r\n# ');
      } else if (ch === '\x15') {
        io.stdout('\b \b'.repeat(line.length));
        line = '';
      } else if (ch === '\x04') {
        if (line === '') {
          io.stdout('\r\n');
          return code;
        }
      } else if (ch >= ' ' || ch === '\t') {
        line += ch;
        io.stdout(ch);
      }
    }
  }
  return code;
}

/** The programs on the simulated image's PATH. */
const PROGRAMS: Record<string, Program> = {
  sh: shell,
  bash: shell,
  ash: shell,
  dash: shell,
  echo,
  printf,
  env,
  printenv,
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

// ---- the shell language ----

type Seg = { t: string; q: 0 | 1 | 2 };
type Tok = { k: 'w'; segs: Seg[] } | { k: 'op'; v: string };

interface Command {
  words: Seg[][];
  redirects: Array<{ op: string; fd: number; target: Seg[] }>;
}
interface Pipeline {
  commands: Command[];
  /** How it joins the previous one. */
  join: ';' | '&&' | '||';
}

class ShellSyntaxError extends Error {}

function tokenize(src: string): Tok[] {
  const toks: Tok[] = [];
  let segs: Seg[] | undefined;
  const word = () => {
    segs ??= [];
    return segs;
  };
  const flush = () => {
    if (segs) toks.push({ k: 'w', segs });
    segs = undefined;
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '#' && !segs) {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    if (c === ' ' || c === '\t') {
      flush();
      i++;
      continue;
    }
    if (c === '\n' || c === ';') {
      flush();
      toks.push({ k: 'op', v: ';' });
      i++;
      continue;
    }
    if (c === '&' || c === '|') {
      flush();
      if (src[i + 1] === c) {
        toks.push({ k: 'op', v: c + c });
        i += 2;
      } else {
        toks.push({ k: 'op', v: c });
        i++;
      }
      continue;
    }
    if (c === '>' || c === '<') {
      // `2>`, `2>>`, `2>&1`, `>&2`: a lone digit before the operator names the descriptor.
      let fd = c === '>' ? 1 : 0;
      if (segs && segs.length === 1 && segs[0]!.q === 0 && /^\d$/.test(segs[0]!.t)) {
        fd = Number(segs[0]!.t);
        segs = undefined;
      }
      flush();
      let op = c;
      i++;
      if (src[i] === '>' && c === '>') {
        op = '>>';
        i++;
      }
      if (src[i] === '&') {
        op += '&';
        i++;
      }
      toks.push({ k: 'op', v: `${fd}${op}` });
      continue;
    }
    if (c === "'") {
      const end = src.indexOf("'", i + 1);
      if (end < 0) throw new ShellSyntaxError('Syntax error: Unterminated quoted string');
      word().push({ t: src.slice(i + 1, end), q: 1 });
      i = end + 1;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      let s = '';
      while (j < src.length && src[j] !== '"') {
        if (src[j] === '\\' && j + 1 < src.length && '"\\$`\n'.includes(src[j + 1]!)) {
          // An escaped `$` must not expand: keep it marked with a NUL the expansion undoes.
          s += src[j + 1] === '$' ? '\0$' : src[j + 1];
          j += 2;
        } else s += src[j++];
      }
      if (j >= src.length) throw new ShellSyntaxError('Syntax error: Unterminated quoted string');
      word().push({ t: s, q: 2 });
      i = j + 1;
      continue;
    }
    if (c === '\\') {
      if (src[i + 1] === '\n') {
        i += 2;
        continue;
      }
      word().push({ t: src[i + 1] ?? '', q: 1 });
      i += 2;
      continue;
    }
    let j = i;
    while (j < src.length && !' \t\n;&|<>\'"\\'.includes(src[j]!)) j++;
    word().push({ t: src.slice(i, j), q: 0 });
    i = j;
  }
  flush();
  return toks;
}

function parse(toks: Tok[]): Pipeline[] {
  const pipelines: Pipeline[] = [];
  let join: Pipeline['join'] = ';';
  let commands: Command[] = [];
  let cmd: Command = { words: [], redirects: [] };
  const endCommand = (required: boolean) => {
    if (cmd.words.length === 0 && cmd.redirects.length === 0) {
      if (required) throw new ShellSyntaxError('Syntax error: unexpected operator');
      return;
    }
    commands.push(cmd);
    cmd = { words: [], redirects: [] };
  };
  const endPipeline = (next: Pipeline['join'], op: string) => {
    const empty = cmd.words.length === 0 && cmd.redirects.length === 0;
    if (empty && commands.length === 0) {
      if (next !== ';') throw new ShellSyntaxError(`Syntax error: "${op}" unexpected`);
      join = ';';
      return;
    }
    endCommand(true);
    pipelines.push({ commands, join });
    commands = [];
    join = next;
  };
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.k === 'w') {
      cmd.words.push(t.segs);
      continue;
    }
    if (t.v === '|') endCommand(true);
    else if (t.v === ';' || t.v === '&') endPipeline(';', t.v);
    else if (t.v === '&&' || t.v === '||') endPipeline(t.v, t.v);
    else {
      const target = toks[i + 1];
      if (target?.k !== 'w') throw new ShellSyntaxError('Syntax error: newline unexpected');
      i++;
      cmd.redirects.push({ op: t.v.replace(/^\d/, ''), fd: Number(t.v[0]), target: target.segs });
    }
  }
  if (cmd.words.length > 0 || cmd.redirects.length > 0 || commands.length > 0) endPipeline(';', '');
  return pipelines;
}

/** A shell: its variables, working directory and last status persist across `run` calls. */
class Shell {
  private status = 0;
  exited = false;
  private readonly vars: Map<string, string>;
  private readonly ctx: ProcessContext;

  constructor(
    ctx: ProcessContext,
    private readonly positional: string[],
  ) {
    this.ctx = { ...ctx, env: new Map(ctx.env) };
    this.vars = this.ctx.env;
  }

  private expand(segs: Seg[]): string {
    return segs
      .map((s) => {
        if (s.q === 1) return s.t;
        return s.t
          .replace(
            /(?<!\0)\$(\?|\$|#|\d|[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})/g,
            (_m, name: string) => {
              const n = name.startsWith('{') ? name.slice(1, -1) : name;
              if (n === '?') return String(this.status);
              if (n === '$') return '1';
              if (n === '#') return String(Math.max(0, this.positional.length - 1));
              if (/^\d$/.test(n)) return this.positional[Number(n)] ?? (n === '0' ? 'sh' : '');
              return this.vars.get(n) ?? '';
            },
          )
          .replace(/\0\$/g, '$');
      })
      .join('');
  }

  async run(script: string, io: ProcessIO): Promise<number> {
    let pipelines: Pipeline[];
    try {
      pipelines = parse(tokenize(script));
    } catch (err) {
      if (!(err instanceof ShellSyntaxError)) throw err;
      io.stderr(`sh: 1: ${err.message}\n`);
      this.status = 2;
      return 2;
    }
    try {
      for (const p of pipelines) {
        if (p.join === '&&' && this.status !== 0) continue;
        if (p.join === '||' && this.status === 0) continue;
        this.status = await this.pipeline(p, io);
        if (this.ctx.signal.aborted) break;
      }
    } catch (err) {
      if (err instanceof ExitSignal) {
        this.exited = true;
        this.status = err.code;
        return err.code;
      }
      throw err;
    }
    return this.status;
  }

  private async pipeline(p: Pipeline, io: ProcessIO): Promise<number> {
    let input = io.stdin;
    let code = 0;
    for (let i = 0; i < p.commands.length; i++) {
      const last = i === p.commands.length - 1;
      const captured: Buffer[] = [];
      const out = last ? io.stdout : (d: Buffer | string) => captured.push(Buffer.from(d));
      code = await this.command(p.commands[i]!, { stdin: input, stdout: out, stderr: io.stderr });
      input = bufferStdin(Buffer.concat(captured));
    }
    return code;
  }

  private async command(c: Command, io: ProcessIO): Promise<number> {
    const words = c.words.map((w) => this.expand(w));
    // Leading NAME=value words are assignments (for the shell when nothing follows).
    const assigns: Array<[string, string]> = [];
    while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) {
      const a = words.shift()!;
      assigns.push([a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]);
    }
    const effective = { ...io };
    const outputs: Array<{ path: string; append: boolean; data: Buffer[]; fd: number }> = [];
    for (const r of c.redirects) {
      const target = this.expand(r.target);
      if (r.op === '>&') {
        const to = target === '2' ? io.stderr : io.stdout;
        if (r.fd === 2) effective.stderr = to;
        else effective.stdout = to;
        continue;
      }
      if (r.op === '<') {
        try {
          effective.stdin = bufferStdin(this.ctx.fs.readFile(resolvePath(this.ctx.cwd, target)));
        } catch (err) {
          if (!(err instanceof FsError)) throw err;
          io.stderr(`sh: 1: cannot open ${target}: No such file\n`);
          return 2;
        }
        continue;
      }
      const sink = this.sink(target, r.op === '>>', outputs);
      if (r.fd === 2) effective.stderr = sink;
      else effective.stdout = sink;
    }
    let code: number;
    if (words.length === 0) {
      for (const [k, v] of assigns) this.vars.set(k, v);
      code = 0;
    } else {
      code = await this.invoke(words, assigns, effective);
    }
    for (const o of outputs) {
      try {
        this.ctx.fs.writeFile(o.path, Buffer.concat(o.data), { append: o.append });
      } catch (err) {
        if (!(err instanceof FsError)) throw err;
        io.stderr(`sh: 1: cannot create ${o.path}: ${err.reason}\n`);
        code = 2;
      }
    }
    return code;
  }

  /** Where a `>` redirection writes: a file, the null device, or the container's own output. */
  private sink(
    target: string,
    append: boolean,
    outputs: Array<{ path: string; append: boolean; data: Buffer[]; fd: number }>,
  ): (d: Buffer | string) => void {
    const path = resolvePath(this.ctx.cwd, target);
    if (path === '/dev/null') return () => undefined;
    if (path === '/proc/1/fd/1' || path === '/proc/1/fd/2')
      return (d) => this.ctx.containerOutput(path.endsWith('1') ? 'stdout' : 'stderr', Buffer.from(d));
    const o = { path, append, data: [] as Buffer[], fd: 1 };
    outputs.push(o);
    return (d) => o.data.push(Buffer.from(d));
  }

  private async invoke(words: string[], assigns: Array<[string, string]>, io: ProcessIO): Promise<number> {
    const [name = '', ...args] = words;
    switch (name) {
      case 'exit': {
        const n = args[0] === undefined ? this.status : Number.parseInt(args[0], 10);
        throw new ExitSignal(Number.isNaN(n) ? 2 : n & 0xff);
      }
      case 'cd': {
        const target = resolvePath(this.ctx.cwd, args[0] ?? this.vars.get('HOME') ?? '/');
        const n = this.ctx.fs.stat(target);
        if (n?.type !== 'dir') {
          io.stderr(`sh: 1: cd: can't cd to ${args[0]}\n`);
          return 2;
        }
        this.ctx.cwd = target;
        return 0;
      }
      case 'export':
        for (const a of args) {
          const eq = a.indexOf('=');
          if (eq > 0) this.vars.set(a.slice(0, eq), a.slice(eq + 1));
        }
        return 0;
      case 'unset':
        for (const a of args) this.vars.delete(a);
        return 0;
      case ':':
        return 0;
    }
    const ctx = assigns.length > 0 ? { ...this.ctx, env: new Map([...this.vars, ...assigns]) } : this.ctx;
    const outcome = await execProgram(words, ctx, io);
    if ('startError' in outcome) {
      io.stderr(name.includes('/') ? `sh: 1: ${name}: not found\n` : `sh: 1: ${name}: not found\n`);
      return 127;
    }
    return outcome.exitCode;
  }
}
