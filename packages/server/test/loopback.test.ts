import { existsSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startLoopback } from '../src/loopback.js';

describe('the loopback socket of the built-in controllers', () => {
  it('serves the listener on a private Unix socket and removes it when closed', async () => {
    const lo = await startLoopback((req, res) => res.end(`hello ${req.url}`));
    if (!lo) throw new Error('no loopback on this platform');
    expect(statSync(dirname(lo.socketPath)).mode & 0o777).toBe(0o700);
    const text = await new Promise<string>((resolve, reject) => {
      request({ socketPath: lo.socketPath, path: '/x' }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve(body));
      })
        .on('error', reject)
        .end();
    });
    expect(text).toBe('hello /x');
    await lo.close();
    expect(existsSync(dirname(lo.socketPath))).toBe(false);
  });
});
