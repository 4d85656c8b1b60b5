import { Manager, type ManagerOptions } from 'kubeloop/runtime';
import { fooBarController } from './controller/foobar.js';
import { fooBarTaskController } from './controller/foobartask.js';
import { ExternalRegistry } from './external.js';
// +kubeloop:scaffold:imports

/** The project's name: prefix of its objects' names, and of its namespace (`foobar-system`). */
export const NAME = 'foobar';

/** The Lease of leader election (`--leader-elect`). */
export const LEADER_ELECTION_ID = 'foobar.example.com';

/**
 * The operator's manager, with every controller of the project. `registry` is the external
 * system the FooBarTasks register with (an in-memory one by default; tests pass theirs to
 * inject failures and read what it holds).
 */
export function createManager(
  options: ManagerOptions = {},
  registry: ExternalRegistry = new ExternalRegistry(),
): Manager {
  const manager = new Manager({ name: NAME, ...options });
  manager.add(fooBarController);
  manager.add(fooBarTaskController(registry));
  // +kubeloop:scaffold:controllers
  return manager;
}
