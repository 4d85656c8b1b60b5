/**
 * kubeconfig files: parsing, `KUBECONFIG` merging with client-go's rules, and resolution of a
 * context into a {@link ConnectionConfig}. Every problem is a {@link ConfigError} that names the
 * file and the field.
 *
 * @example
 * ```ts
 * const kc = await readKubeconfig();                       // $KUBECONFIG or ~/.kube/config
 * const config = await resolveKubeconfig(kc, { context: 'staging' });
 * ```
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { JsonObject as Obj } from '../../api/object.js';
import { isDNS1123Label } from '../../api/validation.js';
import { transientModule } from '../../util/transient-module.js';
import { ConfigError, describeFsError } from './errors.js';
import { checkCertificates, checkKeyPair, decodeBase64Field } from './pem.js';
import { DECLINE, parseSimpleYaml } from './simple-yaml.js';
import type { ConnectionConfig, ExecConfig, Impersonation, Origin } from './types.js';

/**
 * The YAML parser, loaded on first use (a client given its configuration never needs it) and
 * dropped a second after the last use: a process reads its kubeconfig once, at start, and yaml's
 * 72 modules would otherwise stay in its heap for good (~0.7 MB in the sample operator). The
 * installed yaml's files as one (vendor/yaml.cjs, scripts/bundle-yaml.mjs; a test checks it is
 * current): Node resolving, reading and compiling 72 files cost ~40 ms of CPU, one file ~7 ms.
 */
const yaml = transientModule<typeof import('yaml')>('../../../vendor/yaml.cjs', import.meta.url);
/**
 * Kubeconfigs are nearly always machine-written (kubectl `config set-*` and `view --raw`, our
 * server's admin kubeconfig, kind, cloud CLIs) in a small, regular subset of YAML, and every
 * process (an operator at start, each CLI command) reads one. So the strict reader of that subset
 * in simple-yaml.ts goes first, and yaml is loaded only for a text it declines, which yaml then
 * parses (or rejects) exactly as before. A cold parseKubeconfig in a fresh process (medians of
 * 20, side by side with main): 16.4 -> 1.2 ms for our server's admin kubeconfig (1.8 KB),
 * 24.3 -> 1.8 ms for a kubectl-written one with exec, auth-provider and client certificates.
 * The sample operator's start (bench operator-start, medians of 20 alternating runs): CPU until
 * its Foo has a status 310 -> 295 ms against the same build without this reader.
 */
const parseYaml = (text: string): unknown => {
  const simple = parseSimpleYaml(text);
  return simple === DECLINE ? yaml().parse(text) : simple;
};

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One named cluster, user or context, with the file it came from. */
export interface KubeconfigEntry {
  name: string;
  /** The `cluster`, `user` or `context` object of the entry. */
  value: Obj;
  /** The file that defined it (`<inline>` for text given directly). */
  file: string;
}

/** A parsed (and possibly merged) kubeconfig. */
export interface Kubeconfig {
  /** The files read, in precedence order. */
  files: string[];
  clusters: Map<string, KubeconfigEntry>;
  users: Map<string, KubeconfigEntry>;
  contexts: Map<string, KubeconfigEntry>;
  currentContext?: { name: string; file: string };
}

/** Where to read kubeconfig files from. */
export interface ReadKubeconfigOptions {
  /** An explicit file (kubectl's `--kubeconfig`): must exist; `KUBECONFIG` is then ignored. */
  path?: string;
  /** Environment to read `KUBECONFIG` and `HOME` from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Which context to use and what to override. */
export interface ResolveKubeconfigOptions {
  /** Context name; `current-context` when omitted. */
  context?: string;
  /** Overrides the context's namespace. */
  namespace?: string;
}

const INLINE = '<inline kubeconfig>';

/**
 * Parses one kubeconfig document. Within a file a repeated name keeps its last entry, as
 * client-go's decoding into a map does.
 */
export function parseKubeconfig(text: string, file = INLINE): Kubeconfig {
  let doc: unknown;
  try {
    doc = text.trim() === '' ? {} : parseYaml(text);
  } catch (err) {
    throw new ConfigError(`not valid YAML: ${(err as Error).message}`, { file }, err);
  }
  if (doc === null || doc === undefined) doc = {};
  if (!isObj(doc)) throw new ConfigError('must be a YAML mapping (apiVersion: v1, kind: Config)', { file });
  if (doc.kind !== undefined && doc.kind !== 'Config') {
    throw new ConfigError(`kind must be "Config", not ${JSON.stringify(doc.kind)}`, { file, field: 'kind' });
  }
  const section = (key: 'clusters' | 'users' | 'contexts', inner: 'cluster' | 'user' | 'context') => {
    const out = new Map<string, KubeconfigEntry>();
    const list = doc[key];
    if (list === undefined || list === null) return out;
    if (!Array.isArray(list)) throw new ConfigError('must be a list', { file, field: key });
    list.forEach((item, i) => {
      if (!isObj(item))
        throw new ConfigError('must be a mapping with name and ' + inner, { file, field: `${key}[${i}]` });
      if (typeof item.name !== 'string' || item.name === '') {
        throw new ConfigError('must be a non-empty string', { file, field: `${key}[${i}].name` });
      }
      const value = item[inner] ?? {};
      if (!isObj(value)) throw new ConfigError('must be a mapping', { file, field: `${key}[${i}].${inner}` });
      out.set(item.name, { name: item.name, value, file });
    });
    return out;
  };
  const kc: Kubeconfig = {
    files: [file],
    clusters: section('clusters', 'cluster'),
    users: section('users', 'user'),
    contexts: section('contexts', 'context'),
  };
  const current = doc['current-context'];
  if (current !== undefined && current !== null && typeof current !== 'string') {
    throw new ConfigError('must be a string', { file, field: 'current-context' });
  }
  if (current) kc.currentContext = { name: current, file };
  return kc;
}

/**
 * Merges kubeconfigs in precedence order with client-go's rules: the first file to define a
 * cluster, user or context name wins it whole (later definitions of the same name are
 * ignored, even their other fields), and the first non-empty `current-context` wins.
 */
export function mergeKubeconfigs(configs: readonly Kubeconfig[]): Kubeconfig {
  const merged: Kubeconfig = { files: [], clusters: new Map(), users: new Map(), contexts: new Map() };
  for (const kc of configs) {
    merged.files.push(...kc.files);
    for (const key of ['clusters', 'users', 'contexts'] as const) {
      for (const [name, entry] of kc[key]) if (!merged[key].has(name)) merged[key].set(name, entry);
    }
    if (!merged.currentContext && kc.currentContext) merged.currentContext = kc.currentContext;
  }
  return merged;
}

/** The files `KUBECONFIG` names (deduplicated, empty entries dropped), or `~/.kube/config`. */
export function kubeconfigPaths(env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  const list = env.KUBECONFIG;
  if (list) return [...new Set(list.split(delimiter).filter((p) => p !== ''))];
  return [join(env.HOME || homedir(), '.kube', 'config')];
}

/**
 * Reads and merges the kubeconfig files: `path` alone when given (it must exist), else every
 * file of `KUBECONFIG` that exists (missing ones are skipped, as kubectl does), else
 * `~/.kube/config`. Fails when no file could be read.
 */
export async function readKubeconfig(options: ReadKubeconfigOptions = {}): Promise<Kubeconfig> {
  const explicit = options.path !== undefined;
  const paths = explicit ? [options.path!] : kubeconfigPaths(options.env);
  const configs: Kubeconfig[] = [];
  for (const path of paths) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if (!explicit && (err as { code?: string }).code === 'ENOENT') continue;
      throw new ConfigError(`cannot read kubeconfig: ${describeFsError(err)}`, { file: path }, err);
    }
    configs.push(parseKubeconfig(text, path));
  }
  if (configs.length === 0) {
    const from = (options.env ?? process.env).KUBECONFIG && !explicit ? 'KUBECONFIG' : 'the default location';
    throw new ConfigError(`no kubeconfig found (looked in ${from}: ${paths.join(', ')})`, {
      field: from === 'KUBECONFIG' ? 'KUBECONFIG' : undefined,
    });
  }
  return mergeKubeconfigs(configs);
}

const quote = (name: string) => JSON.stringify(name);

/** Resolves relative file references against the directory of the kubeconfig that holds them. */
function filePath(p: string, entry: KubeconfigEntry): string {
  if (isAbsolute(p)) return p;
  return entry.file === INLINE ? resolve(p) : resolve(dirname(entry.file), p);
}

async function readReferencedFile(path: string, where: Origin, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read ${what} ${path}: ${describeFsError(err)}`, where, err);
  }
}

/**
 * Turns a context of a kubeconfig into connection settings: reads the referenced files, decodes
 * the `*-data` fields and checks every piece (certificates parse, the key matches, at most one
 * header-based authentication method, a usable exec plugin).
 */
export async function resolveKubeconfig(
  kc: Kubeconfig,
  options: ResolveKubeconfigOptions = {},
): Promise<ConnectionConfig> {
  const files = kc.files.join(', ');
  const contextName = options.context ?? kc.currentContext?.name;
  if (!contextName) {
    throw new ConfigError('no context chosen: current-context is not set and no context was given', {
      file: files,
      field: 'current-context',
    });
  }
  const ctx = kc.contexts.get(contextName);
  if (!ctx) {
    throw new ConfigError(
      `context ${quote(contextName)} not found`,
      options.context !== undefined
        ? { file: files }
        : { file: kc.currentContext?.file ?? files, field: 'current-context' },
    );
  }
  const ctxField = (f: string) => ({ file: ctx.file, field: `contexts[${quote(ctx.name)}].context.${f}` });
  const str = (entry: KubeconfigEntry, section: string, key: string): string | undefined => {
    const v = entry.value[key];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') {
      throw new ConfigError('must be a string', {
        file: entry.file,
        field: `${section}[${quote(entry.name)}].${section.slice(0, -1)}.${key}`,
      });
    }
    return v;
  };

  const clusterName = str(ctx, 'contexts', 'cluster');
  if (!clusterName) throw new ConfigError('no cluster given for the context', ctxField('cluster'));
  const cluster = kc.clusters.get(clusterName);
  if (!cluster)
    throw new ConfigError(`cluster ${quote(clusterName)} not found in ${files}`, ctxField('cluster'));
  const userName = str(ctx, 'contexts', 'user');
  const user = userName === undefined ? undefined : kc.users.get(userName);
  if (userName !== undefined && !user) {
    throw new ConfigError(`user ${quote(userName)} not found in ${files}`, ctxField('user'));
  }

  const namespace = options.namespace ?? str(ctx, 'contexts', 'namespace') ?? 'default';
  if (isDNS1123Label(namespace).length > 0) {
    throw new ConfigError(
      `namespace ${quote(namespace)} is not a valid namespace name (RFC 1123 label)`,
      options.namespace !== undefined ? {} : ctxField('namespace'),
    );
  }

  const config: ConnectionConfig = { server: '', namespace, origins: {} };
  const { execClusterConfig } = await resolveCluster(cluster, config);
  if (user) await resolveUser(user, config, execClusterConfig);
  return config;
}

async function resolveCluster(
  entry: KubeconfigEntry,
  config: ConnectionConfig,
): Promise<{ execClusterConfig?: unknown }> {
  const at = (key: string): Origin => ({
    file: entry.file,
    field: `clusters[${quote(entry.name)}].cluster.${key}`,
  });
  const v = entry.value;
  const server = v.server;
  if (typeof server !== 'string' || server === '')
    throw new ConfigError('no server given for the cluster', at('server'));
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new ConfigError(`${quote(server)} is not a URL`, at('server'));
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`${quote(server)} must be an https:// (or http://) URL`, at('server'));
  }
  config.server = server.replace(/\/+$/, '');
  config.origins!.server = at('server');

  if (v['proxy-url']) {
    throw new ConfigError('proxy-url is not supported by the kubeloop client yet', at('proxy-url'));
  }
  const caFile = v['certificate-authority'];
  const caData = v['certificate-authority-data'];
  if (caFile && caData) {
    throw new ConfigError(
      'certificate-authority and certificate-authority-data are both given; keep one',
      at('certificate-authority'),
    );
  }
  if (caData) {
    const where = at('certificate-authority-data');
    config.caData = checkCertificates(decodeBase64Field(caData, where), where, 'the certificate authority');
    config.origins!.caData = where;
  } else if (caFile) {
    const where = at('certificate-authority');
    if (typeof caFile !== 'string') throw new ConfigError('must be a file path', where);
    const path = filePath(caFile, entry);
    config.caData = checkCertificates(
      await readReferencedFile(path, where, 'certificate authority file'),
      { file: path },
      'the certificate authority file',
    );
    config.origins!.caData = where;
  }
  const insecure = v['insecure-skip-tls-verify'];
  if (insecure !== undefined && typeof insecure !== 'boolean') {
    throw new ConfigError('must be true or false', at('insecure-skip-tls-verify'));
  }
  if (insecure) {
    if (config.caData) {
      // client-go refuses the combination: a CA that would silently not be checked.
      throw new ConfigError(
        'insecure-skip-tls-verify cannot be combined with a certificate authority',
        at('insecure-skip-tls-verify'),
      );
    }
    config.insecureSkipTlsVerify = true;
  }
  const serverName = v['tls-server-name'];
  if (serverName !== undefined && serverName !== '') {
    if (typeof serverName !== 'string') throw new ConfigError('must be a string', at('tls-server-name'));
    config.tlsServerName = serverName;
  }
  const ext = v.extensions;
  if (Array.isArray(ext)) {
    const execExt = ext.find((e) => isObj(e) && e.name === 'client.authentication.k8s.io/exec');
    if (isObj(execExt)) return { execClusterConfig: execExt.extension };
  }
  return {};
}

async function resolveUser(
  entry: KubeconfigEntry,
  config: ConnectionConfig,
  execClusterConfig: unknown,
): Promise<void> {
  const at = (key: string): Origin => ({
    file: entry.file,
    field: `users[${quote(entry.name)}].user.${key}`,
  });
  const v = entry.value;
  const str = (key: string): string | undefined => {
    const x = v[key];
    if (x === undefined || x === null || x === '') return undefined;
    if (typeof x !== 'string') throw new ConfigError('must be a string', at(key));
    return x;
  };

  if (v['auth-provider'] !== undefined && v['auth-provider'] !== null) {
    const name = isObj(v['auth-provider']) ? v['auth-provider'].name : undefined;
    throw new ConfigError(
      `auth-provider${typeof name === 'string' ? ` ${quote(name)}` : ''} is not supported (client-go removed the built-in providers too); use an exec credential plugin such as kubelogin`,
      at('auth-provider'),
    );
  }

  const token = str('token');
  const tokenFile = str('tokenFile');
  const username = str('username');
  const password = str('password');
  const methods = [...(token ? ['token'] : []), ...(username || password ? ['basicAuth'] : [])];
  if (methods.length > 1) {
    throw new ConfigError(
      `more than one authentication method found: ${methods.join(', ')}; only one is allowed`,
      {
        file: entry.file,
        field: `users[${quote(entry.name)}].user`,
      },
    );
  }
  if (token) {
    config.token = token;
    config.origins!.token = at('token');
  }
  if (tokenFile) {
    const path = filePath(tokenFile, entry);
    // Read now, as client-go does, so that a wrong path fails at start-up rather than at the first request.
    await readReferencedFile(path, at('tokenFile'), 'token file');
    config.tokenFile = path;
    config.origins!.tokenFile = at('tokenFile');
  }
  if (username !== undefined || password !== undefined) {
    config.username = username ?? '';
    config.password = password ?? '';
  }

  const certData = str('client-certificate-data');
  const certFile = str('client-certificate');
  const keyData = str('client-key-data');
  const keyFile = str('client-key');
  if (certData && certFile) {
    throw new ConfigError(
      'client-certificate and client-certificate-data are both given; keep one',
      at('client-certificate'),
    );
  }
  if (keyData && keyFile) {
    throw new ConfigError('client-key and client-key-data are both given; keep one', at('client-key'));
  }
  if (certData || certFile || keyData || keyFile) {
    if (!certData && !certFile) {
      throw new ConfigError(
        'a client key is given without client-certificate or client-certificate-data',
        at(keyData ? 'client-key-data' : 'client-key'),
      );
    }
    if (!keyData && !keyFile) {
      throw new ConfigError(
        'client-key or client-key-data must be given with a client certificate',
        at(certData ? 'client-certificate-data' : 'client-certificate'),
      );
    }
    const certWhere = at(certData ? 'client-certificate-data' : 'client-certificate');
    const keyWhere = at(keyData ? 'client-key-data' : 'client-key');
    const cert = certData
      ? decodeBase64Field(certData, certWhere)
      : await readReferencedFile(filePath(certFile!, entry), certWhere, 'client certificate');
    const key = keyData
      ? decodeBase64Field(keyData, keyWhere)
      : await readReferencedFile(filePath(keyFile!, entry), keyWhere, 'client key');
    checkKeyPair(cert, key, certWhere, keyWhere);
    config.certData = cert;
    config.keyData = key;
    config.origins!.certData = certWhere;
    config.origins!.keyData = keyWhere;
  }

  const exec = v.exec;
  if (exec !== undefined && exec !== null) {
    config.exec = parseExec(exec, entry, at, execClusterConfig);
    config.origins!.exec = at('exec');
  }

  const as = str('as');
  const asGroups = v['as-groups'];
  const asExtra = v['as-user-extra'];
  if (as) {
    const imp: Impersonation = { user: as };
    const uid = str('as-uid');
    if (uid) imp.uid = uid;
    if (asGroups !== undefined && asGroups !== null) {
      if (!Array.isArray(asGroups) || !asGroups.every((g) => typeof g === 'string')) {
        throw new ConfigError('must be a list of strings', at('as-groups'));
      }
      imp.groups = asGroups;
    }
    if (isObj(asExtra)) {
      imp.extra = {};
      for (const [k, vals] of Object.entries(asExtra)) {
        if (!Array.isArray(vals) || !vals.every((x) => typeof x === 'string')) {
          throw new ConfigError('must map names to lists of strings', at(`as-user-extra.${k}`));
        }
        imp.extra[k] = vals;
      }
    }
    config.impersonate = imp;
  } else if ((Array.isArray(asGroups) && asGroups.length > 0) || isObj(asExtra)) {
    throw new ConfigError('as-groups and as-user-extra need a user to impersonate (as)', at('as'));
  }
}

function parseExec(
  exec: unknown,
  entry: KubeconfigEntry,
  at: (key: string) => Origin,
  execClusterConfig: unknown,
): ExecConfig {
  if (!isObj(exec)) throw new ConfigError('must be a mapping', at('exec'));
  const { command, apiVersion, args, env, installHint, provideClusterInfo, interactiveMode } = exec;
  if (typeof command !== 'string' || command === '') {
    throw new ConfigError('command must be given to use an exec credential plugin', at('exec.command'));
  }
  if (typeof apiVersion !== 'string' || apiVersion === '') {
    throw new ConfigError('apiVersion must be given to use an exec credential plugin', at('exec.apiVersion'));
  }
  if (
    apiVersion !== 'client.authentication.k8s.io/v1' &&
    apiVersion !== 'client.authentication.k8s.io/v1beta1'
  ) {
    throw new ConfigError(
      `exec plugin apiVersion ${quote(apiVersion)} is not supported (use client.authentication.k8s.io/v1)`,
      at('exec.apiVersion'),
    );
  }
  const out: ExecConfig = {
    apiVersion,
    // A command with a path separator is a file next to the kubeconfig; a bare name is looked up in PATH.
    command: command.includes(sep) || command.includes('/') ? filePath(command, entry) : command,
  };
  if (args !== undefined && args !== null) {
    if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) {
      throw new ConfigError('must be a list of strings', at('exec.args'));
    }
    out.args = args;
  }
  if (env !== undefined && env !== null) {
    if (!Array.isArray(env)) throw new ConfigError('must be a list of {name, value}', at('exec.env'));
    out.env = env.map((e, i) => {
      if (!isObj(e) || typeof e.name !== 'string' || e.name === '') {
        throw new ConfigError('env variable name must be given', at(`exec.env[${i}].name`));
      }
      return { name: e.name, value: e.value === undefined || e.value === null ? '' : String(e.value) };
    });
  }
  if (typeof installHint === 'string') out.installHint = installHint;
  if (provideClusterInfo === true) {
    out.provideClusterInfo = true;
    if (execClusterConfig !== undefined) out.clusterConfig = execClusterConfig;
  }
  if (interactiveMode !== undefined && interactiveMode !== null && interactiveMode !== '') {
    if (interactiveMode !== 'Never' && interactiveMode !== 'IfAvailable' && interactiveMode !== 'Always') {
      throw new ConfigError(
        `${quote(String(interactiveMode))} is not one of Never, IfAvailable, Always`,
        at('exec.interactiveMode'),
      );
    }
    out.interactiveMode = interactiveMode;
  }
  return out;
}

/**
 * Reads the kubeconfig files and resolves a context in one go.
 *
 * @example
 * ```ts
 * const config = await loadKubeconfig({ context: 'kind-dev' });
 * const client = new Client(config);
 * ```
 */
export async function loadKubeconfig(
  options: ReadKubeconfigOptions & ResolveKubeconfigOptions & { kubeconfig?: string } = {},
): Promise<ConnectionConfig> {
  const kc =
    options.kubeconfig !== undefined ? parseKubeconfig(options.kubeconfig) : await readKubeconfig(options);
  return resolveKubeconfig(kc, options);
}
