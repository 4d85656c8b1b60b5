import { Manager, type ManagerOptions } from 'kubeloop/runtime';
import { homeController } from './controller/home.js';
// +kubeloop:scaffold:imports

/** The project's name: prefix of its objects' names, and of its namespace (`home-system`). */
export const NAME = 'home';

/** The Lease of leader election (`--leader-elect`). */
export const LEADER_ELECTION_ID = 'home.my.domain';

/** The operator's manager, with every controller of the project. */
export function createManager(options: ManagerOptions = {}): Manager {
  const manager = new Manager({ name: NAME, ...options });
  manager.add(homeController);
  // +kubeloop:scaffold:controllers
  return manager;
}
