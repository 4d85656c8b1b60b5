/**
 * The least a Node process can be that does sample-controller's job: node:https with a kept-alive
 * agent, `JSON.parse`d objects in two Maps, a deduplicating queue and 2 workers. No SDK, no
 * logging or metrics layer, no probes, no schema code; V8's young generation at its smallest
 * (`--max-semi-space-size=1`, as operators.js starts it). It is the floor of the operators bench
 * (`--operators=node-floor`): what any Node operator costs on this machine for the same work,
 * beside which kubeloop's figures and client-go's can be read.
 *
 * Per Foo, as sample-controller: the Deployment it names created (owned by the Foo) unless cached,
 * its replicas set if they differ, then `status.availableReplicas` written (merge patch of the
 * status subresource), a "Synced" Event posted, and `updated status <ns>/<name>` printed.
 * Reconciled again when its Deployment changes. Usage: `KUBECONFIG=… node floor-operator.js`.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';

interface Obj {
  apiVersion?: string;
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    ownerReferences?: { kind: string; name: string; controller?: boolean }[];
  };
  spec?: { deploymentName?: string; replicas?: number };
  status?: { availableReplicas?: number };
}

const kubeconfig = readFileSync(process.env.KUBECONFIG ?? '', 'utf8');
const field = (name: string): string => {
  const value = new RegExp(`${name}:\\s*(\\S+)`).exec(kubeconfig)?.[1];
  if (!value) throw new Error(`no ${name} in $KUBECONFIG (a server, an embedded CA and a token are needed)`);
  return value;
};
const server = new URL(field('server'));
const agent = new https.Agent({
  keepAlive: true,
  maxSockets: 8,
  ca: Buffer.from(field('certificate-authority-data'), 'base64'),
});
const headers = { authorization: `Bearer ${field('token')}`, accept: 'application/json' };
const at = (method: string, path: string, contentType?: string): https.RequestOptions => ({
  host: server.hostname,
  port: server.port,
  method,
  path,
  agent,
  headers: contentType ? { ...headers, 'content-type': contentType } : headers,
});

class HttpError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

function call<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
  return new Promise((ok, fail) => {
    const req = https.request(at(method, path, body === undefined ? undefined : contentType), (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        const code = res.statusCode ?? 0;
        if (code >= 300) fail(new HttpError(code, `${method} ${path}: ${code} ${text}`));
        else ok(JSON.parse(text) as T);
      });
    });
    req.on('error', fail);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const keyOf = (o: Obj) => `${o.metadata.namespace}/${o.metadata.name}`;

/** A list, then a watch from its resourceVersion (again from the last one seen when it ends). */
function informer(path: string, onObject: (o: Obj) => void) {
  const cache = new Map<string, Obj>();
  let rv = '';
  const watch = () => {
    const query = `?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`;
    https
      .get(at('GET', path + query), (res) => {
        let rest = '';
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          rest += text;
          for (let nl = rest.indexOf('\n'); nl >= 0; nl = rest.indexOf('\n')) {
            const line = rest.slice(0, nl);
            rest = rest.slice(nl + 1);
            const event = JSON.parse(line) as { type: string; object: Obj };
            rv = event.object.metadata.resourceVersion;
            if (event.type === 'BOOKMARK') continue;
            if (event.type === 'DELETED') cache.delete(keyOf(event.object));
            else cache.set(keyOf(event.object), event.object);
            onObject(event.object);
          }
        });
        res.on('end', watch);
      })
      .on('error', () => setTimeout(watch, 1000));
  };
  return {
    cache,
    async start() {
      const list = await call<{ items: Obj[]; metadata: { resourceVersion: string } }>('GET', path);
      for (const o of list.items) {
        cache.set(keyOf(o), o);
        onObject(o);
      }
      rv = list.metadata.resourceVersion;
      watch();
    },
  };
}

/** Keys to reconcile: each at most once in the queue and at most one worker on a key at a time. */
const queue: string[] = [];
const queued = new Set<string>();
const active = new Set<string>();
const waiting: (() => void)[] = [];
const enqueue = (key: string) => {
  if (queued.has(key)) return;
  queued.add(key);
  queue.push(key);
  waiting.shift()?.();
};

const FOOS = '/apis/samplecontroller.k8s.io/v1alpha1';
const foos = informer(`${FOOS}/foos`, (o) => enqueue(keyOf(o)));
const deployments = informer('/apis/apps/v1/deployments', (d) => {
  const owner = d.metadata.ownerReferences?.find((r) => r.controller && r.kind === 'Foo');
  if (owner) enqueue(`${d.metadata.namespace}/${owner.name}`);
});

async function reconcile(key: string): Promise<void> {
  const foo = foos.cache.get(key);
  const name = foo?.spec?.deploymentName;
  if (!foo || !name) return;
  const { namespace } = foo.metadata;
  const base = `/apis/apps/v1/namespaces/${namespace}/deployments`;
  const labels = { app: 'nginx', controller: foo.metadata.name };
  let deployment = deployments.cache.get(`${namespace}/${name}`);
  if (!deployment) {
    const owner = { apiVersion: foo.apiVersion, kind: 'Foo', name: foo.metadata.name, uid: foo.metadata.uid };
    deployment = await call<Obj>('POST', base, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name,
        namespace,
        ownerReferences: [{ ...owner, controller: true, blockOwnerDeletion: true }],
      },
      spec: {
        replicas: foo.spec?.replicas,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'nginx', image: 'nginx:latest' }] } },
      },
    });
  }
  if (deployment.spec?.replicas !== foo.spec?.replicas)
    deployment = await call<Obj>('PUT', `${base}/${name}`, {
      ...deployment,
      spec: { ...deployment.spec, replicas: foo.spec?.replicas },
    });
  const available = deployment.status?.availableReplicas ?? 0;
  if (foo.status?.availableReplicas === available) return;
  const path = `${FOOS}/namespaces/${namespace}/foos/${foo.metadata.name}/status`;
  await call('PATCH', path, { status: { availableReplicas: available } }, 'application/merge-patch+json');
  process.stdout.write(`updated status ${key}\n`);
  const now = new Date().toISOString();
  await call('POST', `/api/v1/namespaces/${namespace}/events`, {
    metadata: { generateName: `${foo.metadata.name}.`, namespace },
    involvedObject: {
      apiVersion: foo.apiVersion,
      kind: 'Foo',
      name: foo.metadata.name,
      namespace,
      uid: foo.metadata.uid,
    },
    reason: 'Synced',
    message: 'Foo synced successfully',
    type: 'Normal',
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
    source: { component: 'sample-controller' },
  });
}

async function worker(): Promise<never> {
  for (;;) {
    const key = queue.shift();
    if (key === undefined || active.has(key)) {
      if (key !== undefined) queue.push(key);
      await new Promise<void>((wake) => waiting.push(wake));
      continue;
    }
    queued.delete(key);
    active.add(key);
    try {
      await reconcile(key);
    } catch (err) {
      // A conflict or a create that raced the cache: tried again shortly, as a rate limiter would.
      process.stderr.write(`${(err as Error).message}\n`);
      setTimeout(() => enqueue(key), err instanceof HttpError && err.code === 409 ? 10 : 100);
    } finally {
      active.delete(key);
      // Another worker may wait while this key was busy.
      if (queue.length > 0) waiting.shift()?.();
    }
  }
}

await deployments.start();
await foos.start();
void worker();
void worker();
