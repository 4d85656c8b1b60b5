/**
 * How failures look on the wire: JSON `Status` bodies end in a newline (Go's json.Encoder), paths
 * outside every API group answer Go's plain-text `404 page not found`, and methods no route
 * takes answer a 405 `Status`, even those Node's HTTP parser does not know.
 */
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { httpClient } from '../http.js';
import { eventually } from '../kubectl.js';
import { statusProblems } from '../status-check.js';

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
});
afterAll(async () => {
  http?.close();
  await cp?.stop();
});

/** Sends raw bytes over TLS and returns the whole answer (the server closes the connection). */
function raw(request: string): Promise<string> {
  const url = new URL(cp.url);
  return new Promise((resolve, reject) => {
    const s = connect({ host: url.hostname, port: Number(url.port), ca: cp.clientConfig.caData }, () =>
      s.write(request),
    );
    let out = '';
    s.on('data', (d: Buffer) => {
      out += d.toString('utf8');
    });
    s.on('end', () => resolve(out));
    s.on('close', () => resolve(out));
    s.on('error', reject);
  });
}

describe('JSON answers end in a newline', () => {
  it.each([
    ['a 404 Status', '/api/v1/namespaces/default/configmaps/missing', 404],
    ['a 404 Status of an unknown resource', '/apis/apps/v1/nothings', 404],
    ['an object', '/api/v1/namespaces/default', 200],
    ['a list', '/api/v1/namespaces', 200],
    ['a discovery document', '/apis/apps/v1', 200],
  ])('%s', async (_what, path, code) => {
    const r = await http.get(path);
    expect(r.status).toBe(code);
    expect(r.text.endsWith('}\n'), JSON.stringify(r.text.slice(-20))).toBe(true);
  });

  it('a 401 Status', async () => {
    const r = await http.get('/api/v1/namespaces', { token: 'wrong' });
    expect(r.status).toBe(401);
    expect(r.text.endsWith('}\n')).toBe(true);
  });

  it('a 422 Status', async () => {
    const r = await http.post('/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'Not_Valid' },
    });
    expect(r.status).toBe(422);
    expect(r.text.endsWith('}\n')).toBe(true);
  });

  it('/version is written raw: indented, without a newline', async () => {
    const r = await http.get('/version');
    expect(r.status).toBe(200);
    expect(r.text.startsWith('{\n  "major"')).toBe(true);
    expect(r.text.endsWith('}')).toBe(true);
  });
});

describe('paths no API serves', () => {
  it.each([
    '/apis/nope.example.com/v1/things',
    '/apis/nope.example.com/v1/namespaces/default/things/x',
    '/apis/apps/v9/deployments',
    '/api/v2/pods',
    '/apis/nope.example.com/v1',
    '/apis/nope.example.com',
    '/nothing/here',
  ])('%s: 404 page not found, in plain text', async (path) => {
    const r = await http.get(path);
    expect(r.status).toBe(404);
    expect(r.text).toBe('404 page not found\n');
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
  });

  it('an unknown resource of a built-in group/version answers a JSON Status', async () => {
    const r = await http.get('/apis/apps/v1/namespaces/default/things');
    expect(r.status).toBe(404);
    expect(statusProblems(404, r.json), r.text).toEqual([]);
    expect(r.json.message).toBe('the server could not find the requested resource');
  });

  it('the resources of a deleted CRD answer 404 page not found', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.gone.example.com' },
      spec: {
        group: 'gone.example.com',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    };
    const path = '/apis/gone.example.com/v1/namespaces/default/widgets';
    expect((await http.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).toBe(
      201,
    );
    await eventually(async () => (await http.get(path)).status === 200, 10_000, 'the CRD to be served');
    await http.delete('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.gone.example.com');
    const r = await eventually(
      async () => {
        const x = await http.get(path);
        return x.status === 404 ? x : undefined;
      },
      15_000,
      'the CRD to be gone',
    );
    expect(r.text).toBe('404 page not found\n');
  });
});

describe('methods no route takes', () => {
  it('PROPFIND on a resource answers a 405 Status', async () => {
    const r = await http.send('PROPFIND', '/api/v1/namespaces/default/configmaps');
    expect(r.status).toBe(405);
    expect(statusProblems(405, r.json), r.text).toEqual([]);
    expect(r.json.reason).toBe('MethodNotAllowed');
  });

  it('FOO (a method Node does not parse) answers a 405 Status', async () => {
    const out = await raw(
      `FOO /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${cp.clientConfig.token}\r\n\r\n`,
    );
    const [head = '', body = ''] = out.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 405 Method Not Allowed');
    expect(head).toContain('Content-Type: application/json');
    const status = JSON.parse(body);
    expect(statusProblems(405, status)).toEqual([]);
    expect(status.reason).toBe('MethodNotAllowed');
    expect(body.endsWith('}\n')).toBe(true);
  });

  it('the server keeps serving after a malformed request', async () => {
    const out = await raw('GET / HTTP/1.1\r\nBad Header\r\n\r\n');
    expect(out.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect((await http.get('/api/v1/namespaces')).status).toBe(200);
  });
});

describe('query parameters and bodies read as kube-apiserver reads them', () => {
  it('an int64 parameter past int64 or not a number is a 400 with strconv.ParseInt’s message', async () => {
    for (const [v, why] of [
      ['99999999999999999999', 'value out of range'],
      ['9223372036854775808', 'value out of range'],
      ['1e3', 'invalid syntax'],
    ]) {
      const r = await http.get(`/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=${v}`);
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({
        kind: 'Status',
        reason: 'BadRequest',
        message: `strconv.ParseInt: parsing "${v}": ${why}`,
      });
    }
    const limit = await http.get('/api/v1/namespaces/default/configmaps?limit=99999999999999999999');
    expect(limit.json.message).toBe('strconv.ParseInt: parsing "99999999999999999999": value out of range');
  });

  it('a negative timeoutSeconds is a watch that ends at once', async () => {
    const r = await http.get('/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=-5');
    expect(r.status).toBe(200);
  });

  it('an unknown propagationPolicy is a 422 of the DeleteOptions', async () => {
    await http.post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'sideways' } });
    const r = await http.delete('/api/v1/namespaces/default/configmaps/sideways?propagationPolicy=Sideways');
    expect(r.status).toBe(422);
    expect(r.json).toMatchObject({
      reason: 'Invalid',
      message:
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"',
      details: {
        group: 'meta.k8s.io',
        kind: 'DeleteOptions',
        causes: [{ reason: 'FieldValueNotSupported', field: 'propagationPolicy' }],
      },
    });
    expect((await http.get('/api/v1/namespaces/default/configmaps/sideways')).status).toBe(200);
  });

  it('duplicate keys of a YAML body: 400 under Strict with go-yaml’s lines, a warning under Warn, nothing under Ignore', async () => {
    const body = (name: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\ndata:\n  b: "2"\n  b: "3"\n`;
    const send = (name: string, mode: string) =>
      http.send('POST', `/api/v1/namespaces/default/configmaps?fieldValidation=${mode}`, {
        raw: body(name),
        headers: { 'Content-Type': 'application/yaml' },
      });
    const strict = await send('dup-strict', 'Strict');
    expect(strict.status).toBe(400);
    expect(strict.json.message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal errors:\n  line 7: key "data" already set in map\n  line 9: key "b" already set in map',
    );
    expect((await http.get('/api/v1/namespaces/default/configmaps/dup-strict')).status).toBe(404);
    const warn = await send('dup-warn', 'Warn');
    expect(warn.status).toBe(201);
    expect(warn.json.data).toEqual({ b: '3' });
    const ignore = await send('dup-ignore', 'Ignore');
    expect(ignore.status).toBe(201);
    expect(ignore.headers.warning).toBeUndefined();
  });
});
