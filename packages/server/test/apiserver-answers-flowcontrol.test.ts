/**
 * API priority and fairness objects answered as kube-apiserver answers them. Recorded from the
 * anchor (1.24, flowcontrol v1beta2) and sent here as v1; where 1.32 differs it is said: v1 names
 * the shares `nominalConcurrencyShares` and allows zero of them (a negative number is "must be a
 * non-negative integer"), and adds the lendable and borrowing percentages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv } from '../src/index.js';
import { httpClient } from './http.js';
import { failure } from './status-check.js';

let cp: ControlPlane;
let http: ReturnType<typeof httpClient>;

beforeAll(async () => {
  cp = await startTestEnv();
  http = httpClient(cp);
});
afterAll(() => cp?.stop());

const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';
const flowSchema = (spec: object, name = 'f') => ({
  apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
  kind: 'FlowSchema',
  metadata: { name },
  spec: { priorityLevelConfiguration: { name: 'x' }, ...spec },
});
const level = (spec: object, name = 'p') => ({
  apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
  kind: 'PriorityLevelConfiguration',
  metadata: { name },
  spec,
});
const limited = (limitedSpec: object) => level({ type: 'Limited', limited: limitedSpec });
const invalidFlowSchema = async (body: object, message: string) =>
  failure(await http.post(`${FC}/flowschemas?dryRun=All`, body), 422, 'Invalid', message);
const invalidLevel = async (body: object, message: string) =>
  failure(await http.post(`${FC}/prioritylevelconfigurations?dryRun=All`, body), 422, 'Invalid', message);

describe('FlowSchemas', () => {
  it('checks the distinguisher, and that a rule has subjects and rules', async () => {
    await invalidFlowSchema(
      flowSchema({ distinguisherMethod: { type: 'ByFoo' } }),
      'FlowSchema.flowcontrol.apiserver.k8s.io "f" is invalid: spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:"ByFoo"}: supported values: "ByNamespace", "ByUser"',
    );
    await invalidFlowSchema(
      flowSchema({ rules: [{}] }),
      'FlowSchema.flowcontrol.apiserver.k8s.io "f" is invalid: [spec.rules[0].subjects: Required value: subjects must contain at least one value, spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty]',
    );
  });

  it('checks subjects of each kind and resource rules', async () => {
    await invalidFlowSchema(
      flowSchema({
        rules: [
          {
            subjects: [
              { kind: 'User' },
              { kind: 'Group', group: {} },
              { kind: 'ServiceAccount', serviceAccount: { name: '', namespace: '' } },
              { kind: 'Bogus' },
            ],
            resourceRules: [{ verbs: [], apiGroups: [], resources: [] }],
          },
        ],
      }),
      `FlowSchema.flowcontrol.apiserver.k8s.io "f" is invalid: [spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User', spec.rules[0].subjects[1].group.name: Required value, spec.rules[0].subjects[2].serviceAccount.name: Required value, spec.rules[0].subjects[2].serviceAccount.namespace: Required value: must specify namespace for service account, spec.rules[0].subjects[3].kind: Unsupported value: "Bogus": supported values: "Group", "ServiceAccount", "User", spec.rules[0].resourceRules[0].verbs: Required value: verbs must contain at least one value, spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group, spec.rules[0].resourceRules[0].resources: Required value: resource rules must supply at least one resource, spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace]`,
    );
  });

  it("takes '*' only alone", async () => {
    await invalidFlowSchema(
      flowSchema({
        rules: [
          {
            subjects: [{ kind: 'User', user: { name: 'u' } }],
            resourceRules: [
              {
                verbs: ['*', 'get'],
                apiGroups: ['*', 'apps'],
                resources: ['*', 'pods'],
                clusterScope: false,
                namespaces: [],
              },
            ],
            nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/a*', 'b', '*', '/x'] }],
          },
        ],
      }),
      `FlowSchema.flowcontrol.apiserver.k8s.io "f" is invalid: [spec.rules[0].resourceRules[0].verbs: Invalid value: []string{"*", "get"}: if '*' is present, must not specify other verbs, spec.rules[0].resourceRules[0].apiGroups: Invalid value: []string{"*", "apps"}: if '*' is present, must not specify other api groups, spec.rules[0].resourceRules[0].resources: Invalid value: []string{"*", "pods"}: if '*' is present, must not specify other resources, spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace, spec.rules[0].nonResourceRules[0].nonResourceURLs: Invalid value: []string{"/a*", "b", "*", "/x"}: if '*' is present, must not specify other non-resource URLs]`,
    );
  });

  it('keeps the mandatory schemas as they are (validated before the name is found taken)', async () => {
    await invalidFlowSchema(
      flowSchema({ matchingPrecedence: 5 }, 'exempt'),
      `FlowSchema.flowcontrol.apiserver.k8s.io "exempt" is invalid: spec: Invalid value: flowcontrol.FlowSchemaSpec{PriorityLevelConfiguration:flowcontrol.PriorityLevelConfigurationReference{Name:"x"}, MatchingPrecedence:5, DistinguisherMethod:(*flowcontrol.FlowDistinguisherMethod)(nil), Rules:[]flowcontrol.PolicyRulesWithSubjects(nil)}: spec of 'exempt' must equal the fixed value`,
    );
  });
});

describe('PriorityLevelConfigurations', () => {
  it('checks the type against the name and the fields of the type', async () => {
    await invalidLevel(
      level({}),
      'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "p" is invalid: spec.type: Unsupported value: "": supported values: "Exempt", "Limited"',
    );
    await invalidLevel(
      level({ type: 'Exempt', limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' } } }),
      `PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "p" is invalid: [spec.type: Invalid value: "Exempt": type must be 'Exempt' if and only if name is 'exempt', spec.limited: Forbidden: must be nil if the type is not Limited]`,
    );
  });

  it('checks shares, queuing and shuffle sharding', async () => {
    await invalidLevel(
      limited({
        nominalConcurrencyShares: -1,
        limitResponse: { type: 'Queue', queuing: { queues: 0, handSize: 100, queueLengthLimit: 0 } },
      }),
      'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "p" is invalid: [spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer, spec.limited.limitResponse.queuing.handSize: Invalid value: 100: should not be greater than queues (64)]',
    );
    await invalidLevel(
      limited({ nominalConcurrencyShares: 5, limitResponse: { type: 'Reject', queuing: { queues: 1 } } }),
      'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "p" is invalid: spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited',
    );
    await invalidLevel(
      limited({
        nominalConcurrencyShares: 5,
        limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 60, queueLengthLimit: 10 } },
      }),
      'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "p" is invalid: spec.limited.limitResponse.queuing.handSize: Invalid value: 60: required entropy bits of deckSize 128 and handSize 60 should not be greater than 60',
    );
    await invalidLevel(
      limited({
        nominalConcurrencyShares: 1,
        lendablePercent: 101,
        borrowingLimitPercent: -1,
        limitResponse: { type: 'Reject' },
      }),
      'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "p" is invalid: [spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive, spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a non-negative integer]',
    );
    // v1 takes zero shares.
    const zero = await http.post(
      `${FC}/prioritylevelconfigurations?dryRun=All`,
      limited({ nominalConcurrencyShares: 0, limitResponse: { type: 'Reject' } }),
    );
    expect(zero.status).toBe(201);
    expect((zero.json as { spec: { limited: object } }).spec.limited).toEqual({
      nominalConcurrencyShares: 0,
      lendablePercent: 0,
      limitResponse: { type: 'Reject' },
    });
  });
});
