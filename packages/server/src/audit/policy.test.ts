/**
 * The audit policy as kube-apiserver reads and evaluates it: validation messages word for word
 * (pkg/apis/audit/validation), the reader's refusals (pkg/audit/policy/reader.go), and the
 * first-match evaluation of rules (checker.go).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AuditAttributes, loadPolicyFile, PolicyEvaluator, parsePolicy } from './policy.js';

const head = 'apiVersion: audit.k8s.io/v1\nkind: Policy\n';

describe('parsePolicy', () => {
  it('reads rules, levels and stages', () => {
    const p = parsePolicy(
      `${head}omitStages: [RequestReceived]\nomitManagedFields: true\nrules:\n- level: Metadata\n  users: [alice]\n  resources: [{group: apps, resources: [deployments/scale], resourceNames: [web]}]\n  omitManagedFields: false\n`,
    );
    expect(p).toEqual({
      omitStages: ['RequestReceived'],
      omitManagedFields: true,
      rules: [
        {
          level: 'Metadata',
          users: ['alice'],
          resources: [{ group: 'apps', resources: ['deployments/scale'], resourceNames: ['web'] }],
          omitManagedFields: false,
        },
      ],
    });
  });

  it.each([
    [
      'rules:\n- level: Everything\n',
      'rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"',
    ],
    ['rules:\n- users: [a]\n', 'rules[0].level: Required value'],
    [
      'rules:\n- level: None\n  nonResourceURLs: [healthz]\n',
      `rules[0].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must begin with a '/' character`,
    ],
    [
      'rules:\n- level: None\n  nonResourceURLs: ["/a*b"]\n',
      `rules[0].nonResourceURLs[0]: Invalid value: "/a*b": non-resource URL wildcards '*' must be the final character of the rule`,
    ],
    [
      'rules:\n- level: None\n  nonResourceURLs: ["/healthz"]\n  namespaces: [default]\n',
      'rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: rules cannot apply to both regular resources and non-resource URLs',
    ],
    [
      'rules:\n- level: None\n  resources: [{group: "rbac.authorization.k8s.io/v1"}]\n',
      `rules[0].resources.group: Invalid value: "rbac.authorization.k8s.io/v1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ],
    [
      'rules:\n- level: None\n  resources: [{resourceNames: [x]}]\n',
      'rules[0].resources.resourceNames: Invalid value: []string{"x"}: using resourceNames requires at least one resource',
    ],
    [
      'rules:\n- level: None\n  omitStages: [Done]\n',
      'rules[0].omitStages[0]: Invalid value: "Done": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic',
    ],
    [
      'omitStages: [Later]\nrules:\n- level: Bogus\n',
      '[omitStages[0]: Invalid value: "Later": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic, rules[0].level: Unsupported value: "Bogus": supported values: "None", "Metadata", "Request", "RequestResponse"]',
    ],
    ['rules: []\n', 'loaded illegal policy with 0 rules'],
  ])('refuses %j with kube’s message', (body, message) => {
    expect(() => parsePolicy(`${head}${body}`)).toThrow(new Error(message));
  });

  it('refuses a document without apiVersion, or of another version', () => {
    expect(() => parsePolicy('kind: Policy\nrules:\n- level: None\n')).toThrow(
      'unknown group version field audit.k8s.io/__internal, Kind=Policy in policy',
    );
    expect(() =>
      parsePolicy('apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: None\n'),
    ).toThrow('failed decoding: no kind "Policy" is registered for version "audit.k8s.io/v1beta1"');
    expect(() => parsePolicy(`${head}rules: yes\n`)).toThrow('failed decoding: json: cannot unmarshal');
  });

  it('names the file in the error of a file that does not load', () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-policy-'));
    try {
      const path = join(dir, 'policy.yaml');
      writeFileSync(path, `${head}rules: []\n`);
      expect(() => loadPolicyFile(path)).toThrow(
        new Error(`loading audit policy file: loaded illegal policy with 0 rules: from file ${path}`),
      );
      expect(() => loadPolicyFile(join(dir, 'missing.yaml'))).toThrow(
        `loading audit policy file: failed to read file path ${JSON.stringify(join(dir, 'missing.yaml'))}`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const attrs = (a: Partial<AuditAttributes>): AuditAttributes => ({
  user: { username: 'alice', groups: ['dev', 'system:authenticated'] },
  verb: 'get',
  isResourceRequest: true,
  namespace: 'default',
  apiGroup: '',
  resource: 'pods',
  subresource: '',
  name: 'p',
  path: '/api/v1/namespaces/default/pods/p',
  ...a,
});

describe('PolicyEvaluator', () => {
  const levelOf = (rules: string, a: Partial<AuditAttributes>) =>
    new PolicyEvaluator(parsePolicy(`${head}rules:\n${rules}`)).evaluate(attrs(a)).level;

  it('matches resource forms: resource/subresource, */subresource, resource/*, *, and resourceNames', () => {
    const rules = [
      '- level: RequestResponse\n  resources: [{resources: [pods/log]}]',
      '- level: Request\n  resources: [{resources: ["*/status"]}]',
      '- level: Metadata\n  resources: [{group: apps, resources: ["deployments/*"]}]',
      '- level: Request\n  resources: [{resources: [configmaps], resourceNames: [special]}]',
      '- level: None\n  resources: [{resources: [configmaps]}]',
      '- level: Metadata\n  resources: [{group: batch}]',
    ].join('\n');
    expect(levelOf(rules, { subresource: 'log' })).toBe('RequestResponse');
    expect(levelOf(rules, { subresource: 'status' })).toBe('Request');
    expect(levelOf(rules, { resource: 'nodes', subresource: 'status', namespace: '' })).toBe('Request');
    // `pods/log` does not name the pod itself.
    expect(levelOf(rules, {})).toBe('None');
    // `deployments/*` names the deployment and each of its subresources.
    expect(levelOf(rules, { apiGroup: 'apps', resource: 'deployments' })).toBe('Metadata');
    expect(levelOf(rules, { apiGroup: 'apps', resource: 'deployments', subresource: 'scale' })).toBe(
      'Metadata',
    );
    expect(levelOf(rules, { resource: 'configmaps', name: 'special' })).toBe('Request');
    expect(levelOf(rules, { resource: 'configmaps', name: 'other' })).toBe('None');
    // A group without resources names all of them, subresources too; `*/status` names the core group's only.
    expect(levelOf(rules, { apiGroup: 'batch', resource: 'jobs', subresource: 'status' })).toBe('Metadata');
    expect(levelOf(rules, { apiGroup: 'batch', resource: 'jobs' })).toBe('Metadata');
    expect(levelOf(rules, { apiGroup: 'policy', resource: 'poddisruptionbudgets' })).toBe('None');
  });

  it('matches users, groups, verbs, namespaces and non-resource URLs; the first matching rule wins', () => {
    const rules = [
      '- level: None\n  users: [system:kube-proxy]',
      '- level: RequestResponse\n  userGroups: [admins]\n  verbs: [delete]',
      '- level: Request\n  namespaces: [kube-system]',
      '- level: None\n  nonResourceURLs: ["/healthz*", /version]',
      '- level: Metadata',
    ].join('\n');
    expect(
      levelOf(rules, { user: { username: 'system:kube-proxy', groups: ['admins'] }, verb: 'delete' }),
    ).toBe('None');
    expect(levelOf(rules, { user: { username: 'bob', groups: ['admins'] }, verb: 'delete' })).toBe(
      'RequestResponse',
    );
    expect(levelOf(rules, { user: { username: 'bob', groups: ['admins'] }, verb: 'get' })).toBe('Metadata');
    expect(levelOf(rules, { namespace: 'kube-system' })).toBe('Request');
    // A namespaced rule is for resource requests only.
    const healthz = { isResourceRequest: false, path: '/healthz/ready', resource: '', namespace: '' };
    expect(levelOf(rules, healthz)).toBe('None');
    expect(levelOf(rules, { ...healthz, path: '/version' })).toBe('None');
    expect(levelOf(rules, { ...healthz, path: '/versions' })).toBe('Metadata');
    // A request that failed authentication has no user: rules on users do not match it.
    expect(levelOf(rules, { user: undefined, verb: 'delete' })).toBe('Metadata');
  });

  it("joins the policy's omitStages to each rule's, and takes a rule's omitManagedFields over the policy's", () => {
    const e = new PolicyEvaluator(
      parsePolicy(
        `${head}omitStages: [RequestReceived]\nomitManagedFields: true\nrules:\n- level: Request\n  verbs: [create]\n  omitStages: [ResponseStarted]\n  omitManagedFields: false\n- level: Metadata\n  verbs: [get]\n`,
      ),
    );
    expect(e.evaluate(attrs({ verb: 'create' }))).toEqual({
      level: 'Request',
      omitStages: ['RequestReceived', 'ResponseStarted'],
      omitManagedFields: false,
    });
    expect(e.evaluate(attrs({ verb: 'get' }))).toEqual({
      level: 'Metadata',
      omitStages: ['RequestReceived'],
      omitManagedFields: true,
    });
    expect(e.evaluate(attrs({ verb: 'list' })).level).toBe('None');
  });
});
