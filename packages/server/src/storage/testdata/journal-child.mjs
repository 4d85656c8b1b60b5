// A separate process for the SQLite journal tests: it runs the journal transpiled to JavaScript
// by the test (argv[2] is that module's path) so that the parent can SIGKILL a real holder of
// the data directory. Every line it prints is one JSON event.
//
//   node journal-child.mjs <sqlite-journal.js> hold <dir>      open, report, then wait to be killed
//   node journal-child.mjs <sqlite-journal.js> try-open <dir>  report whether open succeeds, exit
//   node journal-child.mjs <sqlite-journal.js> append <dir>    16 writers append until killed;
//                                                              {"ack":r} once r is committed
import { pathToFileURL } from 'node:url';

const [modulePath, mode, dir] = process.argv.slice(2);
const { openSqliteJournal } = await import(pathToFileURL(modulePath).href);

const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
// The parent going away must not leave an orphan appending forever.
process.stdout.on('error', () => process.exit(1));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

/** The entry of revision r: puts of fresh keys, and every third revision deletes the previous put. */
function entryOf(r) {
  return r % 3 === 0
    ? { revision: r, key: `/o/${r - 1}`, type: 'delete' }
    : { revision: r, key: `/o/${r}`, type: 'put', value: JSON.stringify({ r }) };
}

if (mode === 'hold') {
  openSqliteJournal(dir);
  emit({ event: 'open', pid: process.pid });
} else if (mode === 'try-open') {
  try {
    const journal = openSqliteJournal(dir);
    emit({ event: 'open', pid: process.pid });
    await journal.close();
  } catch (err) {
    emit({ event: 'error', code: err.code, pid: err.pid, message: err.message });
  }
  process.exit(0);
} else if (mode === 'append') {
  const journal = openSqliteJournal(dir);
  let next = journal.load().revision;
  emit({ event: 'open', pid: process.pid, revision: next });
  const writer = async () => {
    for (;;) {
      const r = ++next;
      await journal.append([entryOf(r)]);
      emit({ ack: r });
    }
  };
  for (let i = 0; i < 16; i++) {
    writer().catch((err) => {
      emit({ event: 'error', message: String(err) });
      process.exit(1);
    });
  }
} else {
  throw new Error(`unknown mode ${mode}`);
}
