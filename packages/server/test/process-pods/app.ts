/**
 * The program of the test image: an HTTP server (on its pod's port 8080 unless `PORT` says
 * otherwise) that tells what its process sees, or a command line that crashes or exits.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SERVER = `
const http = require('node:http');
const https = require('node:https');
const fs = require('node:fs');
const mode = process.argv[2] || 'serve';
if (process.env.PID_FILE) fs.writeFileSync(process.env.PID_FILE + '.' + process.pid, String(process.pid));
console.log('started ' + mode + ' as ' + process.pid);
if (mode === 'cat') {
  process.stdin.on('data', (d) => process.stdout.write('got ' + d));
  process.stdin.on('end', () => process.exit(0));
  return;
}
if (mode === 'exit') { console.error('exiting with ' + process.argv[3]); process.exit(Number(process.argv[3])); }
let ready = mode !== 'unready';
if (process.env.GRPC_PORT) {
  // grpc.health.v1.Health/Check over plaintext HTTP/2: SERVING for every service.
  require('node:http2').createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/grpc' });
      res.addTrailers({ 'grpc-status': '0' });
      res.end(Buffer.from([0, 0, 0, 0, 2, 0x08, 1]));
    });
  }).listen(Number(process.env.GRPC_PORT));
}
if (mode === 'with-child') {
  // A process of the container that its main process does not wait for: it must go with the container.
  const child = require('node:child_process').spawn('sleep', ['600'], { stdio: 'ignore' });
  if (process.env.PID_FILE) fs.writeFileSync(process.env.PID_FILE + '.' + child.pid, String(child.pid));
}
process.on('SIGTERM', () => {
  console.log('got SIGTERM');
  if (process.env.TERM_FILE) fs.writeFileSync(process.env.TERM_FILE, 'SIGTERM');
  if (mode !== 'stubborn') process.exit(0);
});
const whoami = () => new Promise((resolve, reject) => {
  const root = process.env.KUBELOOP_ROOT;
  const dir = root + '/var/run/secrets/kubernetes.io/serviceaccount';
  const req = https.request({
    host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT,
    path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', method: 'POST',
    ca: fs.readFileSync(dir + '/ca.crt'),
    headers: { authorization: 'Bearer ' + fs.readFileSync(dir + '/token', 'utf8'), 'content-type': 'application/json' },
  }, (res) => { let b = ''; res.on('data', (d) => (b += d)); res.on('end', () => resolve(b)); });
  req.on('error', reject);
  req.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
});
http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  try {
    if (url.pathname === '/env') return res.end(JSON.stringify(process.env));
    if (url.pathname === '/cwd') return res.end(JSON.stringify({ cwd: process.cwd(), files: fs.readdirSync('.') }));
    if (url.pathname === '/file') return res.end(fs.readFileSync(process.env.KUBELOOP_ROOT + url.searchParams.get('path')));
    if (url.pathname === '/whoami') return res.end(await whoami());
    if (url.pathname === '/ready') { res.statusCode = ready ? 200 : 503; return res.end(String(ready)); }
    if (url.pathname === '/set-ready') { ready = url.searchParams.get('v') === 'true'; return res.end('ok'); }
    if (url.pathname === '/log') { console.log(url.searchParams.get('line')); return res.end('ok'); }
    res.statusCode = 404; res.end();
  } catch (e) { res.statusCode = 500; res.end(String(e)); }
}).listen(Number(process.env.PORT || 8080), () => console.log('listening'));
`;

/** Writes the test image's directory: `server.js` and a `package.json`. */
export function writeTestImage(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kubeloop-test-image-'));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'server.js'), SERVER);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'test-app', version: '1.0.0' }));
  return dir;
}
