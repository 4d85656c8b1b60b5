/**
 * The official Python client (`kubernetes` 22.x, Debian's python3-kubernetes, installed by
 * `.ci/run`) against the local server. The scenarios are Python scripts beside this file
 * (`python/*.py`); each runs in its own process with the test env's kubeconfig and fails with a
 * traceback when the client sees anything kube-apiserver would not give it.
 *
 * A scenario that needs the server acted on (its watches dropped) prints `@@sync <json>` and
 * waits for the answer on stdin; see `python/common.py`.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlane, startTestEnv, type TestEnvOptions } from '../../src/index.js';
import { kubeconfigFile } from '../../src/testing/index.js';

/** Debian's interpreter: `python3` on a PATH may be another one, without the client. */
const PYTHON = '/usr/bin/python3';
const SCRIPTS = fileURLToPath(new URL('./python/', import.meta.url));
/** Longer than any scenario takes; a hung watch is killed and reported with its output. */
const SCENARIO_TIMEOUT_MS = 30_000;

interface PythonEnv {
  cp: ControlPlane;
  run(script: string, scenario: string): Promise<void>;
  stop(): Promise<void>;
}

async function startPythonEnv(options: TestEnvOptions = {}): Promise<PythonEnv> {
  const cp = await startTestEnv(options);
  const { dir, path: kubeconfigPath, remove } = kubeconfigFile(cp, 'kubeloop-python-');
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: dir, PYTHONDONTWRITEBYTECODE: '1' };
  // Another interpreter's settings must not leak into Debian's.
  delete env.PYTHONPATH;
  delete env.PYTHONHOME;

  /** What a scenario asks of the server (see `sync` in common.py). */
  const act = (request: { action: string }): unknown => {
    switch (request.action) {
      case 'dropWatches':
        return { dropped: cp.faults.dropWatches() };
      default:
        throw new Error(`unknown sync action ${request.action}`);
    }
  };

  const run = (script: string, scenario: string) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(PYTHON, [join(SCRIPTS, script), kubeconfigPath, scenario], {
        env,
        cwd: SCRIPTS,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let pending = '';
      let timedOut = false;
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        pending += d.toString();
        let nl = pending.indexOf('\n');
        while (nl >= 0) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          if (line.startsWith('@@sync ')) {
            let answer: unknown;
            try {
              answer = act(JSON.parse(line.slice(7)));
            } catch (err) {
              answer = { error: String(err) };
            }
            child.stdin.write(`${JSON.stringify(answer)}\n`);
          }
          nl = pending.indexOf('\n');
        }
      });
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, SCENARIO_TIMEOUT_MS);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else
          reject(
            new Error(
              `${script} ${scenario} ${timedOut ? `did not finish within ${SCENARIO_TIMEOUT_MS} ms` : `exited ${code}`}:\n${stderr}\n${stdout}`,
            ),
          );
      });
    });

  return {
    cp,
    run,
    async stop() {
      await cp.stop();
      remove();
    },
  };
}

describe('the official Python client', () => {
  let env: PythonEnv;

  beforeAll(async () => {
    env = await startPythonEnv();
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('is the Debian package the CI installs', async () => {
    // Fails loudly (rather than skipping) where .ci/run did not install it.
    const version = await new Promise<string>((resolve, reject) => {
      const child = spawn(PYTHON, ['-c', 'import kubernetes; print(kubernetes.__version__)']);
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 ? resolve(out.trim()) : reject(new Error(`${PYTHON} cannot import kubernetes`)),
      );
    });
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
  });

  describe('core/v1 (CoreV1Api)', () => {
    it('creates, reads, replaces, patches (strategic, JSON, merge) and deletes a ConfigMap', () =>
      env.run('core.py', 'configmap_crud'));
    it('lists with label and field selectors, and pages with limit/continue', () =>
      env.run('core.py', 'selectors_and_pagination'));
    it('writes Secrets, Services, Pods and Namespaces with their server-side defaults', () =>
      env.run('core.py', 'other_core_kinds'));
    it('deletes with each propagationPolicy, carried out by the garbage collector', () =>
      env.run('core.py', 'propagation'));
    it('applies server-side, with conflicts and force', () => env.run('core.py', 'server_side_apply'));
    it('evicts a pod through pods/eviction', () => env.run('core.py', 'eviction'));
  });

  describe('apps/v1 (AppsV1Api)', () => {
    it('creates, replaces, patches and deletes a Deployment', () => env.run('apps.py', 'deployment_crud'));
    it('replaces and patches the status, and reads and writes the scale', () =>
      env.run('apps.py', 'deployment_status_and_scale'));
    it('deletes a Deployment with Foreground and Orphan propagation', () =>
      env.run('apps.py', 'propagation'));
  });

  describe('failures as ApiException', () => {
    it('NotFound, AlreadyExists and a failed precondition', () =>
      env.run('errors.py', 'not_found_and_exists'));
    it('Invalid names and labels, with their causes', () => env.run('errors.py', 'invalid_names'));
    it('unknown fields under fieldValidation Strict, Warn and Ignore', () =>
      env.run('errors.py', 'field_validation'));
    it('MethodNotAllowed, NotAcceptable, UnsupportedMediaType and Unauthorized', () =>
      env.run('errors.py', 'http_errors'));
    it('Forbidden in a terminating namespace', () =>
      env.run('errors.py', 'forbidden_in_terminating_namespace'));
    it('refuses and accepts what kube-apiserver does: finalizers, options, field labels, continue tokens', () =>
      env.run('errors.py', 'as_kube_apiserver_answers'));
    it('refuses what kube-apiserver refuses: workload templates, autoscalers, docker config Secrets', () =>
      env.run('errors.py', 'workload_answers'));
  });

  describe('custom resources (ApiextensionsV1Api, CustomObjectsApi)', () => {
    it('creates a CRD, then CRUD, selectors, pages, patches and validation of its objects', () =>
      env.run('custom.py', 'crd_and_custom_objects'));
    it('writes the status and scale subresources', () => env.run('custom.py', 'custom_status_and_scale'));
  });

  describe('watch.Watch().stream', () => {
    it('streams the events since a list, and resumes from a resourceVersion', () =>
      env.run('watches.py', 'events_from_a_list'));
    it('resumes by itself after the server drops the stream, losing and repeating nothing', () =>
      env.run('watches.py', 'resume_after_drop'));
    it('passes bookmarks through', () => env.run('watches.py', 'bookmarks'));
    it('streams custom objects', () => env.run('watches.py', 'custom_objects'));
  });

  it('stops serving custom objects once their CRD is deleted', () => env.run('custom.py', 'crd_deletion'));
});

describe('the official Python client against a short watch history', () => {
  let env: PythonEnv;

  beforeAll(async () => {
    // Ten events of history: a few dozen writes put the first list's resourceVersion out of reach.
    env = await startPythonEnv({ watchHistorySize: 10 });
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('raises a 410 Expired ApiException for a watch from a compacted resourceVersion', () =>
    env.run('watches.py', 'expired'));
});
