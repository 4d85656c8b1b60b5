/**
 * The command-line flags of a kubebuilder manager (`cmd/main.go`), parsed once here so that an
 * operator's entry point is `new Manager({ ...managerFlags(process.argv.slice(2), { … }) })` and
 * the Deployment `kubeloop generate` writes (`--leader-elect`, `--metrics-bind-address=:8080`,
 * `--health-probe-bind-address=:8081`) is understood by every operator alike.
 */
import type { ManagerOptions } from './manager.js';

/** What {@link parseManagerFlags} read, before it becomes {@link ManagerOptions}. */
export interface ManagerFlags {
  /** `--leader-elect[=true|false]`: take part in leader election (default false, as kubebuilder). */
  leaderElect: boolean;
  /** `--leader-election-namespace`: the Lease's namespace (default: the client's namespace). */
  leaderElectionNamespace?: string;
  /** `--metrics-bind-address`: address of `/metrics`; `0` turns it off (default `:8080`). */
  metricsBindAddress: string | false;
  /** `--health-probe-bind-address`: address of `/healthz` and `/readyz`; `0` turns them off (default `:8081`). */
  healthProbeBindAddress: string | false;
  /** `--max-concurrent-reconciles`: workers of each controller that sets none (default: the manager's, 1). */
  maxConcurrentReconciles?: number;
  /** The arguments that are not manager flags (only when `allowUnknown` is set; otherwise they throw). */
  rest: string[];
}

/** Options of {@link parseManagerFlags} and {@link managerFlags}. */
export interface ManagerFlagsOptions {
  /**
   * The Lease's name when `--leader-elect` is given (kubebuilder's `<hash>.<domain>`; e.g.
   * `foo-operator.example.com`).
   */
  leaderElectionId?: string;
  /** Defaults other than kubebuilder's. */
  defaults?: Partial<Omit<ManagerFlags, 'rest'>>;
  /** Keep unknown arguments in `rest` instead of throwing (for operators with flags of their own). */
  allowUnknown?: boolean;
}

/** The usage text of the manager flags, as `--help` prints it. */
export const MANAGER_FLAGS_USAGE = `Flags:
  --leader-elect[=true|false]            take part in leader election: one replica reconciles at a time (default false)
  --leader-election-namespace <ns>       namespace of the leader election Lease (default: the client's namespace)
  --metrics-bind-address <addr>          address of /metrics, e.g. :8080; 0 turns it off (default :8080)
  --health-probe-bind-address <addr>     address of /healthz and /readyz; 0 turns them off (default :8081)
  --max-concurrent-reconciles <n>        reconciles running at once in each controller (default 1)
  -h, --help                             print this help
`;

/** A command-line flag the manager does not know, or a value it cannot use. */
export class ManagerFlagsError extends Error {
  override readonly name = 'ManagerFlagsError';
}

const BOOLEAN = new Map([
  ['true', true],
  ['false', false],
  ['1', true],
  ['0', false],
]);

/**
 * Parses kubebuilder's manager flags, as Go's `flag` package reads them: `--name=value`,
 * `--name value`, one or two dashes, and `--leader-elect` alone for true.
 *
 * @throws {@link ManagerFlagsError} on an unknown flag (unless `allowUnknown`) or a bad value.
 *
 * @example
 * ```ts
 * parseManagerFlags(['--leader-elect', '--metrics-bind-address=:9090', '--health-probe-bind-address', '0']);
 * // { leaderElect: true, metricsBindAddress: ':9090', healthProbeBindAddress: false, rest: [] }
 * ```
 */
export function parseManagerFlags(argv: readonly string[], options: ManagerFlagsOptions = {}): ManagerFlags {
  const flags: ManagerFlags = {
    leaderElect: false,
    metricsBindAddress: ':8080',
    healthProbeBindAddress: ':8081',
    ...options.defaults,
    rest: [],
  };
  const address = (v: string) => (v === '0' ? false : v);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = (eq < 0 ? arg : arg.slice(0, eq)).replace(/^--?/, '');
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    const value = (): string => {
      if (inline !== undefined) return inline;
      const next = argv[i + 1];
      if (next === undefined) throw new ManagerFlagsError(`flag needs an argument: ${arg}`);
      i++;
      return next;
    };
    if (!arg.startsWith('-') || arg === '-' || arg === '--') {
      if (!options.allowUnknown) throw new ManagerFlagsError(`unexpected argument ${JSON.stringify(arg)}`);
      flags.rest.push(arg);
      continue;
    }
    switch (name) {
      case 'leader-elect': {
        const b = inline === undefined ? true : BOOLEAN.get(inline);
        if (b === undefined)
          throw new ManagerFlagsError(`invalid boolean value ${JSON.stringify(inline)} for --leader-elect`);
        flags.leaderElect = b;
        break;
      }
      case 'leader-election-namespace':
        flags.leaderElectionNamespace = value();
        break;
      case 'metrics-bind-address':
        flags.metricsBindAddress = address(value());
        break;
      case 'health-probe-bind-address':
        flags.healthProbeBindAddress = address(value());
        break;
      case 'max-concurrent-reconciles': {
        const v = value();
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1)
          throw new ManagerFlagsError(
            `--max-concurrent-reconciles must be a positive integer, got ${JSON.stringify(v)}`,
          );
        flags.maxConcurrentReconciles = n;
        break;
      }
      default:
        if (!options.allowUnknown)
          throw new ManagerFlagsError(`unknown flag ${JSON.stringify(arg)}\n${MANAGER_FLAGS_USAGE}`);
        flags.rest.push(arg);
    }
  }
  return flags;
}

/**
 * The {@link ManagerOptions} that kubebuilder's flags set: spread them into a Manager's options.
 * `--help` prints {@link MANAGER_FLAGS_USAGE} and exits 0; an unknown flag prints the error and
 * the usage and exits 2, as a Go manager does.
 *
 * @example
 * ```ts
 * import { Manager, managerFlags } from 'kubeloop/runtime';
 *
 * await new Manager({
 *   name: 'foo-operator',
 *   ...managerFlags(process.argv.slice(2), { leaderElectionId: 'foo-operator.example.com' }),
 * }).add(fooController).start();
 * ```
 */
export function managerFlags(
  argv: readonly string[],
  options: ManagerFlagsOptions = {},
): Pick<
  ManagerOptions,
  'leaderElection' | 'metricsAddress' | 'healthProbeAddress' | 'maxConcurrentReconciles'
> {
  if (argv.includes('-h') || argv.includes('--help') || argv.includes('-help')) {
    process.stdout.write(MANAGER_FLAGS_USAGE);
    process.exit(0);
  }
  let flags: ManagerFlags;
  try {
    flags = parseManagerFlags(argv, options);
  } catch (err) {
    if (!(err instanceof ManagerFlagsError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  return managerOptionsFromFlags(flags, options);
}

/** {@link ManagerFlags} as {@link ManagerOptions}. */
export function managerOptionsFromFlags(
  flags: ManagerFlags,
  options: Pick<ManagerFlagsOptions, 'leaderElectionId'> = {},
): Pick<
  ManagerOptions,
  'leaderElection' | 'metricsAddress' | 'healthProbeAddress' | 'maxConcurrentReconciles'
> {
  if (flags.leaderElect && !options.leaderElectionId)
    throw new ManagerFlagsError('--leader-elect needs a leader election id (the leaderElectionId option)');
  return {
    metricsAddress: flags.metricsBindAddress,
    healthProbeAddress: flags.healthProbeBindAddress,
    ...(flags.leaderElect && {
      leaderElection: {
        id: options.leaderElectionId ?? '',
        ...(flags.leaderElectionNamespace !== undefined && { namespace: flags.leaderElectionNamespace }),
      },
    }),
    ...(flags.maxConcurrentReconciles !== undefined && {
      maxConcurrentReconciles: flags.maxConcurrentReconciles,
    }),
  };
}
