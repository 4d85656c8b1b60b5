/**
 * A terminal for `kubectl exec -t` in a process-backed container, with no native module: the
 * command runs under util-linux's `script`, which gives it a pseudo-terminal (its stdin,
 * stdout and stderr; echo and line editing as a terminal does) and relays it to the exec's
 * streams. The sizes the client sends on the resize channel are set on that terminal with
 * `stty -F`, and the kernel signals the change (SIGWINCH) to its foreground process group, as
 * a container runtime's resize does. Without `script` on the PATH, the command runs without a
 * terminal.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';

/** A terminal size (client-go's `TerminalSize`). */
export interface TerminalSize {
  width: number;
  height: number;
}

/** The terminal an exec asked for: its current size, and its changes. */
export interface Terminal {
  size(): TerminalSize | undefined;
  onResize(listener: (size: TerminalSize) => void): void;
}

let scriptAvailable: boolean | undefined;

/** Whether `script` (util-linux) can give a command a terminal here. */
function hasScript(): boolean {
  scriptAvailable ??= spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
  return scriptAvailable;
}

const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;

/**
 * The command line running `argv` in a terminal (`script` runs it with `$SHELL -c`, then
 * exits with its exit code), or undefined when there is no `script`.
 */
export function inTerminal(argv: string[]): string[] | undefined {
  if (!hasScript()) return undefined;
  return [
    'script',
    '--quiet',
    '--return',
    '--flush',
    '--command',
    `exec ${argv.map(quote).join(' ')}`,
    '/dev/null',
  ];
}

/** The pseudo-terminal of `script`'s child (its stdin), once it has one. */
function terminalOf(scriptPid: number): string | undefined {
  try {
    const children = readFileSync(`/proc/${scriptPid}/task/${scriptPid}/children`, 'utf8')
      .trim()
      .split(/\s+/);
    for (const child of children) {
      if (!child) continue;
      const tty = readlinkSync(`/proc/${child}/fd/0`);
      if (tty.startsWith('/dev/pts/')) return tty;
    }
  } catch {
    // Not started yet, or gone.
  }
  return undefined;
}

/**
 * Keeps the terminal of the command run by `script` (pid) at the client's size: the size known
 * now once the terminal exists, then each resize. Stops with `signal`.
 */
export function followTerminalSize(scriptPid: number, terminal: Terminal, signal: AbortSignal): void {
  let tty: string | undefined;
  let pending: TerminalSize | undefined = terminal.size();
  const apply = (size: TerminalSize) => {
    if (!tty) {
      pending = size;
      return;
    }
    const stty = spawn('stty', ['-F', tty, 'rows', String(size.height), 'cols', String(size.width)], {
      stdio: 'ignore',
    });
    stty.on('error', () => undefined);
  };
  terminal.onResize((size) => {
    if (!signal.aborted) apply(size);
  });
  // The terminal appears once `script` has forked its child: looked for every 20 ms, for 5 s.
  let tries = 0;
  const look = () => {
    if (signal.aborted) return;
    tty = terminalOf(scriptPid);
    if (tty) {
      if (pending) apply(pending);
      return;
    }
    if (++tries < 250) setTimeout(look, 20).unref();
  };
  look();
}
