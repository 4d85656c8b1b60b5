import { symbols } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultLogger } from './logger.js';

const stdout = process.stdout as NodeJS.WriteStream & { write: unknown; fd?: number };
const own = Object.getOwnPropertyDescriptor(stdout, 'write');

afterEach(() => {
  if (own) Object.defineProperty(stdout, 'write', own);
  else delete (stdout as { write?: unknown }).write;
});

describe('defaultLogger', () => {
  it('writes to stdout synchronously (one write(2) per line, as klog does), at LOG_LEVEL', () => {
    delete (stdout as { write?: unknown }).write; // the stream's own write, as in an operator's process
    const previous = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = 'debug';
    try {
      const log = defaultLogger();
      const stream = (log as unknown as Record<symbol, { sync?: boolean; fd?: number }>)[symbols.streamSym];
      expect(stream?.sync).toBe(true);
      expect(stream?.fd).toBe(stdout.fd ?? 1);
      expect(log.level).toBe('debug');
    } finally {
      if (previous === undefined) delete process.env.LOG_LEVEL;
      else process.env.LOG_LEVEL = previous;
    }
  });

  it('writes through a replaced process.stdout.write (a test runner capturing output)', () => {
    const lines: string[] = [];
    stdout.write = (chunk: string) => {
      lines.push(chunk);
      return true;
    };
    defaultLogger().info({ k: 1 }, 'hello');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, k: 1, msg: 'hello' });
  });
});
