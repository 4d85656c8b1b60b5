import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const BENCHMARKS = [
  'startup',
  'create',
  'list',
  'watch',
  'crd-create',
  'informer',
  'reconcile',
] as const;
type Benchmark = (typeof BENCHMARKS)[number];

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const RERUN = 'rerun: npm run build && npm run bench';

export const { values: args } = parseArgs({
  options: {
    only: { type: 'string' },
    'no-etcd': { type: 'boolean', default: false },
    creates: { type: 'string', default: '10000' },
    clients: { type: 'string', default: '16' },
    'startup-runs': { type: 'string', default: '5' },
    'list-runs': { type: 'string', default: '10' },
    watchers: { type: 'string', default: '10' },
    events: { type: 'string', default: '500' },
    'crd-creates': { type: 'string', default: '5000' },
    'informer-sizes': { type: 'string', default: '10000' },
    'informer-runs': { type: 'string', default: '3' },
    foos: { type: 'string', default: '1000' },
    'reconcile-runs': { type: 'string', default: '3' },
    'reconcile-on-runs': { type: 'string', default: '1' },
    'cpu-prof': { type: 'string' },
    json: { type: 'string', default: join(root, 'bench/results/latest.json') },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});

if (args.help) {
  process.stdout.write(
    [
      'usage: npm run bench -- [options]',
      `  --only=${BENCHMARKS.join(',')}   run only these benchmarks (default: all)`,
      '  --no-etcd                        skip the etcd comparison',
      '  --creates=N                      objects created (and then listed) per server (default 10000)',
      '  --clients=N                      concurrent clients for creates (default 16)',
      '  --startup-runs=N                 fresh starts per server (default 5)',
      '  --list-runs=N                    full lists per server (default 10)',
      '  --watchers=N --events=N          watch streams and timed events (default 10, 500)',
      '  --crd-creates=N                  crd-create: objects of each kind (default 5000, in 2 rounds)',
      '  --informer-sizes=N,M --informer-runs=N   informer: object counts and runs (default 10000, 3)',
      '  --foos=N                         reconcile: Foos per burst (default 1000)',
      '  --reconcile-runs=N               reconcile: runs with the built-in controllers off (default 3)',
      '  --reconcile-on-runs=N            reconcile: runs with them on, for information (default 1; 0: none)',
      '  --cpu-prof=DIR                   write V8 CPU profiles of the kubeloop servers into DIR',
      '  --json=FILE                      results file (default bench/results/latest.json)',
      '',
    ].join('\n'),
  );
  process.exit(0);
}

const int = (name: string, v: string | undefined): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${v}`);
  return n;
};
export const only = new Set<Benchmark>(
  args.only
    ? args.only.split(',').map((b) => {
        if (!(BENCHMARKS as readonly string[]).includes(b)) {
          throw new Error(`--only: unknown benchmark ${JSON.stringify(b)} (known: ${BENCHMARKS.join(', ')})`);
        }
        return b as Benchmark;
      })
    : BENCHMARKS,
);
export const N = int('creates', args.creates);
export const CLIENTS = int('clients', args.clients);
export const STARTUP_RUNS = int('startup-runs', args['startup-runs']);
export const LIST_RUNS = int('list-runs', args['list-runs']);
export const WATCHERS = int('watchers', args.watchers);
export const EVENTS = int('events', args.events);
export const CRD_CREATES = int('crd-creates', args['crd-creates']);
export const INFORMER_SIZES = args['informer-sizes'].split(',').map((v) => int('informer-sizes', v));
export const INFORMER_RUNS = int('informer-runs', args['informer-runs']);
export const FOOS = int('foos', args.foos);
export const RECONCILE_RUNS = int('reconcile-runs', args['reconcile-runs']);
export const RECONCILE_ON_RUNS = Number(args['reconcile-on-runs']) || 0;
export const IDLE_MS = 2000;
export const WARMUP_CREATES = 1000;
export const cpuProfDir = args['cpu-prof'] ? resolve(args['cpu-prof']) : undefined;

export type Mode = 'memory' | 'durable' | 'etcd';
