import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseLocalImage, resolveImage } from './images.js';

let store: string;
beforeAll(() => {
  store = mkdtempSync(join(tmpdir(), 'kubeloop-store-'));
  for (const [name, tag, image] of [
    ['op', 'latest', { entrypoint: ['node', 'dist/main.js'] }],
    ['team/op', 'v2', { dir: '/abs/project', cmd: ['--flag'] }],
  ] as const) {
    mkdirSync(join(store, name, tag), { recursive: true });
    writeFileSync(join(store, name, tag, 'image.json'), JSON.stringify(image));
  }
});
afterAll(() => rmSync(store, { recursive: true, force: true }));

describe('local images', () => {
  it('parse kubeloop.local/<name>[:tag][@digest], tag latest by default', () => {
    expect(parseLocalImage('kubeloop.local/op')).toEqual({ name: 'op', tag: 'latest' });
    expect(parseLocalImage('kubeloop.local/team/op:v2')).toEqual({ name: 'team/op', tag: 'v2' });
    expect(parseLocalImage('kubeloop.local/op:v1@sha256:abc')).toEqual({ name: 'op', tag: 'v1' });
    expect(parseLocalImage('docker.io/library/nginx:1.27')).toBeUndefined();
    expect(parseLocalImage('kubeloop.local/../etc')).toBeUndefined();
  });

  it('resolve from the store, the image directory relative to its image.json (default app/)', () => {
    expect(resolveImage('kubeloop.local/op', { imageStore: store })).toEqual({
      entrypoint: ['node', 'dist/main.js'],
      dir: join(store, 'op', 'latest', 'app'),
    });
    expect(resolveImage('kubeloop.local/team/op:v2', { imageStore: store })).toMatchObject({
      dir: '/abs/project',
    });
  });

  it('leave every other image simulated: not in the store, or not local and not mapped', () => {
    expect(resolveImage('kubeloop.local/op:missing', { imageStore: store })).toBeUndefined();
    expect(resolveImage('nginx:1.27', { imageStore: store })).toBeUndefined();
    expect(resolveImage('nginx:1.27', { images: { 'nginx:1.27': { dir: '/srv/www' } } })).toEqual({
      dir: '/srv/www',
    });
  });
});
