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

import {
  bufferStdin,
  EMPTY_STDIN,
  type ExecOutcome,
  ExitSignal,
  type ProcessContext,
  type ProcessIO,
  type Program,
} from './process.js';
import { TOOLS } from './programs.js';
import { type Command, type Pipeline, parse, type Seg, ShellSyntaxError, tokenize } from './shell-syntax.js';
import { FsError, resolvePath } from './vfs.js';

export {
  bufferStdin,
  EMPTY_STDIN,
  type ExecOutcome,
  type ProcessContext,
  type ProcessIO,
  type Stdin,
} from './process.js';

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
  env,
  printenv,
  ...TOOLS,
};

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
