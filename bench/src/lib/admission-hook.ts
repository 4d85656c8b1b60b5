/**
 * The plain admission webhook the webhook benches call: a child process on node:https with a
 * self-signed certificate for 127.0.0.1, `/mutate` answering a JSONPatch that adds a label,
 * `/validate` allowing — the least a webhook can do, so that the caller's cost stands out.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

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

/** Starts the webhook, its certificate and key written to `dir`. */
export async function startPlainAdmissionHook(dir: string): Promise<AdmissionHook> {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
  ], { stdio: 'ignore' }); // biome-ignore format: one command line
  const child = spawn(process.execPath, ['--input-type=module', '-e', SERVER, cert, key], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((ok, fail) => {
    child.stdout!.on('data', (d: Buffer) => {
      const m = /listening (\d+)/.exec(d.toString());
      if (m) ok(Number(m[1]));
    });
    child.on('exit', (code) => fail(new Error(`webhook server exited ${code}`)));
  });
  return { port, caBundle: readFileSync(cert).toString('base64'), child };
}
