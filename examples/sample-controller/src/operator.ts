import { Manager, type ManagerOptions } from 'kubeloop/runtime';
import { fooController } from './controller/foo.js';

/** The Lease of leader election (`--leader-elect`), as kubebuilder names it: `<name>.<domain>`. */
export const LEADER_ELECTION_ID = 'sample-controller.samplecontroller.k8s.io';

/** The operator's manager: every controller of the project, added to one Manager. */
export function createManager(options: ManagerOptions = {}): Manager {
  return new Manager({ name: 'sample-controller', ...options }).add(fooController);
}
