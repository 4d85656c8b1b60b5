import { describe, expect, it } from 'vitest';
import { bufferStdin, EMPTY_STDIN, type ExecOutcome, execProgram } from './shell.js';
import { packTar, unpackTar } from './tar.js';
import { ContainerFs, ContainerLayer } from './vfs.js';

function container() {
  const layer = new ContainerLayer({ '/etc/hostname': 'box\n' });
  const logs: string[] = [];
  const run = async (argv: string[], stdin?: Buffer) => {
    let stdout = Buffer.alloc(0);
    let stderr = '';
    const fs = new ContainerFs(layer, [
      {
        path: '/etc/cfg',
        files: new Map([
          ['a.conf', Buffer.from('A=1\n')],
          ['dir/b', Buffer.from('B')],
        ]),
      },
      { path: '/etc/one.yaml', files: new Map([['', Buffer.from('one: 1\n')]]) },
    ]);
    const outcome: ExecOutcome = await execProgram(
      argv,
      {
        fs,
        env: new Map([
          ['PATH', '/bin'],
          ['HOME', '/root'],
          ['NAME', 'kube'],
        ]),
        hostname: 'box',
        cwd: '/',
        containerOutput: (_s, d) => logs.push(d.toString()),
        signal: new AbortController().signal,
      },
      {
        stdin: stdin ? bufferStdin(stdin) : EMPTY_STDIN,
        stdout: (d) => {
          stdout = Buffer.concat([stdout, Buffer.from(d)]);
        },
        stderr: (d) => {
          stderr += d.toString();
        },
      },
    );
    return { outcome, stdout: stdout.toString('latin1'), raw: stdout, stderr };
  };
  return { run, logs };
}

const sh = (script: string) => ['sh', '-c', script];

describe('the simulated shell', () => {
  it('quotes, expands variables and $?, and chains with ; && ||', async () => {
    const { run } = container();
    const r = await run(
      sh(
        `echo "hi $NAME" 'lit $NAME' \${NAME}s; false || echo "after $?"; true && echo yes; false && echo no`,
      ),
    );
    expect(r.stdout).toBe('hi kube lit $NAME kubes\nafter 1\nyes\n');
    expect(r.outcome).toEqual({ exitCode: 1 });
  });
  it('exits with exit N, and 127 with dash’s message for an unknown command', async () => {
    const { run } = container();
    expect((await run(sh('exit 42; echo never'))).outcome).toEqual({ exitCode: 42 });
    const unknown = await run(sh('nope arg'));
    expect([unknown.outcome, unknown.stderr]).toEqual([{ exitCode: 127 }, 'sh: 1: nope: not found\n']);
    expect((await run(sh('echo "unterminated'))).stderr).toBe(
      'sh: 1: Syntax error: Unterminated quoted string\n',
    );
  });
  it('redirects to files, appends, reads them back, pipes, and 2>&1', async () => {
    const { run } = container();
    await run(sh('echo one > /tmp/f; echo two >> /tmp/f'));
    expect((await run(['cat', '/tmp/f'])).stdout).toBe('one\ntwo\n');
    expect((await run(sh('cat < /tmp/f | cat'))).stdout).toBe('one\ntwo\n');
    expect((await run(sh('cat /missing 2>&1'))).stdout).toBe('cat: /missing: No such file or directory\n');
    expect((await run(sh('cat /missing 2>/dev/null; echo $?'))).stdout).toBe('1\n');
  });
  it('writes to the container’s own output through /proc/1/fd/1', async () => {
    const { run, logs } = container();
    await run(sh('echo logged > /proc/1/fd/1'));
    expect(logs).toEqual(['logged\n']);
  });
  it('reads mounts, which are read-only, and lists directories', async () => {
    const { run } = container();
    expect((await run(['ls', '/etc/cfg'])).stdout).toBe('a.conf\ndir\n');
    expect((await run(['cat', '/etc/one.yaml'])).stdout).toBe('one: 1\n');
    expect((await run(['ls', '/etc'])).stdout).toContain('cfg\nhostname\n');
    const ro = await run(sh('echo x > /etc/cfg/new'));
    expect(ro.stderr).toBe('sh: 1: cannot create /etc/cfg/new: Read-only file system\n');
    const missing = await run(['ls', '/nope']);
    expect([missing.outcome, missing.stderr]).toEqual([
      { exitCode: 2 },
      "ls: cannot access '/nope': No such file or directory\n",
    ]);
    expect((await run(['test', '-d', '/etc/cfg'])).outcome).toEqual({ exitCode: 0 });
    expect((await run(['test', '-d', '/etc/cfg/a.conf'])).outcome).toEqual({ exitCode: 1 });
  });
  it('reports a program that does not exist as runc does, not as an exit code', async () => {
    const { run } = container();
    expect((await run(['foo'])).outcome).toEqual({
      startError:
        'OCI runtime exec failed: exec failed: unable to start container process: exec: "foo": executable file not found in $PATH: unknown',
    });
    expect((await run(['/opt/x'])).outcome).toEqual({
      startError:
        'OCI runtime exec failed: exec failed: unable to start container process: exec: "/opt/x": stat /opt/x: no such file or directory: unknown',
    });
    expect((await run(['/bin/echo', 'abs'])).stdout).toBe('abs\n');
  });
});

describe('tar', () => {
  it('round-trips files and directories, long names included', async () => {
    const long = `${'d'.repeat(120)}/${'f'.repeat(90)}`;
    const veryLong = 'x'.repeat(300);
    const mtime = new Date('2024-01-02T03:04:05Z');
    const archive = packTar([
      { name: 'top', type: 'dir', mode: 0o755, mtime, data: Buffer.alloc(0) },
      { name: 'top/a.txt', type: 'file', mode: 0o600, mtime, data: Buffer.from('hello') },
      { name: long, type: 'file', mode: 0o644, mtime, data: Buffer.alloc(1000, 7) },
      { name: veryLong, type: 'file', mode: 0o644, mtime, data: Buffer.from('v') },
    ]);
    expect(archive.length % 10240).toBe(0);
    const back = unpackTar(archive);
    expect(back.map((e) => [e.name, e.type, e.mode, e.data.length])).toEqual([
      ['top', 'dir', 0o755, 0],
      ['top/a.txt', 'file', 0o600, 5],
      [long, 'file', 0o644, 1000],
      [veryLong, 'file', 0o644, 1],
    ]);
    expect(back[1]!.mtime).toEqual(mtime);
  });
  it('tar cf - then tar xf - -C moves a tree within the container', async () => {
    const { run } = container();
    await run(sh('mkdir -p /src/sub && echo 1 > /src/sub/one && mkdir /dst'));
    const packed = await run(['tar', 'cf', '-', '/src']);
    expect(packed.stderr).toBe("tar: Removing leading `/' from member names\n");
    const x = await run(['tar', '-xmf', '-', '-C', '/dst'], packed.raw);
    expect(x.outcome).toEqual({ exitCode: 0 });
    expect((await run(['cat', '/dst/src/sub/one'])).stdout).toBe('1\n');
    const garbage = await run(['tar', 'xf', '-'], Buffer.alloc(512, 1));
    expect(garbage.outcome).toEqual({ exitCode: 2 });
    expect(garbage.stderr).toContain('This does not look like a tar archive');
  });
});
