/**
 * The plain admission webhooks the webhook benches call: a child process with a self-signed
 * certificate for 127.0.0.1, `/mutate` answering a JSONPatch that adds a label, `/validate`
 * allowing — the least a webhook can do, so that the caller's cost stands out. On node:https
 * (`startPlainAdmissionHook`), or on Go's net/http (`startGoAdmissionHook`, `bench/go/admission-hook`,
 * built here with the Go toolchain on the PATH or Debian's golang-*-go): the cheapest webhook
 * process this machine runs, what controller-runtime's webhook server is built on.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER = `
import { createServer } from 'node:https';
import { readFileSync } from 'node:fs';
const [cert, key] = [process.argv[1], process.argv[2]].map((p) => readFileSync(p));
const patch = Buffer.from(JSON.stringify([{ op: 'add', path: '/metadata/labels', value: { injected: 'yes' } }])).toString('base64');
const server = createServer({ cert, key }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const review = JSON.parse(Buffer.concat(chunks).toString());
    const response = { uid: review.request.uid, allowed: true };
    if (req.url.startsWith('/mutate')) Object.assign(response, { patchType: 'JSONPatch', patch });
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port));
`;

/** A running webhook: its port on 127.0.0.1, its certificate as a `caBundle`, its process. */
export interface AdmissionHook {
  port: number;
  caBundle: string;
  child: ChildProcess;
}

/** A self-signed certificate for 127.0.0.1 and its key, written to `dir`. */
function certificate(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
  ], { stdio: 'ignore' }); // biome-ignore format: one command line
  return { cert, key };
}

/** Starts the node:https webhook, its certificate and key written to `dir`. */
export function startPlainAdmissionHook(dir: string): Promise<AdmissionHook> {
  const { cert, key } = certificate(dir);
  const child = spawn(process.execPath, ['--input-type=module', '-e', SERVER, cert, key], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return listening(child, cert);
}

/** The Go toolchain: `go` on the PATH, else the newest Debian golang-*-go. */
function goTool(): string {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
    return 'go';
  } catch {
    const lib = '/usr/lib';
    const debian = readdirSync(lib)
      .filter((d) => /^go-\d/.test(d) && existsSync(join(lib, d, 'bin/go')))
      .sort()
      .pop();
    if (!debian) throw new Error('--hook=go needs the Go toolchain (apt-get install golang-1.19-go)');
    return join(lib, debian, 'bin/go');
  }
}

/** Builds and starts the Go webhook (bench/go/admission-hook), binary, certificate and key in `dir`. */
export function startGoAdmissionHook(dir: string): Promise<AdmissionHook> {
  const source = resolve(dirname(fileURLToPath(import.meta.url)), '../../go/admission-hook');
  const binary = join(dir, 'admission-hook');
  execFileSync(goTool(), ['build', '-o', binary, '.'], {
    cwd: source,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, GOFLAGS: '-mod=mod' },
  });
  const { cert, key } = certificate(dir);
  const child = spawn(binary, [cert, key], { stdio: ['ignore', 'pipe', 'inherit'] });
  return listening(child, cert);
}

/** The webhook once its process prints the port it listens on. */
async function listening(child: ChildProcess, cert: string): Promise<AdmissionHook> {
  const port = await new Promise<number>((ok, fail) => {
    child.stdout!.on('data', (d: Buffer) => {
      const m = /listening (\d+)/.exec(d.toString());
      if (m) ok(Number(m[1]));
    });
    child.on('exit', (code) => fail(new Error(`webhook server exited ${code}`)));
  });
  return { port, caBundle: readFileSync(cert).toString('base64'), child };
}
