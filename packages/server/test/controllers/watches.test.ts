/**
 * The built-in controllers share one informer per collection, as kube-controller-manager's
 * controllers share one informer factory: each collection is watched once, however many
 * controllers read it (the garbage collector reads the other controllers' informers of the kinds
 * they watch, instead of a metadata watch of its own), and Events are not watched at all, as
 * kube's garbage collector ignores them. The watches are read from the audit log.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../../src/testing/index.js';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [ResponseStarted, ResponseComplete]
rules:
- level: Metadata
  verbs: [watch]
- level: None
`;

let env: TestEnv;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubeloop-watches-'));
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
  env = await startTestEnv({
    nodes: { count: 1 },
    auditPolicyFile: join(dir, 'policy.yaml'),
    auditLogPath: join(dir, 'audit.log'),
  });
});
afterAll(async () => {
  await env?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('watches of the built-in controllers', () => {
  it('watch each collection once, and not Events', () => {
    // The controllers have synced: every informer has opened its watch.
    const watches = readFileSync(join(dir, 'audit.log'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { requestURI: string; user: { username: string } })
      .filter((e) =>
        /^system:(kube-controller-manager|kube-scheduler|node:|serviceaccount:kube-system:)/.test(
          e.user.username,
        ),
      )
      .map((e) => {
        const url = new URL(e.requestURI, 'https://server');
        const selectors = ['labelSelector', 'fieldSelector'].map((k) => url.searchParams.get(k) ?? '');
        return [url.pathname, ...selectors].join(' ');
      });
    expect(watches.length).toBeGreaterThan(20);
    const twice = watches.filter((w, i) => watches.indexOf(w) !== i);
    expect(twice).toEqual([]);
    expect(watches.filter((w) => /\/events /.test(w))).toEqual([]);
  });
});
