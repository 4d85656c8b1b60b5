/**
 * The language of the simulated shell: words with their quoting, operators (`;`, `&&`, `||`,
 * `|`) and redirections (`>`, `>>`, `<`, `2>&1`), parsed into pipelines. Expansion and
 * execution are the shell's (shell.ts).
 */

/** A piece of a word: its text and how it was quoted (0 bare, 1 single, 2 double). */
export type Seg = { t: string; q: 0 | 1 | 2 };
export type Tok = { k: 'w'; segs: Seg[] } | { k: 'op'; v: string };

/** A simple command: its words and redirections. */
export interface Command {
  words: Seg[][];
  redirects: Array<{ op: string; fd: number; target: Seg[] }>;
}
/** Commands joined by `|`, and how the pipeline joins the previous one. */
export interface Pipeline {
  commands: Command[];
  /** How it joins the previous one. */
  join: ';' | '&&' | '||';
}

/** A script the shell cannot parse (its message is `sh`'s, e.g. `Syntax error: ...`). */
export class ShellSyntaxError extends Error {}

/** The tokens of a script. */
export function tokenize(src: string): Tok[] {
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

/** The pipelines of a tokenized script. */
export function parse(toks: Tok[]): Pipeline[] {
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
