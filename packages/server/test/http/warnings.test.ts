/**
 * `Warning` headers as the apiserver writes them (`299 - "text"`, UTF-8): a warning naming a
 * field outside Latin-1 never turns a stored write into a failure.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpClient } from '../http.js';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let env: KubectlEnv;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  env = await startKubectlEnv();
  http = httpClient(env.cp);
});
afterAll(async () => {
  http?.close();
  await env?.stop();
});

const CM = '/api/v1/namespaces/default/configmaps';
/** A header value as sent: Node hands it over as Latin-1 characters, one per byte. */
const utf8 = (v: string | string[] | undefined) =>
  (Array.isArray(v) ? v : v === undefined ? [] : [v]).map((h) => Buffer.from(h, 'latin1').toString('utf8'));

describe('warnings', () => {
  it.each([
    ['spéc', 'latin1'],
    ['規格', 'cjk'],
    ['🚀', 'emoji'],
  ])('an unknown field %s: 201 with the warning, stored once', async (field, name) => {
    const path = `${CM}?fieldValidation=Warn`;
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `w-${name}` },
      data: {},
      [field]: 1,
    };
    const r = await http.post(path, body);
    expect(r.status, r.text).toBe(201);
    expect(utf8(r.headers.warning)).toEqual([`299 - "unknown field \\"${field}\\""`]);
    const list = await http.get(`${CM}?fieldSelector=metadata.name=w-${name}`);
    expect(list.json.items).toHaveLength(1);
    // A retry (what a client does after a 500) finds it there: 409, not a second object.
    expect((await http.post(path, body)).status).toBe(409);
  });

  it('kubectl prints the warning in UTF-8', async () => {
    const file = join(env.kubeconfigPath, '..', 'cm.json');
    writeFileSync(
      file,
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w-kubectl' }, 'spéc🚀': 1 }),
    );
    const r = await env.run(['create', '--validate=warn', '-f', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Warning: unknown field "spéc🚀"');
  });

  it('quotes and backslashes are escaped, after the %q quoting of the field name', async () => {
    const r = await http.post(`${CM}?fieldValidation=Warn`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'w-quote' },
      'a"b\\c\nd': 1,
    });
    expect(r.status, r.text).toBe(201);
    // The text is `unknown field "a\"b\\c\nd"`; the header escapes its quotes and backslashes again.
    expect(utf8(r.headers.warning)).toEqual([String.raw`299 - "unknown field \"a\\\"b\\\\c\\nd\""`]);
  });
});
