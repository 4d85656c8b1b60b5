/**
 * The parent-death watchdog of process-backed pods: one small `/bin/sh` per control plane, in a
 * session of its own, told on its standard input which process groups the containers run in
 * (`+<pgid>` when one starts, `-<pgid>` once it is gone). The control plane holds the only write
 * end of that pipe: when it dies, even by `kill -9`, the watchdog reads end of input and kills
 * every group still listed, so that no container outlives it by more than a moment.
 *
 * A graceful stop ends the containers itself, then closes the pipe (the watchdog then has nothing
 * left to kill and exits). Given a directory, the watchdog removes it last (the pods' files).
 */
import { type ChildProcess, spawn } from 'node:child_process';

const SCRIPT = `
groups=' '
while IFS= read -r line; do
  case "$line" in
    +*) groups="$groups\${line#+} " ;;
    -*) g=\${line#-}; next=' '; for x in $groups; do [ "$x" = "$g" ] || next="$next$x "; done; groups=$next ;;
  esac
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
if [ -n "$1" ]; then rm -rf -- "$1"; fi
`;

/**
 * The watchdog process, started on first use.
 *
 * @example
 * ```ts
 * const dog = new Watchdog();
 * const child = spawn(cmd, args, { detached: true }); // its own process group
 * dog.watch(child.pid!);
 * child.on('exit', () => dog.release(child.pid!));
 * ```
 */
export class Watchdog {
  private child: ChildProcess | undefined;
  /** A directory the watchdog removes once it killed what was left (set before the first watch). */
  cleanup: string | undefined;

  /** The watchdog's pid (for tests), once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Kill the process group `pgid` if the control plane dies. */
  watch(pgid: number): void {
    this.send(`+${pgid}`);
  }

  /** The group is gone: forget it (its id may be reused). */
  release(pgid: number): void {
    this.send(`-${pgid}`);
  }

  /** Ends the watchdog (it kills the groups still listed). */
  close(): void {
    this.child?.stdin?.end();
    this.child = undefined;
  }

  private send(line: string): void {
    if (!this.child) {
      // Its own session: a terminal's Ctrl-C to the control plane's group does not reach it first.
      this.child = spawn('/bin/sh', ['-c', SCRIPT, 'kubeloop-watchdog', this.cleanup ?? ''], {
        detached: true,
        stdio: ['pipe', 'ignore', 'ignore'],
      });
      this.child.on('error', () => undefined);
      this.child.stdin?.on('error', () => undefined);
      // Neither the watchdog nor its pipe keeps the control plane's event loop alive.
      this.child.unref();
      (this.child.stdin as unknown as { unref?: () => void }).unref?.();
    }
    this.child.stdin?.write(`${line}\n`);
  }
}
