import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import ts from 'typescript';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type JournalEntry, JournalError, MemoryJournal } from './journal.js';
import { DATA_FILE, openSqliteJournal, PID_FILE, type SqliteJournal } from './sqlite-journal.js';

const here = dirname(fileURLToPath(import.meta.url));
const childScript = join(here, 'testdata', 'journal-child.mjs');

let dirs: string[] = [];
let journals: SqliteJournal[] = [];
let children: Child[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-journal-'));
  dirs.push(dir);
  return dir;
}

function open(dir: string, opts?: { compactEvery?: number }): SqliteJournal {
  const j = openSqliteJournal(dir, opts);
  journals.push(j);
  return j;
}

afterEach(async () => {
  for (const c of children) {
    if (c.proc.exitCode === null && c.proc.signalCode === null) {
      c.proc.kill('SIGKILL');
      await once(c.proc, 'exit');
    }
  }
  for (const j of journals) await j.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  children = [];
  journals = [];
  dirs = [];
});

const put = (revision: number, key: string, value: string): JournalEntry => ({
  revision,
  key,
  type: 'put',
  value,
});
const del = (revision: number, key: string): JournalEntry => ({ revision, key, type: 'delete' });

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an exception');
}

describe('SqliteJournal', () => {
  it('round-trips objects, revisions and meta across close and reopen', async () => {
    const dir = join(tempDir(), 'nested', 'data'); // created on open
    const a = open(dir);
    expect(a.load()).toEqual({ revision: 0, objects: [], compactedRevision: 0 });
    await a.append([put(1, '/b', '{"v":1}'), put(2, '/a', '{"v":1}')]);
    await a.append([put(3, '/b', '{"v":2}')]);
    await a.append([put(4, '/c', '{"v":1}'), del(5, '/c'), put(6, '/c', '{"v":"again"}')]);
    a.setMeta('admin-token', 's3cret');
    a.setMeta('admin-token', 'rotated');
    await a.close();

    const b = open(dir);
    expect(b.load()).toEqual({
      revision: 6,
      objects: [
        { key: '/a', value: '{"v":1}', revision: 2, createRevision: 2 },
        // An update keeps the create revision; a re-create after a delete starts a new one.
        { key: '/b', value: '{"v":2}', revision: 3, createRevision: 1 },
        { key: '/c', value: '{"v":"again"}', revision: 6, createRevision: 6 },
      ],
      compactedRevision: 0,
    });
    expect(b.getMeta('admin-token')).toBe('rotated');
    expect(b.getMeta('missing')).toBeUndefined();
  });

  it('keeps the revision of trailing deletes, so revisions keep increasing after a restart', async () => {
    const dir = tempDir();
    const a = open(dir);
    await a.append([put(1, '/x', '{}')]);
    await a.append([del(2, '/x')]);
    await a.close();

    const b = open(dir);
    expect(b.load()).toEqual({ revision: 2, objects: [], compactedRevision: 0 });
    await expect(b.append([put(2, '/y', '{}')])).rejects.toBeInstanceOf(RangeError);
    await b.append([put(3, '/y', '{}')]);
    await b.append([del(4, '/y')]);
    await b.close();

    expect(open(dir).load()).toEqual({ revision: 4, objects: [], compactedRevision: 0 });
  });

  it('rejects malformed or out-of-order entries without writing them', async () => {
    const j = open(tempDir());
    await j.append([put(5, '/a', '{}')]);
    await expect(j.append([put(5, '/b', '{}')])).rejects.toBeInstanceOf(RangeError);
    await expect(j.append([put(7, '/b', '{}'), put(6, '/c', '{}')])).rejects.toBeInstanceOf(RangeError);
    await expect(j.append([{ revision: 8, key: '/d', type: 'put' }])).rejects.toBeInstanceOf(TypeError);
    await expect(j.append([put(9.5, '/e', '{}')])).rejects.toBeInstanceOf(RangeError);
    await j.append([put(6, '/f', '{}')]);
    expect(j.load().objects.map((o) => o.key)).toEqual(['/a', '/f']);
    expect(j.stats().entries).toBe(2);
  });

  it('group-commits every append of one tick in one transaction', async () => {
    const j = open(tempDir());
    const writes = Array.from({ length: 16 }, (_, i) => j.append([put(i + 1, `/k/${i}`, `{"i":${i}}`)]));
    await Promise.all(writes);
    expect(j.stats()).toMatchObject({ commits: 1, entries: 16 });

    await j.append([put(17, '/k/16', '{}'), put(18, '/k/17', '{}')]);
    expect(j.stats()).toMatchObject({ commits: 2, entries: 18 });
    expect(j.load().objects).toHaveLength(18);
  });

  it('copies entries, so a caller reusing its array does not change what is written', async () => {
    const j = open(tempDir());
    const entry = put(1, '/a', '"first"');
    const done = j.append([entry]);
    entry.value = '"changed"';
    await done;
    expect(j.load().objects[0]?.value).toBe('"first"');
  });

  it('rejects every waiter of a batch whose commit fails', async () => {
    const dir = tempDir();
    const j = open(dir);
    await j.append([put(1, '/a', '{}')]);
    // Simulates the file system going away under the server.
    (j as unknown as { db: Database.Database }).db.close();
    const results = await Promise.allSettled([
      j.append([put(2, '/b', '{}')]),
      j.append([put(3, '/c', '{}')]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    for (const r of results) {
      const err = (r as PromiseRejectedResult).reason;
      expect(err).toBeInstanceOf(JournalError);
      expect((err as JournalError).code).toBe('io');
      expect((err as JournalError).message).toContain(join(dir, DATA_FILE));
    }
    expect(j.stats()).toMatchObject({ commits: 1, entries: 1 });
    await j.close(); // still closes cleanly

    expect(open(dir).load()).toEqual({
      revision: 1,
      objects: [{ key: '/a', value: '{}', revision: 1, createRevision: 1 }],
      compactedRevision: 0,
    });
  });

  it('close flushes pending appends, is idempotent, and refuses later use', async () => {
    const dir = tempDir();
    const j = open(dir);
    const pending = j.append([put(1, '/a', '{}')]);
    const closing = j.close();
    await pending;
    await closing;
    await j.close();
    expect(readdirSync(dir)).not.toContain(PID_FILE);

    const err = await rejection(j.append([put(2, '/b', '{}')]));
    expect(err).toBeInstanceOf(JournalError);
    expect((err as JournalError).code).toBe('closed');
    expect((thrown(() => j.getMeta('x')) as JournalError).code).toBe('closed');
    expect(open(dir).load().revision).toBe(1);
  });

  it('keeps reserved meta names to itself', () => {
    const j = open(tempDir());
    expect(thrown(() => j.setMeta('journal.revision', '99'))).toBeInstanceOf(RangeError);
    expect(thrown(() => j.getMeta('journal.revision'))).toBeInstanceOf(RangeError);
  });

  it('truncates the write-ahead log every compactEvery commits', async () => {
    const dir = tempDir();
    const j = open(dir, { compactEvery: 2 });
    const wal = join(dir, `${DATA_FILE}-wal`);
    await j.append([put(1, '/a', 'x'.repeat(10_000))]);
    expect(statSync(wal).size).toBeGreaterThan(10_000);
    await j.append([put(2, '/b', '{}')]);
    expect(j.stats().checkpoints).toBe(1);
    expect(statSync(wal).size).toBe(0);
    await j.append([put(3, '/c', '{}')]);
    await j.append([put(4, '/d', '{}')]);
    expect(j.stats().checkpoints).toBe(2);
    expect(statSync(wal).size).toBe(0);
    await j.close();
    expect(open(dir).load().revision).toBe(4);
  });

  it('names the file when it is not a database', () => {
    const dir = tempDir();
    const file = join(dir, DATA_FILE);
    writeFileSync(
      file,
      'this is not a database, just some text that is long enough to fill a header.\n'.repeat(20),
    );
    const err = thrown(() => openSqliteJournal(dir));
    expect(err).toBeInstanceOf(JournalError);
    expect((err as JournalError).code).toBe('corrupt');
    expect((err as JournalError).path).toBe(file);
    expect((err as JournalError).message).toContain(file);
  });

  it('refuses a database of another program and leaves it untouched', () => {
    const dir = tempDir();
    const file = join(dir, DATA_FILE);
    const foreign = new Database(file);
    foreign.exec(
      "CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO accounts VALUES (1, 'a');",
    );
    foreign.close();

    const err = thrown(() => openSqliteJournal(dir));
    expect(err).toBeInstanceOf(JournalError);
    expect((err as JournalError).code).toBe('incompatible');
    expect((err as JournalError).message).toContain(file);

    const again = new Database(file);
    expect(again.pragma('journal_mode', { simple: true })).toBe('delete');
    expect(again.prepare('SELECT name FROM accounts').all()).toEqual([{ name: 'a' }]);
    again.close();
  });

  it('refuses a data file written by a newer schema', async () => {
    const dir = tempDir();
    await open(dir).close();
    const raw = new Database(join(dir, DATA_FILE));
    raw.pragma('user_version = 99');
    raw.close();
    const err = thrown(() => openSqliteJournal(dir));
    expect((err as JournalError).code).toBe('incompatible');
  });

  it('reports an unusable data directory as an I/O error naming it', () => {
    const parent = tempDir();
    const notADir = join(parent, 'file');
    writeFileSync(notADir, '');
    const err = thrown(() => openSqliteJournal(join(notADir, 'data')));
    expect(err).toBeInstanceOf(JournalError);
    expect((err as JournalError).code).toBe('io');
    expect((err as JournalError).message).toContain(notADir);
  });
});

describe('SqliteJournal history', () => {
  /** A put of `key` that replaced the state at `prevRevision`. */
  const upd = (revision: number, key: string, value: string, prevRevision: number): JournalEntry => ({
    ...put(revision, key, value),
    prevRevision,
  });
  const historyRows = (dir: string) => {
    const raw = new Database(join(dir, DATA_FILE), { readonly: true });
    const rows = raw.prepare('SELECT revision FROM history ORDER BY revision').all() as Array<{
      revision: number;
    }>;
    raw.close();
    return rows.map((r) => r.revision);
  };

  it('reads back every change after a revision with the state it replaced, across a reopen', async () => {
    const dir = tempDir();
    const a = open(dir);
    await a.append([put(1, '/c/a', '{"v":1}'), put(2, '/c/b', '{"v":1}'), put(3, '/d/x', '{}')]);
    await a.append([upd(4, '/c/a', '{"v":2}', 1), { ...del(5, '/c/b'), prevRevision: 2 }]);
    await a.append([{ ...del(6, '/c/a'), value: '{"v":2,"last":true}', prevRevision: 4 }]);
    await a.close();

    const b = open(dir);
    expect(b.readHistory(1, 6, '/c/')).toEqual([
      { revision: 2, key: '/c/b', type: 'put', value: '{"v":1}' },
      { revision: 4, key: '/c/a', type: 'put', value: '{"v":2}', prev: { revision: 1, value: '{"v":1}' } },
      // Without a value, a delete's last state is the previous one stamped with its revision.
      {
        revision: 5,
        key: '/c/b',
        type: 'delete',
        value: '{"v":1,"metadata":{"resourceVersion":"5"}}',
        prev: { revision: 2, value: '{"v":1}' },
      },
      {
        revision: 6,
        key: '/c/a',
        type: 'delete',
        value: '{"v":2,"last":true}',
        prev: { revision: 4, value: '{"v":2}' },
      },
    ]);
    expect(b.readHistory(4, 5, '/c/').map((e) => e.revision)).toEqual([5]);
  });

  it('compacts durably, keeping only the state each live key had at the compacted revision', async () => {
    const dir = tempDir();
    const j = open(dir);
    await j.append([put(1, '/c/keep', '{"v":1}'), put(2, '/c/moved', '{"v":1}'), put(3, '/c/gone', '{}')]);
    await j.append([upd(4, '/c/keep', '{"v":2}', 1), upd(5, '/c/moved', '{"v":2}', 2)]);
    await j.append([{ ...del(6, '/c/gone'), prevRevision: 3 }, upd(7, '/c/moved', '{"v":3}', 5)]);
    await j.compact(6);
    expect(() => j.readHistory(5, 7, '/c/')).toThrow(RangeError);
    // /c/moved at 7 still has its previous state (5); /c/keep's state at 6 is kept for its next change.
    expect(j.readHistory(6, 7, '/c/')).toEqual([
      {
        revision: 7,
        key: '/c/moved',
        type: 'put',
        value: '{"v":3}',
        prev: { revision: 5, value: '{"v":2}' },
      },
    ]);
    expect(j.stats().compactedRows).toBe(4);
    await j.close();
    expect(historyRows(dir)).toEqual([4, 5, 7]);

    const again = open(dir);
    expect(again.load().compactedRevision).toBe(6);
    expect(() => again.readHistory(5, 7, '/c/')).toThrow(RangeError);
    await again.append([upd(8, '/c/keep', '{"v":3}', 4)]);
    await again.compact(8);
    await expect(again.compact(9)).rejects.toBeInstanceOf(RangeError);
    expect(again.readHistory(8, 8, '/c/')).toEqual([]);
    await again.close();
    expect(historyRows(dir)).toEqual([7, 8]);
  });

  it('deletes a large history in chunks while appends go on', async () => {
    const dir = tempDir();
    const j = open(dir);
    const n = 12_000;
    await j.append(Array.from({ length: n }, (_, i) => put(i + 1, `/c/${i}`, '{}')));
    await j.append(Array.from({ length: n }, (_, i) => upd(n + i + 1, `/c/${i}`, '{"v":2}', i + 1)));
    const compaction = j.compact(2 * n);
    const during = j.append([upd(2 * n + 1, '/c/0', '{"v":3}', n + 1)]);
    await Promise.all([compaction, during]);
    expect(j.stats().compactedRows).toBe(n);
    expect(j.readHistory(2 * n, 2 * n + 1, '/c/')).toEqual([
      {
        revision: 2 * n + 1,
        key: '/c/0',
        type: 'put',
        value: '{"v":3}',
        prev: { revision: n + 1, value: '{"v":2}' },
      },
    ]);
  });

  it('opens a schema-1 data file: its states become the history, compacted at its revision', async () => {
    const dir = tempDir();
    const raw = new Database(join(dir, DATA_FILE));
    raw.exec(`CREATE TABLE objects (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL,
        mod_revision INTEGER NOT NULL, create_revision INTEGER NOT NULL);
      CREATE TABLE meta (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
      INSERT INTO objects VALUES ('/c/a', '{"v":1}', 3, 1);
      INSERT INTO meta VALUES ('journal.revision', '5');
      PRAGMA application_id = ${0x6b6c6f70};
      PRAGMA user_version = 1;`);
    raw.close();

    const j = open(dir);
    expect(j.load()).toMatchObject({ revision: 5, compactedRevision: 5 });
    expect(() => j.readHistory(4, 5, '/c/')).toThrow(RangeError);
    await j.append([upd(6, '/c/a', '{"v":2}', 3)]);
    expect(j.readHistory(5, 6, '/c/')).toEqual([
      { revision: 6, key: '/c/a', type: 'put', value: '{"v":2}', prev: { revision: 3, value: '{"v":1}' } },
    ]);
  });
});

describe('SqliteJournal in other processes', () => {
  let modulePath: string;
  let buildDir: string;

  beforeAll(() => {
    // The child runs this very code: transpile it next to the repository's node_modules so
    // that `better-sqlite3` resolves from there.
    const require = createRequire(import.meta.url);
    const nodeModules = dirname(dirname(require.resolve('better-sqlite3/package.json')));
    const cache = join(nodeModules, '.cache', 'kubeloop-test');
    mkdirSync(cache, { recursive: true });
    buildDir = mkdtempSync(join(cache, 'journal-'));
    writeFileSync(join(buildDir, 'package.json'), '{"type":"module"}\n');
    for (const name of ['journal', 'sqlite-files', 'sqlite-journal']) {
      const out = ts.transpileModule(readFileSync(join(here, `${name}.ts`), 'utf8'), {
        compilerOptions: {
          module: ts.ModuleKind.ES2022,
          target: ts.ScriptTarget.ES2023,
          verbatimModuleSyntax: true,
        },
        fileName: `${name}.ts`,
      });
      writeFileSync(join(buildDir, `${name}.js`), out.outputText);
    }
    modulePath = join(buildDir, 'sqlite-journal.js');
  });

  afterAll(() => {
    rmSync(buildDir, { recursive: true, force: true });
  });

  function start(mode: 'hold' | 'try-open' | 'append', dir: string): Child {
    const proc = spawn(process.execPath, [childScript, modulePath, mode, dir], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const child = new Child(proc);
    children.push(child);
    return child;
  }

  it('refuses a second server on the same directory, in this process and in another', async () => {
    const dir = tempDir();
    const holder = open(dir);
    const err = thrown(() => openSqliteJournal(dir));
    expect(err).toBeInstanceOf(JournalError);
    expect((err as JournalError).code).toBe('in-use');
    expect((err as JournalError).pid).toBe(process.pid);
    expect((err as JournalError).message).toBe(
      `data directory ${dir} is in use by another kubeloop server (pid ${process.pid})`,
    );

    // The failed attempt above must not have dropped this process's lock.
    const other = start('try-open', dir);
    expect(await other.next((e) => e.event !== undefined)).toMatchObject({
      event: 'error',
      code: 'in-use',
      pid: process.pid,
    });
    await other.exited();

    await holder.close();
    const after = start('try-open', dir);
    expect(await after.next((e) => e.event !== undefined)).toMatchObject({ event: 'open' });
  });

  it('opens a directory whose holder was killed with SIGKILL', async () => {
    const dir = tempDir();
    const holder = start('hold', dir);
    expect(await holder.next((e) => e.event === 'open')).toMatchObject({ pid: holder.proc.pid });

    const err = thrown(() => openSqliteJournal(dir));
    expect((err as JournalError).code).toBe('in-use');
    expect((err as JournalError).pid).toBe(holder.proc.pid);

    holder.proc.kill('SIGKILL');
    await holder.exited();
    // The stale pid file is still there; it must not matter.
    expect(readFileSync(join(dir, PID_FILE), 'utf8').trim()).toBe(String(holder.proc.pid));
    const j = open(dir);
    expect(j.load()).toEqual({ revision: 0, objects: [], compactedRevision: 0 });
    expect(readFileSync(join(dir, PID_FILE), 'utf8').trim()).toBe(String(process.pid));
  });

  it('keeps every acknowledged append when the writer is killed mid-stream', async () => {
    const dir = tempDir();
    const writer = start('append', dir);
    await writer.next((e) => e.event === 'open');
    let maxAck = 0;
    const acked = new Set<number>();
    await writer.next((e) => {
      if (typeof e.ack === 'number') {
        acked.add(e.ack);
        maxAck = Math.max(maxAck, e.ack);
      }
      return acked.size >= 500;
    });
    writer.proc.kill('SIGKILL');
    await writer.exited();
    for (const e of writer.drain()) if (typeof e.ack === 'number') acked.add(e.ack);
    maxAck = Math.max(...acked);

    const snapshot = open(dir).load();
    expect(snapshot.revision).toBeGreaterThanOrEqual(maxAck);
    // Commits are atomic and in order, so the file holds exactly revisions 1..snapshot.revision.
    const expected = new Map<string, { value: string; revision: number }>();
    for (let r = 1; r <= snapshot.revision; r++) {
      if (r % 3 === 0) expected.delete(`/o/${r - 1}`);
      else expected.set(`/o/${r}`, { value: JSON.stringify({ r }), revision: r });
    }
    const actual = new Map(snapshot.objects.map((o) => [o.key, { value: o.value, revision: o.revision }]));
    expect(actual).toEqual(expected);
  });
});

describe('MemoryJournal', () => {
  it('starts empty, acknowledges at once and keeps meta in memory', async () => {
    const j = new MemoryJournal();
    expect(j.load()).toEqual({ revision: 0, objects: [] });
    await j.append([put(1, '/a', '{}')]);
    j.setMeta('ca', 'pem');
    expect(j.getMeta('ca')).toBe('pem');
    expect(thrown(() => j.setMeta('journal.revision', '1'))).toBeInstanceOf(RangeError);
    await j.close();
    await j.close();
    expect(((await rejection(j.append([put(2, '/b', '{}')]))) as JournalError).code).toBe('closed');
  });
});

type ChildEvent = { event?: string; ack?: number; pid?: number; code?: string; message?: string };

/** A child process speaking JSON lines on stdout. */
class Child {
  readonly proc: ChildProcessByStdio<Writable, Readable, Readable>;
  private readonly events: ChildEvent[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private stderr = '';

  constructor(proc: ChildProcessByStdio<Writable, Readable, Readable>) {
    this.proc = proc;
    proc.stderr.setEncoding('utf8').on('data', (s: string) => {
      this.stderr += s;
    });
    const lines = createInterface({ input: proc.stdout });
    lines.on('line', (line) => {
      // A SIGKILL can cut the last line short; a partial line is not an acknowledgement.
      try {
        this.events.push(JSON.parse(line) as ChildEvent);
      } catch {
        return;
      }
      this.wake?.();
    });
    lines.on('close', () => {
      this.ended = true;
      this.wake?.();
    });
  }

  /** Consumes events up to and including the first one `pred` accepts. */
  async next(pred: (e: ChildEvent) => boolean): Promise<ChildEvent> {
    for (;;) {
      while (this.events.length > 0) {
        const e = this.events.shift()!;
        if (pred(e)) return e;
      }
      if (this.ended) throw new Error(`child ended without the expected event; stderr: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }

  /** The events not consumed yet. */
  drain(): ChildEvent[] {
    return this.events.splice(0);
  }

  async exited(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) await once(this.proc, 'exit');
    if (!this.ended) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }
}
