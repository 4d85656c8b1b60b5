/**
 * kubectl's typed clients ask for protobuf first (`application/vnd.kubernetes.protobuf,
 * application/json`): they get protobuf answers for the built-in kinds and decode them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl.js';

let env: KubectlEnv;

beforeAll(async () => {
  env = await startKubectlEnv({ nodes: { count: 1 } });
});
afterAll(async () => {
  await env?.stop();
});

/** The Content-Types of the answers kubectl logged at -v=8. */
const answerTypes = (stderr: string) => [...stderr.matchAll(/Content-Type: ([^\s]+)/g)].map((m) => m[1]);

describe('kubectl with protobuf answers', () => {
  it('create deployment, scale, rollout status and drain work on protobuf answers', async () => {
    const created = await env.run(['create', 'deployment', 'pbd', '--image=nginx:1.27', '-v=8']);
    expect(created.code, created.stderr).toBe(0);
    expect(answerTypes(created.stderr)).toContain('application/vnd.kubernetes.protobuf');
    const scaled = await env.run(['scale', 'deployment', 'pbd', '--replicas=2', '-v=8']);
    expect(scaled.code, scaled.stderr).toBe(0);
    await env.ok(['rollout', 'status', 'deployment/pbd', '--timeout=30s']);
    const nodes = JSON.parse(await env.ok(['get', 'nodes', '-o', 'json'])).items;
    expect(nodes.length).toBeGreaterThan(0);
    const drained = await env.run([
      'drain',
      nodes[0].metadata.name,
      '--ignore-daemonsets',
      '--delete-emptydir-data',
      '--force',
      '--timeout=30s',
      '-v=8',
    ]);
    expect(drained.code, drained.stderr.slice(-3000)).toBe(0);
    expect(answerTypes(drained.stderr)).toContain('application/vnd.kubernetes.protobuf');
    expect((await env.run(['uncordon', nodes[0].metadata.name])).code).toBe(0);
  });
});
