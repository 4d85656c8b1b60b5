import { Manager, type ManagerOptions } from 'kubeloop/runtime';
import { fooController } from './controller/foo.js';

/** The operator's manager: every controller of the project, added to one Manager. */
export function createManager(options: ManagerOptions = {}): Manager {
  return new Manager({ name: 'sample-controller', ...options }).add(fooController);
}

/** The command-line flags of kubebuilder's managers, which the generated Deployment passes. */
export interface Flags {
  leaderElect: boolean;
  metricsBindAddress: string | false;
  healthProbeBindAddress: string | false;
}

/** Parses `--leader-elect`, `--metrics-bind-address=<addr>`, `--health-probe-bind-address=<addr>` (`0` turns one off). */
export function parseFlags(argv: readonly string[]): Flags {
  const flags: Flags = { leaderElect: false, metricsBindAddress: ':8080', healthProbeBindAddress: ':8081' };
  const address = (v: string) => (v === '0' ? false : v);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg : arg.slice(0, eq);
    const value = () => (eq < 0 ? (argv[++i] ?? '') : arg.slice(eq + 1));
    if (name === '--leader-elect') flags.leaderElect = eq < 0 || arg.slice(eq + 1) !== 'false';
    else if (name === '--metrics-bind-address') flags.metricsBindAddress = address(value());
    else if (name === '--health-probe-bind-address') flags.healthProbeBindAddress = address(value());
    else throw new Error(`unknown flag ${JSON.stringify(arg)}`);
  }
  return flags;
}
