/**
 * Answers in `application/vnd.kubernetes.protobuf` for the built-in kinds, as kube-apiserver
 * gives them to client-go's protobuf clients; custom resources answer JSON when the client
 * accepts it, and 406 otherwise.
 */
import { Agent, request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../../src/index.js';
import { decodeProtobufObject } from '../../src/protobuf/index.js';
import { httpClient } from '../http.js';
import { eventually } from '../kubectl.js';
import { statusProblems } from '../status-check.js';

const PB = 'application/vnd.kubernetes.protobuf';
let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  cp = await startTestEnv({ controllers: false });
  http = httpClient(cp);
});
afterAll(async () => {
  http?.close();
  await cp?.stop();
});

/** A request whose answer is kept as bytes. */
function fetchBytes(
  method: string,
  path: string,
  accept: string,
  body?: { type: string; data: string | Buffer },
): Promise<{ status: number; type: string; body: Buffer }> {
  const url = new URL(cp.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method,
        agent: new Agent({ ca: cp.clientConfig.caData }),
        headers: {
          Accept: accept,
          Authorization: `Bearer ${cp.clientConfig.token}`,
          ...(body && { 'Content-Type': body.type, 'Content-Length': String(Buffer.byteLength(body.data)) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            type: String(res.headers['content-type']),
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body?.data);
  });
}

const CM = '/api/v1/namespaces/default/configmaps';
const withoutTypeMeta = ({ apiVersion: _a, kind: _k, ...rest }: Record<string, unknown>) => rest;

describe('protobuf answers', () => {
  it('a list of ConfigMaps decodes to the JSON list', async () => {
    for (const name of ['pb-a', 'pb-b'])
      await http.post(CM, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, labels: { pb: 'yes' } },
        data: { k: name },
      });
    const r = await fetchBytes('GET', `${CM}?labelSelector=pb%3Dyes`, PB);
    expect(r.status).toBe(200);
    expect(r.type).toBe(PB);
    expect(r.body.subarray(0, 4).toString('latin1')).toBe('k8s\0');
    const list = decodeProtobufObject(r.body);
    const json = (await http.get(`${CM}?labelSelector=pb%3Dyes`)).json;
    expect(list.kind).toBe('ConfigMapList');
    expect(list.apiVersion).toBe('v1');
    expect(list.metadata).toEqual(json.metadata);
    expect(list.items).toEqual(json.items.map(withoutTypeMeta));
  });

  it('a Deployment, and a list of Deployments with a continue token', async () => {
    const d = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'pb-deploy', labels: { app: 'pb' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'pb' } },
        template: {
          metadata: { labels: { app: 'pb' } },
          spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] },
        },
      },
    };
    expect((await http.post('/apis/apps/v1/namespaces/default/deployments', d)).status).toBe(201);
    await http.post('/apis/apps/v1/namespaces/default/deployments', {
      ...d,
      metadata: { ...d.metadata, name: 'pb-deploy-2' },
    });
    const one = await fetchBytes(
      'GET',
      '/apis/apps/v1/namespaces/default/deployments/pb-deploy',
      `${PB}, application/json`,
    );
    expect(one.type).toBe(PB);
    const json = (await http.get('/apis/apps/v1/namespaces/default/deployments/pb-deploy')).json;
    expect(decodeProtobufObject(one.body)).toEqual(json);

    const page = await fetchBytes('GET', '/apis/apps/v1/namespaces/default/deployments?limit=1', PB);
    const list = decodeProtobufObject(page.body) as any;
    expect(list.kind).toBe('DeploymentList');
    expect(list.items).toHaveLength(1);
    expect(list.metadata.continue).toEqual(expect.any(String));
    expect(list.metadata.remainingItemCount).toBe(1);
  });

  it('a write asked in protobuf is answered in protobuf', async () => {
    const r = await fetchBytes('POST', CM, PB, {
      type: 'application/json',
      data: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pb-created' } }),
    });
    expect(r.status).toBe(201);
    expect(r.type).toBe(PB);
    expect((decodeProtobufObject(r.body) as any).metadata.name).toBe('pb-created');
    const del = await fetchBytes('DELETE', `${CM}/pb-created`, PB);
    expect(del.status).toBe(200);
    // ConfigMaps answer a deletion with the Status of its success.
    expect(decodeProtobufObject(del.body)).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Success',
    });
  });

  it('a failure asked in protobuf is a protobuf Status', async () => {
    const r = await fetchBytes('GET', `${CM}/absent`, PB);
    expect(r.status).toBe(404);
    expect(r.type).toBe(PB);
    const status = decodeProtobufObject(r.body);
    expect(statusProblems(404, status)).toEqual([]);
    expect(status).toMatchObject({ reason: 'NotFound', details: { name: 'absent', kind: 'configmaps' } });
  });

  it('an Accept nothing satisfies: a 406 Status written raw (indented)', async () => {
    const r = await fetchBytes('GET', CM, 'text/html');
    expect(r.status).toBe(406);
    expect(r.body.toString('utf8')).toMatch(/^\{\n {2}"kind": "Status",[\s\S]*\}$/);
  });

  it('JSON first in Accept is answered in JSON', async () => {
    const r = await fetchBytes('GET', CM, `application/json, ${PB}`);
    expect(r.type).toBe('application/json');
  });

  it('custom resources: JSON when the client accepts it, else 406', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.pb.example.com' },
      spec: {
        group: 'pb.example.com',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
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
    expect((await http.post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).toBe(
      201,
    );
    const path = '/apis/pb.example.com/v1/namespaces/default/gadgets';
    await eventually(async () => (await http.get(path)).status === 200, 10_000, 'the CRD to be served');
    const json = await fetchBytes('GET', path, `${PB}, application/json`);
    expect(json.status).toBe(200);
    expect(json.type).toBe('application/json');
    const refused = await fetchBytes('GET', path, PB);
    expect(refused.status).toBe(406);
    // Nothing in Accept fits the error either: WriteRawJSON writes it, indented.
    expect(refused.type).toBe('application/json');
    expect(refused.body.toString('utf8')).toMatch(/^\{\n {2}"kind": "Status",/);
    const status = JSON.parse(refused.body.toString('utf8'));
    expect(statusProblems(406, status)).toEqual([]);
    expect(status.message).toBe(
      'only the following media types are accepted: application/json, application/yaml',
    );
  });
});
