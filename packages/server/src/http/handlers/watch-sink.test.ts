import type { ServerResponse } from 'node:http';
import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { httpWatchSink } from './watch-sink.js';

/** A response on a socket that records what happens to it, in order. */
function fakeResponse() {
  const log: string[] = [];
  const socket = {
    destroyed: false,
    cork: () => log.push('cork'),
    uncork: () => log.push('uncork'),
  };
  const res = {
    socket,
    writableEnded: false,
    writableLength: 0,
    write: (chunk: string) => log.push(`write ${chunk}`),
    end: () => {
      res.writableEnded = true;
      log.push('end');
    },
    destroy: () => log.push('destroy'),
  };
  return { res: res as unknown as ServerResponse, log };
}

describe('httpWatchSink', () => {
  it("sends a turn's events in one write, at the end of the turn", async () => {
    const { res, log } = fakeResponse();
    const sink = httpWatchSink(res);
    sink.write('a\n');
    sink.write('b\n');
    sink.write('c\n');
    expect(log).toEqual(['cork', 'write a\n', 'write b\n', 'write c\n']);
    await turn();
    expect(log).toEqual(['cork', 'write a\n', 'write b\n', 'write c\n', 'uncork']);
    // The next turn's events are held again.
    sink.write('d\n');
    await turn();
    expect(log.slice(5)).toEqual(['cork', 'write d\n', 'uncork']);
  });

  it('sends what it holds before the stream ends, and never uncorks a socket it gave up', async () => {
    const { res, log } = fakeResponse();
    const sink = httpWatchSink(res);
    sink.write('a\n');
    sink.end();
    expect(log).toEqual(['cork', 'write a\n', 'uncork', 'end']);
    await turn();
    expect(log).toEqual(['cork', 'write a\n', 'uncork', 'end']);

    const dropped = fakeResponse();
    const other = httpWatchSink(dropped.res);
    other.write('x\n');
    other.destroy();
    await turn();
    expect(dropped.log).toEqual(['cork', 'write x\n', 'destroy']);
  });

  it('flushNow sends at once what it holds (a snapshot batch)', () => {
    const { res, log } = fakeResponse();
    const sink = httpWatchSink(res);
    sink.write('a\n');
    sink.flushNow();
    expect(log).toEqual(['cork', 'write a\n', 'uncork', 'uncork']);
  });
});
