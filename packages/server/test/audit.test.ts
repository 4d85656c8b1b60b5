/**
 * The audit log end to end: kubectl 1.32 against a server started with an audit policy of
 * several rules and a log file, as kube-apiserver's `--audit-policy-file` and
 * `--audit-log-path`. Each request the policy selects is read back from the log as
 * `audit.k8s.io/v1` events, field by field: stages, level, user, objectRef, response status,
 * request and response objects, and the annotations of authorization, admission webhooks,
 * ValidatingAdmissionPolicies and pod security. Every response carries an `Audit-Id`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv } from '../src/testing/index.js';
import { eventually, type KubectlEnv, startKubectlEnv } from './kubectl.js';
import { allow, patch, startWebhookServer, type WebhookServer } from './webhook-server.js';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitManagedFields: true
rules:
# Discovery and OpenAPI: not audited.
- level: None
  nonResourceURLs: ["/api*", "/openapi/*", "/version"]
- level: RequestResponse
  namespaces: [audit-rr]
  resources: [{group: "", resources: [configmaps]}]
  omitManagedFields: false
- level: Request
  namespaces: [audit-req]
  omitStages: [RequestReceived]
- level: Metadata
  namespaces: [audit-meta]
  omitStages: [RequestReceived]
- level: Metadata
  userGroups: [system:unauthenticated]
- level: None
`;

let env: KubectlEnv;
let hooks: WebhookServer;
let dir: string;
let log: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubeloop-audit-'));
  log = join(dir, 'audit.log');
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
  [env, hooks] = await Promise.all([
    startKubectlEnv({ controllers: false, auditPolicyFile: join(dir, 'policy.yaml'), auditLogPath: log }),
    startWebhookServer(),
  ]);
  await env.ok(['create', 'namespace', 'audit-rr']);
  await env.ok(['create', 'namespace', 'audit-req']);
  await env.ok(['create', 'namespace', 'audit-meta']);
});
afterAll(async () => {
  await Promise.all([env?.stop(), hooks?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

type Event = Record<string, any>;
/** The events in the log so far. */
const events = (): Event[] =>
  readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Event);
/** The events of the requests to `uri` with `verb`, once the last one has `stage`. */
const eventsOf = (verb: string, uri: RegExp, stage = 'ResponseComplete') =>
  eventually(() => {
    const found = events().filter((e) => e.verb === verb && uri.test(e.requestURI));
    return found.at(-1)?.stage === stage ? found : undefined;
  });

const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ADMIN = { username: 'kubeloop-admin', groups: ['system:masters', 'system:authenticated'] };
const ALLOWED = { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '' };

describe('the audit log', () => {
  it('records a create at RequestResponse: both stages, the objects, and the authorization decision', async () => {
    await env.ok(['create', 'configmap', 'c1', '-n', 'audit-rr', '--from-literal=a=b']);
    const [received, complete] = await eventsOf('create', /^\/api\/v1\/namespaces\/audit-rr\/configmaps\?/);
    expect(Object.keys(received!)).toEqual([
      'kind',
      'apiVersion',
      'level',
      'auditID',
      'stage',
      'requestURI',
      'verb',
      'user',
      'sourceIPs',
      'userAgent',
      'objectRef',
      'requestReceivedTimestamp',
      'stageTimestamp',
    ]);
    expect(received).toMatchObject({
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: 'RequestResponse',
      auditID: expect.stringMatching(UUID),
      stage: 'RequestReceived',
      requestURI: '/api/v1/namespaces/audit-rr/configmaps?fieldManager=kubectl-create&fieldValidation=Strict',
      verb: 'create',
      user: ADMIN,
      sourceIPs: ['127.0.0.1'],
      userAgent: expect.stringMatching(/^kubectl\/v1\.32\.\d+ /),
      // The name is learnt from the body, read after this stage.
      objectRef: { resource: 'configmaps', namespace: 'audit-rr', apiVersion: 'v1' },
      requestReceivedTimestamp: expect.stringMatching(MICRO_TIME),
      stageTimestamp: expect.stringMatching(MICRO_TIME),
    });
    expect(complete).toMatchObject({
      auditID: received!.auditID,
      stage: 'ResponseComplete',
      objectRef: { resource: 'configmaps', namespace: 'audit-rr', name: 'c1', apiVersion: 'v1' },
      responseStatus: { metadata: {}, code: 201 },
      requestObject: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c1' }, data: { a: 'b' } },
      responseObject: {
        kind: 'ConfigMap',
        metadata: { name: 'c1', namespace: 'audit-rr', uid: expect.stringMatching(UUID) },
        data: { a: 'b' },
      },
      requestReceivedTimestamp: received!.requestReceivedTimestamp,
      annotations: ALLOWED,
    });
    // kube stamps the first stage with the time the request was received.
    expect(received!.stageTimestamp).toBe(received!.requestReceivedTimestamp);
    // This rule keeps managed fields, which the policy omits elsewhere.
    expect(complete!.responseObject.metadata.managedFields).toHaveLength(1);
    expect(complete!.stageTimestamp >= received!.stageTimestamp).toBe(true);
  });

  it('records a create and a get at Request: the request object, no response object, and not the omitted stage', async () => {
    await env.ok(['create', 'configmap', 'c2', '-n', 'audit-req', '--from-literal=k=v']);
    await env.ok(['get', 'configmap', 'c2', '-n', 'audit-req', '-o', 'name']);
    const [get] = await eventsOf('get', /^\/api\/v1\/namespaces\/audit-req\/configmaps\/c2$/);
    expect(get).toMatchObject({
      level: 'Request',
      stage: 'ResponseComplete',
      objectRef: { resource: 'configmaps', namespace: 'audit-req', name: 'c2', apiVersion: 'v1' },
      responseStatus: { metadata: {}, code: 200 },
      annotations: ALLOWED,
    });
    expect(get).not.toHaveProperty('responseObject');
    expect(get).not.toHaveProperty('requestObject');
    const creates = await eventsOf('create', /^\/api\/v1\/namespaces\/audit-req\/configmaps\?/);
    expect(creates.map((e) => e.stage)).toEqual(['ResponseComplete']);
    const create = creates[0];
    expect(create!.requestObject).toMatchObject({ metadata: { name: 'c2' }, data: { k: 'v' } });
    expect(create).not.toHaveProperty('responseObject');
  });

  it('records a watch at ResponseStarted, then at ResponseComplete when it ends', async () => {
    const watch = env.spawn(['get', 'configmaps', '-n', 'audit-meta', '--watch', '--output-watch-events']);
    const [started] = await eventsOf(
      'watch',
      /^\/api\/v1\/namespaces\/audit-meta\/configmaps\?/,
      'ResponseStarted',
    );
    expect(started).toMatchObject({
      level: 'Metadata',
      stage: 'ResponseStarted',
      user: ADMIN,
      objectRef: { resource: 'configmaps', namespace: 'audit-meta', apiVersion: 'v1' },
      responseStatus: { metadata: {}, code: 200 },
      annotations: ALLOWED,
    });
    await watch.stop();
    const [, complete] = await eventsOf('watch', /^\/api\/v1\/namespaces\/audit-meta\/configmaps\?/);
    expect(complete).toMatchObject({
      auditID: started!.auditID,
      stage: 'ResponseComplete',
      responseStatus: { metadata: {}, code: 200 },
    });
  });

  it('records a denied request with its impersonated user, the Forbidden status and the decision', async () => {
    const r = await env.run(['get', 'configmaps', '-n', 'audit-meta', '--as', 'bob', '--as-group', 'dev']);
    expect(r.code).toBe(1);
    // The watch above listed there too, as the admin: the last list is bob's.
    const denied = (await eventsOf('list', /^\/api\/v1\/namespaces\/audit-meta\/configmaps\?limit=500$/)).at(
      -1,
    );
    expect(denied).toMatchObject({
      level: 'Metadata',
      user: ADMIN,
      impersonatedUser: { username: 'bob', groups: ['dev', 'system:authenticated'] },
      objectRef: { resource: 'configmaps', namespace: 'audit-meta', apiVersion: 'v1' },
      responseStatus: {
        metadata: {},
        status: 'Failure',
        message:
          'configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "audit-meta"',
        reason: 'Forbidden',
        details: { kind: 'configmaps' },
        code: 403,
      },
      annotations: { 'authorization.k8s.io/decision': 'forbid', 'authorization.k8s.io/reason': '' },
    });
  });

  it('records a failed authentication as kube does: one event, at ResponseStarted, without a user', async () => {
    const { status, auditId } = await call('GET', '/api/v1/namespaces/audit-meta/configmaps', {
      authorization: 'Bearer not-a-token',
    });
    expect(status).toBe(401);
    const found = await eventually(() => events().filter((e) => e.auditID === auditId));
    expect(found).toEqual([
      {
        kind: 'Event',
        apiVersion: 'audit.k8s.io/v1',
        level: 'Metadata',
        auditID: auditId,
        stage: 'ResponseStarted',
        requestURI: '/api/v1/namespaces/audit-meta/configmaps',
        verb: 'list',
        user: {},
        sourceIPs: ['127.0.0.1'],
        objectRef: { resource: 'configmaps', namespace: 'audit-meta', apiVersion: 'v1' },
        // kube's failed-authentication filter notes the methods tried, then the Unauthorized
        // Status written (`LogResponseObject`) replaces them before the response starts.
        responseStatus: {
          metadata: {},
          status: 'Failure',
          message: 'Unauthorized',
          reason: 'Unauthorized',
          code: 401,
        },
        requestReceivedTimestamp: expect.stringMatching(MICRO_TIME),
        stageTimestamp: expect.stringMatching(MICRO_TIME),
      },
    ]);
  });

  it("keeps a mutating webhook's annotations, its patch at Request level, and the webhook's own auditAnnotations", async () => {
    hooks.handle(
      '/audit-mutate',
      patch([{ op: 'add', path: '/data/injected', value: 'yes' }], {
        auditAnnotations: { checked: 'by-hook' },
      }),
    );
    hooks.handle('/audit-validate', allow({ auditAnnotations: { verdict: 'fine' } }));
    const webhook = (name: string, path: string, ns: string) => ({
      name,
      clientConfig: { url: hooks.url(path), caBundle: hooks.caBundle },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      namespaceSelector: {
        matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [ns] }],
      },
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    });
    const configuration = (kind: string, name: string, hook: object) =>
      JSON.stringify({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind,
        metadata: { name },
        webhooks: [hook],
      });
    await env.ok(['create', '-f', '-'], {
      input: [
        configuration('MutatingWebhookConfiguration', 'audit-mutator', {
          ...webhook('mutate.audit.test', '/audit-mutate', 'audit-req'),
          reinvocationPolicy: 'Never',
        }),
        configuration(
          'ValidatingWebhookConfiguration',
          'audit-validator',
          webhook('validate.audit.test', '/audit-validate', 'audit-meta'),
        ),
        configuration(
          'MutatingWebhookConfiguration',
          'audit-mutator-meta',
          webhook('mutate.audit.test', '/audit-mutate', 'audit-meta'),
        ),
      ].join('\n'),
    });
    await env.ok(['create', 'configmap', 'hooked', '-n', 'audit-req', '--from-literal=a=b']);
    const [atRequest] = await eventsOf('create', /^\/api\/v1\/namespaces\/audit-req\/configmaps\?/).then(
      (all) => all.filter((e) => e.objectRef.name === 'hooked'),
    );
    expect(atRequest!.annotations).toEqual({
      ...ALLOWED,
      'mutate.audit.test/checked': 'by-hook',
      'mutation.webhook.admission.k8s.io/round_0_index_0':
        '{"configuration":"audit-mutator","webhook":"mutate.audit.test","mutated":true}',
      'patch.webhook.admission.k8s.io/round_0_index_0':
        '{"configuration":"audit-mutator","webhook":"mutate.audit.test","patch":[{"op":"add","path":"/data/injected","value":"yes"}],"patchType":"JSONPatch"}',
    });

    // At Metadata, the patch is left out (kube adds it at Request level); validating webhooks' annotations are kept.
    await env.ok(['create', 'configmap', 'hooked', '-n', 'audit-meta', '--from-literal=a=b']);
    const atMetadata = (await eventsOf('create', /^\/api\/v1\/namespaces\/audit-meta\/configmaps\?/)).at(-1)!;
    expect(atMetadata.level).toBe('Metadata');
    expect(atMetadata.annotations).toEqual({
      ...ALLOWED,
      'mutate.audit.test/checked': 'by-hook',
      // The index counts every mutating webhook, the other configuration's included.
      'mutation.webhook.admission.k8s.io/round_0_index_1':
        '{"configuration":"audit-mutator-meta","webhook":"mutate.audit.test","mutated":true}',
      'validate.audit.test/verdict': 'fine',
    });
    expect(atMetadata).not.toHaveProperty('requestObject');
  });

  it("keeps a ValidatingAdmissionPolicy's auditAnnotations and its Audit action's failure, and admits", async () => {
    const policy = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'audit-small' },
      spec: {
        matchConstraints: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'audit-req' } },
          resourceRules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['secrets'] },
          ],
        },
        validations: [{ expression: 'size(object.data) <= 1', message: 'at most one key' }],
        auditAnnotations: [{ key: 'keys', valueExpression: "'keys: ' + string(size(object.data))" }],
      },
    };
    const binding = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'audit-small-binding' },
      spec: { policyName: 'audit-small', validationActions: ['Audit'] },
    };
    await env.ok(['create', '-f', '-'], { input: `${JSON.stringify(policy)}\n${JSON.stringify(binding)}` });
    const r = await env.run([
      'create',
      'secret',
      'generic',
      's1',
      '-n',
      'audit-req',
      '--from-literal=a=1',
      '--from-literal=b=2',
    ]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const [event] = await eventsOf('create', /^\/api\/v1\/namespaces\/audit-req\/secrets\?/);
    expect(event!.responseStatus).toEqual({ metadata: {}, code: 201 });
    expect(event!.annotations['audit-small/keys']).toBe('keys: 2');
    expect(JSON.parse(event!.annotations['validation.policy.admission.k8s.io/validation_failure'])).toEqual([
      {
        message: 'at most one key',
        policy: 'audit-small',
        binding: 'audit-small-binding',
        expressionIndex: 0,
        validationActions: ['Audit'],
      },
    ]);
  });

  it("keeps pod security's annotations: the enforced level, and the audit level's violations", async () => {
    await env.ok(['label', 'namespace', 'audit-meta', 'pod-security.kubernetes.io/audit=restricted']);
    await env.ok(['run', 'web', '-n', 'audit-meta', '--image=nginx']);
    const [event] = await eventsOf('create', /^\/api\/v1\/namespaces\/audit-meta\/pods\?/);
    expect(event!.annotations['pod-security.kubernetes.io/enforce-policy']).toBe('privileged:latest');
    expect(event!.annotations['pod-security.kubernetes.io/audit-violations']).toMatch(
      /^would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false/,
    );
  });

  it('answers every request with an Audit-Id: the client’s Audit-ID if given, also as the event’s auditID', async () => {
    const mine = await call('GET', '/api/v1/namespaces/audit-meta/configmaps/none', {
      authorization: `Bearer ${env.cp.clientConfig.token}`,
      'audit-id': 'my-request-1',
    });
    expect(mine).toMatchObject({ status: 404, auditId: 'my-request-1' });
    const [event] = await eventsOf('get', /^\/api\/v1\/namespaces\/audit-meta\/configmaps\/none$/);
    expect(event).toMatchObject({
      auditID: 'my-request-1',
      responseStatus: { status: 'Failure', reason: 'NotFound', code: 404 },
    });
    // Requests the policy does not audit, and public ones, have an ID too.
    const version = await call('GET', '/version', {});
    expect(version.auditId).toMatch(UUID);
    expect(events().some((e) => e.auditID === version.auditId)).toBe(false);
  });
});

describe('without an audit policy', () => {
  it('answers with an Audit-Id all the same', async () => {
    const plain = await startTestEnv({ controllers: false });
    try {
      const [a, b] = await Promise.all([
        call('GET', '/api/v1/namespaces', { authorization: `Bearer ${plain.clientConfig.token}` }, plain),
        call('GET', '/healthz', { 'audit-id': 'given' }, plain),
      ]);
      expect(a).toMatchObject({ status: 200, auditId: expect.stringMatching(UUID) });
      expect(b).toMatchObject({ status: 200, auditId: 'given' });
    } finally {
      await plain.stop();
    }
  });
});

/** One HTTPS request to the server; its status and `Audit-Id` header. */
function call(
  method: string,
  path: string,
  headers: Record<string, string>,
  cp: { url: string; clientConfig: { caData: string } } = env.cp,
): Promise<{ status: number; auditId: string | undefined }> {
  return new Promise((resolve, reject) => {
    request(
      `${cp.url}${path}`,
      { method, headers, agent: new Agent({ ca: cp.clientConfig.caData }) },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, auditId: res.headers['audit-id'] as string | undefined }),
        );
      },
    )
      .on('error', reject)
      .end();
  });
}
