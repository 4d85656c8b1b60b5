import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { DECLINE, parseSimpleYaml } from './simple-yaml.js';

/**
 * What `yaml.parse` gives (as yaml's own `parse` does it, minus the warning it would print), or
 * `undefined` when it fails or warns.
 */
function yamlParse(text: string): { value: unknown } | undefined {
  const doc = parseDocument(text);
  if (doc.errors.length > 0 || doc.warnings.length > 0) return undefined;
  return { value: doc.toJS() };
}

/** Deep-equal with the same prototypes, -0 apart from 0, and the same key order. */
const same = (a: unknown, b: unknown) => isDeepStrictEqual(a, b) && JSON.stringify(a) === JSON.stringify(b);

/** The property: the simple parser declines, or yaml parses the text to the same value. */
function check(text: string): 'declined' | 'same' | 'different' {
  const simple = parseSimpleYaml(text);
  if (simple === DECLINE) return 'declined';
  const full = yamlParse(text);
  return full !== undefined && same(simple, full.value) ? 'same' : 'different';
}

// The admin kubeconfig of packages/server (control-plane.ts renderKubeconfig), token and CA
// shortened.
const serverKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: kubeloop
  cluster:
    server: https://127.0.0.1:40123
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJkekNDQVIyZ0F3SUJBZ0lRZm9vCg==
users:
- name: kubeloop-admin
  user:
    token: kubeloop-0f3c2a91d8e74b6c9a1e5d2b7c4f8a03
contexts:
- name: kubeloop
  context:
    cluster: kubeloop
    user: kubeloop-admin
    namespace: default
current-context: kubeloop
preferences: {}
`;

// The shape of a kubeconfig kubectl rewrote (an anchor run's admin.kubeconfig), secrets replaced.
const kubectlViewKubeconfig = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJkekNDQVIyZ0F3SUJBZ0lRZm9vCg==
    server: https://127.0.0.1:17443
  name: anchor
contexts:
- context:
    cluster: anchor
    user: admin
  name: anchor
current-context: anchor
kind: Config
preferences: {}
users:
- name: admin
  user:
    token: 3b0a9c1e-admin-token.value
`;

// Written by hand: comments, quotes, deeper sequences, extra spaces after the colon.
const handWritten = `# A hand-written kubeconfig
apiVersion: "v1"
kind: 'Config'

clusters:
  # indented sequence
  - name: dev
    cluster:
      server:   https://dev.example.com:6443
      insecure-skip-tls-verify: true
  -   name: "prod"
      cluster:
        server: 'https://prod.example.com'
        tls-server-name: prod.internal
users:
- name: dev
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: gke-gcloud-auth-plugin
      args: []
      env: ~
      provideClusterInfo: false
      installHint: "Install it: see https://cloud.google.com/sdk"
- name: prod
  user:
      token: ""
contexts:
- name: dev
  context: {cluster: dev}
current-context: dev
`;

const fixed = [serverKubeconfig, kubectlViewKubeconfig];

let dir: string;
const kubectlWritten: string[] = [];

/** Runs kubectl config commands against a fresh file and returns what kubectl wrote. */
function kubectlKubeconfig(name: string, commands: string[][]): string {
  const path = join(dir, name);
  for (const args of commands)
    execFileSync('kubectl', ['config', ...args, `--kubeconfig=${path}`], { stdio: 'pipe' });
  return readFileSync(path, 'utf8');
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kubeloop-simple-yaml-'));
  const ca = join(dir, 'ca.crt');
  writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIQ\n-----END CERTIFICATE-----\n');
  kubectlWritten.push(
    kubectlKubeconfig('kinds', [
      ['set-cluster', 'c1', '--server=https://1.2.3.4:6443', '--certificate-authority=/etc/ca.crt'],
      ['set-cluster', 'c1', '--tls-server-name=c1.internal', '--proxy-url=http://proxy:3128'],
      ['set-cluster', 'c2', '--server=https://c2.example', '--insecure-skip-tls-verify=true'],
      ['set-cluster', 'c3', '--server=https://c3.example', `--certificate-authority=${ca}`, '--embed-certs'],
      ['set', 'clusters.c3.disable-compression', 'true'],
      [
        'set-credentials',
        'eks',
        '--exec-api-version=client.authentication.k8s.io/v1beta1',
        '--exec-command=aws',
        ...['eks', 'get-token', '--cluster-name', 'prod', '--region=eu-west-1'].map((a) => `--exec-arg=${a}`),
        '--exec-env=AWS_PROFILE=prod',
        '--exec-env=VERBOSE=true',
        '--exec-env=LEVEL=1',
        '--exec-interactive-mode=Never',
        '--exec-provide-cluster-info=true',
      ],
      ['set-credentials', 'oidc', '--auth-provider=oidc', '--auth-provider-arg=client-id=kube'],
      ['set-credentials', 'oidc', '--auth-provider-arg=idp-issuer-url=https://id.example/realms/k8s'],
      ['set-credentials', 'basic', '--username=bob', '--password=s3cret'],
      ['set-credentials', 'certs', '--client-certificate=/pki/a.crt', '--client-key=/pki/a.key'],
      ['set-credentials', 'bearer', '--token=eyJhbGciOiJSUzI1NiJ9.e30.c2ln'],
      ['set-context', 'dev', '--cluster=c1', '--user=eks', '--namespace=team-a'],
      ['set-context', 'n', '--cluster=c2', '--user=basic', '--namespace=n'],
      ['set-context', 'bare'],
      ['use-context', 'dev'],
      ['set', 'preferences.colors', 'true'],
    ]),
    // Values that YAML 1.1 or 1.2 would read as something else, so kubectl quotes them.
    kubectlKubeconfig('quoted', [
      ['set-cluster', 'yes', '--server=https://x'],
      [
        'set-credentials',
        'u',
        '--exec-command=/usr/local/bin/plugin',
        ...[
          '0123',
          'yes',
          'no',
          'on',
          'off',
          'true',
          'null',
          '~',
          '1e3',
          '0x10',
          '1_000',
          '+1',
          '.5',
          '12',
          '-',
        ].map((a) => `--exec-arg=${a}`),
        ...['a: b', "it's", '#x', 'a b', 'a\\b', 'x #y', '[a]', '{}', '*a', '&a', '!t', '%p', '@at'].map(
          (a) => `--exec-arg=${a}`,
        ),
        '--exec-env=EMPTY=',
        '--exec-env=SPACED=x y',
      ],
      ['set-context', 'on', '--cluster=yes', '--user=u'],
      ['use-context', 'on'],
    ]),
    kubectlKubeconfig('empty', [['set-context', 'only']]),
  );
  kubectlWritten.push(
    execFileSync('kubectl', ['config', 'view', '--raw', `--kubeconfig=${join(dir, 'kinds')}`]).toString(),
  );
  kubectlWritten.push(
    execFileSync('kubectl', [
      'config',
      'view',
      '--raw',
      '--minify',
      `--kubeconfig=${join(dir, 'kinds')}`,
    ]).toString(),
  );
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the simple YAML reader of kubeconfigs', () => {
  it('reads what kubectl, our server and kubectl view write, as yaml does', () => {
    expect(kubectlWritten.length).toBe(5);
    for (const text of [...kubectlWritten, ...fixed]) {
      expect(parseSimpleYaml(text), text).not.toBe(DECLINE);
      expect(check(text), text).toBe('same');
    }
    const kinds = parseSimpleYaml(kubectlWritten[0]!) as { users: { name: string; user: unknown }[] };
    expect(kinds.users.find((u) => u.name === 'eks')?.user).toMatchObject({
      exec: {
        args: ['eks', 'get-token', '--cluster-name', 'prod', '--region=eu-west-1'],
        provideClusterInfo: true,
      },
    });
  });

  it('reads a hand-written file with comments, quotes and odd spacing, or declines it', () => {
    expect(check(handWritten)).not.toBe('different');
    // Its one flow mapping with content is yaml's to read; without it, the reader's own.
    const noFlow = handWritten.replace('context: {cluster: dev}', 'context:\n    cluster: dev');
    expect(check(noFlow)).toBe('same');
  });

  it('reads scalars with yaml 1.2 core schema, declining what it does not read exactly', () => {
    const results: Record<string, unknown> = {};
    for (const v of [
      ...[
        'yes',
        'no',
        'on',
        'off',
        'y',
        'n',
        'True',
        'FALSE',
        'NULL',
        'Null',
        'nULL',
        'tRUE',
        '~',
        '0',
        '12',
      ],
      ...[
        '0123',
        '1_000',
        '+1',
        '-1',
        '-0',
        '.5',
        '0x10',
        '0o17',
        '0b1',
        '1e3',
        '1.0',
        '.inf',
        '-.Inf',
        '.NaN',
      ],
      ...[
        '12345678901234567890',
        '1.2.3',
        '10.0.0.1',
        '2001-12-14',
        '1:2',
        'a:b',
        '<<',
        '=',
        'a,b',
        'a]',
        'x?',
      ],
      ...[
        "'a''b'",
        '"a\\"b"',
        '"a\\nb"',
        "'#'",
        '"x: y"',
        "''",
        '""',
        'a #b',
        'a#b',
        '-',
        '--x',
        '---',
        '- x',
      ],
      ...['@x', '`x', '%x', '!x', '&a x', '*a', '|', '>', '? x', ':x', '[a]', '{a: 1}', '{}', '[]', "'"],
    ]) {
      const text = `a: ${v}\n`;
      expect(check(text), text).not.toBe('different');
      results[v] = parseSimpleYaml(text);
    }
    // yaml 1.2's strings that 1.1 read as booleans, and the forms that are exact here.
    expect(results).toMatchObject({ yes: { a: 'yes' }, off: { a: 'off' }, n: { a: 'n' }, True: { a: true } });
    expect(results).toMatchObject({ NULL: { a: null }, '~': { a: null }, '12': { a: 12 }, '10.0.0.1': {} });
    expect(results).toMatchObject({ "''": { a: '' }, '{}': { a: {} }, '[]': { a: [] }, '--x': { a: '--x' } });
    for (const v of ['0123', '1e3', '.inf', '0x10', '-0', "'a''b'", '"a\\"b"', 'a #b', '*a', '[a]']) {
      expect(results[v], v).toBe(DECLINE);
    }
  });

  it('declines duplicate keys, tabs, CRLF, BOMs, markers, anchors, tags and block scalars', () => {
    for (const text of [
      'a: 1\na: 2\n',
      'a:\n\tb: 1\n',
      'a: b\r\n',
      '\ufeffa: b\n',
      '---\na: b\n',
      'a: b\n...\n',
      '%YAML 1.2\n---\na: b\n',
      'a: &x b\nc: *x\n',
      'a: !!str 1\n',
      'a: |\n  x\n',
      'a: >\n  x\n',
      '? a\n: b\n',
      'a: b # comment\n',
      'a: b \n',
      'a: multi\n  line\n',
      'a: "multi\n  line"\n',
      '"a": b\n',
      'true: b\n',
      '- a\n',
    ]) {
      expect(parseSimpleYaml(text), JSON.stringify(text)).toBe(DECLINE);
    }
  });

  it('returns what yaml returns or declines, for thousands of mutations of the corpus', () => {
    const corpus = [kubectlWritten[1]!, serverKubeconfig, handWritten.replace('{cluster: dev}', '{}')];
    const specials = [...' \t\r\n#:-?,[]{}&*!|>\'"%@`~\\.0+_=/', '\ufeff', '\u00e4'];
    const counts = { declined: 0, same: 0, different: [] as string[] };
    const record = (text: string) => {
      const result = check(text);
      if (result === 'different') counts.different.push(text);
      else counts[result]++;
    };
    const scalars = [
      '0123',
      '1_000',
      '+1',
      '.5',
      '0x10',
      'yes',
      'no',
      'on',
      'off',
      'True',
      'NULL',
      '1e3',
      '-0',
    ];
    for (const doc of corpus) {
      // Every special character at every position.
      for (let i = 0; i <= doc.length; i++)
        for (const c of specials) record(doc.slice(0, i) + c + doc.slice(i));
      const lines = doc.split('\n');
      lines.forEach((line, i) => {
        const edit = (replacement: string[]) =>
          record([...lines.slice(0, i), ...replacement, ...lines.slice(i + 1)].join('\n'));
        // Indentation changed, the line deleted, repeated (a duplicate key), swapped with the next.
        for (const shift of [-2, -1, 1, 2, 4]) {
          edit([shift < 0 ? line.slice(-shift) : ' '.repeat(shift) + line]);
        }
        edit([]);
        edit([line, line]);
        edit([lines[i + 1] ?? '', line]);
        // Its value replaced by scalars that are not strings (or only in YAML 1.2).
        const colon = line.indexOf(': ');
        if (colon >= 0) for (const s of scalars) edit([`${line.slice(0, colon + 2)}${s}`]);
        if (line.trimStart().startsWith('- '))
          for (const s of scalars) edit([line.replace(/- .*/, `- ${s}`)]);
      });
    }
    expect(counts.different).toEqual([]);
    // Both outcomes are exercised: the reader reads many mutations and declines many others.
    expect(counts.same).toBeGreaterThan(1000);
    expect(counts.declined).toBeGreaterThan(1000);
  }, 120_000);
});
