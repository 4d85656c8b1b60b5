import { Manager, type ManagerOptions } from 'kubeloop/runtime';
import { genericDaemonController } from './controller/genericdaemon.js';
// +kubeloop:scaffold:imports

/** The project's name: prefix of its objects' names, and of its namespace (`generic-daemon-system`). */
export const NAME = 'generic-daemon';

/** The Lease of leader election (`--leader-elect`). */
export const LEADER_ELECTION_ID = 'generic-daemon.com';

/** The operator's manager, with every controller of the project. */
export function createManager(options: ManagerOptions = {}): Manager {
  const manager = new Manager({ name: NAME, ...options });
  manager.add(genericDaemonController);
  // +kubeloop:scaffold:controllers
  return manager;
}
