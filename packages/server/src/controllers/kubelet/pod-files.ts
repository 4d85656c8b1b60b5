/**
 * What a process-backed container sees instead of a container filesystem: a root directory of its
 * own (`$KUBELOOP_ROOT`) under which each volume is mounted at its `mountPath` (ConfigMap, Secret,
 * downward API and projected volumes as files, the projected ServiceAccount token from the
 * TokenRequest API as the kubelet gets it, emptyDir as a directory the pod's containers share,
 * hostPath as a link to the host's path), the image's files linked into its `WORKDIR`, and the
 * environment of its pod spec with the in-cluster variables pointing at this control plane.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { Client } from 'kubeloop/client';
import type { LocalImage } from './images.js';
import { expandRefs, type SimulatedRuntime } from './runtime.js';

// biome-ignore lint/suspicious/noExplicitAny: pods are read loosely, as the JSON they are
type Obj = Record<string, any>;

/** The environment variable naming the container's root directory (kubeloop's in-cluster config reads it). */
export const CONTAINER_ROOT_ENV = 'KUBELOOP_ROOT';
/** The environment variable holding the pod's IP (its loopback address). */
export const POD_IP_ENV = 'KUBELOOP_POD_IP';
/** The file of the state directory (beside the preload) holding the Services' cluster DNS names. */
export const CLUSTER_DNS_FILE = 'cluster-dns.json';

/** A path of the container under its root directory. */
export function inRoot(root: string, path: string): string {
  return join(root, path.replace(/^\/+/, ''));
}

/** Writes a file so that a reader sees the old content or the new one, never a part (as the kubelet's atomic writer). */
function writeAtomic(file: string, data: Buffer | string, mode?: number): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.kubeloop-tmp`;
  writeFileSync(tmp, data, mode === undefined ? {} : { mode });
  renameSync(tmp, file);
}

/**
 * Writes the files of the container's ConfigMap, Secret, downward API and projected volumes as
 * the objects are now (also what a periodic sync calls, so that their changes reach the process;
 * a `subPath` mount, as in Kubernetes, keeps its first content).
 */
export function writeMountedFiles(
  runtime: SimulatedRuntime,
  pod: Obj,
  spec: Obj,
  root: string,
  refresh = false,
): void {
  for (const m of runtime.mounts(pod, spec)) {
    const at = inRoot(root, m.path);
    for (const [rel, data] of m.files) {
      if (refresh && rel === '') continue;
      const file = rel === '' ? at : join(at, rel);
      if (refresh && existsSync(file) && readFileSync(file).equals(data)) continue;
      writeAtomic(file, data, m.mode ?? 0o644);
    }
    if (!m.files.has('')) mkdirSync(at, { recursive: true });
  }
}

/** A token the kubelet got for a projected volume, and when to get the next one. */
export interface ProjectedToken {
  file: string;
  /** Epoch ms after which the token is refreshed (80% of its lifetime, as the kubelet's token manager). */
  refreshAt: number;
  source: Obj;
}

/**
 * Writes the volumes of a container under its root: what runtime.mounts reads from the
 * ConfigMaps and Secrets now, links for emptyDir and hostPath; returns the token files to fill.
 */
export function writeVolumes(
  runtime: SimulatedRuntime,
  pod: Obj,
  spec: Obj,
  root: string,
  podDir: string,
): { file: string; source: Obj }[] {
  writeMountedFiles(runtime, pod, spec, root);
  const volumes = new Map<string, Obj>((pod.spec?.volumes ?? []).map((v: Obj) => [v.name, v]));
  const tokens: { file: string; source: Obj }[] = [];
  for (const m of spec.volumeMounts ?? []) {
    const v = volumes.get(m.name);
    const at = inRoot(root, m.mountPath);
    if (!v) continue;
    for (const src of v.projected?.sources ?? [])
      if (src.serviceAccountToken) tokens.push({ file: join(at, src.serviceAccountToken.path), source: src });
    const shared =
      v.emptyDir || v.persistentVolumeClaim || v.ephemeral
        ? join(podDir, 'volumes', v.name)
        : v.hostPath?.path;
    if (!shared) continue;
    mkdirSync(shared, { recursive: true });
    mkdirSync(dirname(at), { recursive: true });
    rmSync(at, { recursive: true, force: true });
    symlinkSync(m.subPath ? join(shared, m.subPath) : shared, at);
  }
  return tokens;
}

/**
 * Gets a bound token for the pod's ServiceAccount from the TokenRequest API (as the node, as the
 * kubelet does) and writes it; resolves to when it should be refreshed.
 */
export async function writeToken(client: Client, pod: Obj, file: string, source: Obj): Promise<number> {
  const ns = pod.metadata?.namespace ?? 'default';
  const sa = pod.spec?.serviceAccountName || 'default';
  const expirationSeconds = source.serviceAccountToken.expirationSeconds ?? 3607;
  const audience = source.serviceAccountToken.audience;
  const issued = Date.now();
  const res = await client.request<{ status?: { token?: string; expirationTimestamp?: string } }>(
    'POST',
    `/api/v1/namespaces/${encodeURIComponent(ns)}/serviceaccounts/${encodeURIComponent(sa)}/token`,
    {
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: {
          audiences: audience ? [audience] : [],
          expirationSeconds,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata?.name, uid: pod.metadata?.uid },
        },
      },
    },
  );
  writeAtomic(file, res.status?.token ?? '', 0o600);
  const expires = Date.parse(res.status?.expirationTimestamp ?? '') || issued + expirationSeconds * 1000;
  // The kubelet's token manager renews a token once 80% of its lifetime passed (or after 24 h).
  return issued + Math.min(0.8 * (expires - issued), 24 * 3600_000);
}

/** Links each entry of the image's directory into its WORKDIR under the container's root. */
export function linkImage(image: LocalImage, root: string): void {
  const workdir = inRoot(root, image.workingDir ?? '/app');
  mkdirSync(workdir, { recursive: true });
  for (const entry of readdirSync(image.dir)) {
    try {
      symlinkSync(join(image.dir, entry), join(workdir, entry));
    } catch {
      // Already linked (a restarted container keeps its root), or written by the container.
    }
  }
}

/** Removes the links {@link linkImage} made to an image's files (the container runs another image now). */
export function unlinkImage(image: LocalImage, root: string): void {
  const workdir = inRoot(root, image.workingDir ?? '/app');
  for (const entry of readdirSync(image.dir)) {
    const at = join(workdir, entry);
    try {
      if (readlinkSync(at) === join(image.dir, entry)) unlinkSync(at);
    } catch {
      // Not a link of the image (gone, or written by the container).
    }
  }
}

/** Where the container's process runs: its `workingDir`, else the image's, under its root. */
export function workingDirectory(spec: Obj, image: LocalImage, root: string): string {
  const dir = inRoot(root, spec.workingDir ?? image.workingDir ?? '/app');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * The environment of a container's process: its pod spec's (`env`, `envFrom`, `valueFrom` as the
 * simulated runtime resolves them) over the image's `ENV`; the in-cluster variables naming this
 * control plane; `PATH` and `HOME` of this machine unless the spec sets them; `KUBELOOP_ROOT`,
 * `KUBELOOP_POD_IP`; and for Node.js programs a preload that binds unaddressed listens to the pod IP.
 */
export function processEnvironment(o: {
  runtime: SimulatedRuntime;
  pod: Obj;
  spec: Obj;
  image: LocalImage;
  root: string;
  podIP: string;
  apiServer: URL;
  listenShim: string;
}): Record<string, string> {
  const { pod, spec } = o;
  const podIP = o.podIP;
  const withIp = { ...pod, status: { ...pod.status, podIP, podIPs: [{ ip: podIP }] } };
  const env = o.runtime.environment(withIp, spec);
  const fromSpec = new Set<string>((spec.env ?? []).map((e: Obj) => e.name));
  for (const k of env.keys())
    if (!['PATH', 'HOSTNAME', 'HOME'].includes(k) && !k.startsWith('KUBERNETES_')) fromSpec.add(k);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.image.env ?? {})) if (!fromSpec.has(k)) out[k] = v;
  for (const [k, v] of env) out[k] = v;
  if (!fromSpec.has('PATH'))
    out.PATH = o.image.env?.PATH ?? process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
  if (!fromSpec.has('HOME')) out.HOME = o.root;
  const host = o.apiServer.hostname.replace(/^\[|\]$/g, '');
  const port = o.apiServer.port || '443';
  const kube: Record<string, string> = {
    KUBERNETES_SERVICE_HOST: host,
    KUBERNETES_SERVICE_PORT: port,
    KUBERNETES_SERVICE_PORT_HTTPS: port,
    KUBERNETES_PORT: `tcp://${o.apiServer.host}:${port}`,
  };
  for (const k of Object.keys(out)) if (k.startsWith('KUBERNETES_PORT_') && !fromSpec.has(k)) delete out[k];
  for (const [k, v] of Object.entries(kube)) if (!fromSpec.has(k)) out[k] = v;
  out[CONTAINER_ROOT_ENV] = o.root;
  out[POD_IP_ENV] = podIP;
  // The cluster DNS of a pod (dnsPolicy ClusterFirst): the names and the search list of its resolv.conf.
  out.KUBELOOP_CLUSTER_DNS = join(dirname(o.listenShim), CLUSTER_DNS_FILE);
  const ns = pod.metadata?.namespace ?? 'default';
  out.KUBELOOP_DNS_SEARCH = `${ns}.svc.cluster.local svc.cluster.local cluster.local`;
  const nodeOptions = out.NODE_OPTIONS ?? '';
  out.NODE_OPTIONS = `--require ${JSON.stringify(o.listenShim)}${nodeOptions ? ` ${nodeOptions}` : ''}`;
  return out;
}

/** A container's argv: `command` + `args`, else the image's `ENTRYPOINT` + (`args` or `CMD`), `$(VAR)` expanded. */
export function commandLine(spec: Obj, image: LocalImage, env: Record<string, string>): string[] {
  const argv: string[] = spec.command
    ? [...spec.command, ...(spec.args ?? [])]
    : [...(image.entrypoint ?? []), ...(spec.args ?? image.cmd ?? [])];
  const vars = new Map(Object.entries(env));
  return argv.map((a) => expandRefs(String(a), vars));
}

/**
 * The preload of Node.js processes, for what a pod's namespaces would do: its own network
 * namespace, so an unaddressed `listen(port)` binds all of the pod's addresses, not the host's
 * (here the pod's loopback IP: two pods can listen on the same port); its own UTS namespace, so
 * `os.hostname()` is the pod's hostname (leader election identities name the pod); and its
 * cluster DNS, there being no DNS server: `dns.lookup` (what `net`, `http` and `fetch` resolve
 * with) answers a Service's name — `<service>.<namespace>.svc.cluster.local`, or shorter through
 * the search list `<namespace>.svc.cluster.local svc.cluster.local cluster.local` with
 * `ndots:5`, as a pod's resolv.conf — with the loopback twin of its ClusterIP where the service
 * proxy listens (./service-proxy.ts); an ExternalName Service's with its external name's
 * addresses. A name of the cluster domain that is no Service is not found (ENOTFOUND); every
 * other name resolves as usual.
 */
export const LISTEN_SHIM = `'use strict';
const net = require('node:net');
const os = require('node:os');
if (process.env.HOSTNAME) {
  const name = process.env.HOSTNAME;
  os.hostname = () => name;
  require('node:module').syncBuiltinESMExports();
}
const dnsFile = process.env.KUBELOOP_CLUSTER_DNS;
const dns = require('node:dns');
if (dnsFile && !dns.__kubeloopDns) {
  dns.__kubeloopDns = true;
  const fs = require('node:fs');
  const search = (process.env.KUBELOOP_DNS_SEARCH || '').split(' ').filter(Boolean);
  let table = { mtime: -1, names: {} };
  const names = () => {
    try {
      const mtime = fs.statSync(dnsFile).mtimeMs;
      if (mtime !== table.mtime) table = { mtime, names: JSON.parse(fs.readFileSync(dnsFile, 'utf8')) };
    } catch {}
    return table.names;
  };
  // What a name is in the cluster: a record, 'none' (the cluster domain, no such Service), or undefined (not the cluster's).
  const cluster = (host) => {
    if (typeof host !== 'string' || host === '' || /^[d.]+$/.test(host) || host.includes(':')) return undefined;
    const h = host.toLowerCase();
    const absolute = h.endsWith('.');
    const name = absolute ? h.slice(0, -1) : h;
    const dots = name.split('.').length - 1;
    const tries = absolute ? [name] : dots >= 5 ? [name, ...search.map((s) => name + '.' + s)] : [...search.map((s) => name + '.' + s), name];
    const known = names();
    for (const t of tries) if (known[t]) return known[t];
    return /(^|.)cluster.local$/.test(name) ? 'none' : undefined;
  };
  const notFound = (host) => Object.assign(new Error('getaddrinfo ENOTFOUND ' + host), { code: 'ENOTFOUND', errno: -3008, syscall: 'getaddrinfo', hostname: host });
  const lookup = dns.lookup;
  dns.lookup = function (host, options, callback) {
    const cb = typeof options === 'function' ? options : callback;
    const o = typeof options === 'function' ? {} : typeof options === 'number' ? { family: options } : options || {};
    const found = cluster(host);
    if (found === undefined) return lookup.apply(this, arguments);
    if (found.cname) return lookup.call(this, found.cname, o, cb);
    if (found === 'none' || o.family === 6 || o.family === 'IPv6') {
      process.nextTick(cb, notFound(host));
      return {};
    }
    if (o.all) process.nextTick(cb, null, [{ address: found.address, family: 4 }]);
    else process.nextTick(cb, null, found.address, 4);
    return {};
  };
  const promised = dns.promises.lookup;
  dns.promises.lookup = function (host, options) {
    const found = cluster(host);
    if (found === undefined) return promised.apply(this, arguments);
    return new Promise((resolve, reject) =>
      dns.lookup(host, options || {}, (err, address, family) => (err ? reject(err) : resolve(Array.isArray(address) ? address : { address, family }))),
    );
  };
  require('node:module').syncBuiltinESMExports();
}
const ip = process.env.${POD_IP_ENV};
const any = (h) => h === undefined || h === null || h === '' || h === '0.0.0.0' || h === '::' || h === '[::]';
if (ip && !net.Server.prototype.__kubeloopPodIp) {
  const listen = net.Server.prototype.listen;
  net.Server.prototype.__kubeloopPodIp = true;
  net.Server.prototype.listen = function (...args) {
    const a = args[0];
    if (a !== null && typeof a === 'object') {
      if (a.path === undefined && a.fd === undefined && a.handle === undefined && a._handle === undefined && any(a.host))
        args[0] = { ...a, host: ip };
    } else if (a === undefined || typeof a === 'function') {
      args.splice(0, a === undefined ? 1 : 0, 0, ip);
    } else if (typeof a === 'number' || (typeof a === 'string' && /^\\d+$/.test(a))) {
      if (typeof args[1] === 'string') { if (any(args[1])) args[1] = ip; }
      else args.splice(1, 0, ip);
    }
    return listen.apply(this, args);
  };
}
`;
