/** The log backend: appended JSON lines, rotated past --audit-log-maxsize, old files pruned. */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLogBackend } from './log-backend.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('openLogBackend', () => {
  it('appends lines, rotates the file past maxsize and keeps at most maxbackup old files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-log-'));
    dirs.push(dir);
    const path = join(dir, 'logs', 'audit.log');
    const sink = openLogBackend({ path, maxSizeMB: 1, maxBackups: 1 });
    const line = (c: string) => `${c.repeat(700 * 1024)}\n`;
    sink.write(line('a'));
    sink.write(line('b'));
    sink.write(line('c'));
    sink.close();
    // Writes after close (connections ending after the server stopped) are dropped.
    sink.write(line('d'));
    expect(readFileSync(path, 'utf8')).toBe(line('c'));
    const backups = readdirSync(join(dir, 'logs')).filter((f) => f !== 'audit.log');
    expect(backups).toHaveLength(1);
    expect(backups[0]).toMatch(/^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log$/);
  });
});
