import { Manager, type ManagerOptions } from 'kubeloop/runtime';
import { etcdClusterController } from './controller/etcdcluster.js';
import { InMemoryMemberApi, type MemberApi } from './members.js';
// +kubeloop:scaffold:imports

/** The project's name: prefix of its objects' names, and of its namespace (`etcd-cluster-system`). */
export const NAME = 'etcd-cluster';

/** The Lease of leader election (`--leader-elect`). */
export const LEADER_ELECTION_ID = 'etcd-cluster.cloud.io';

/** The manager's options, and the member API its controller changes memberships through. */
export interface EtcdManagerOptions extends ManagerOptions {
  /** The etcd member API (default: an in-process one, as the example's pods are simulated). */
  members?: MemberApi;
}

/** The operator's manager, with every controller of the project. */
export function createManager(options: EtcdManagerOptions = {}): Manager {
  const { members = new InMemoryMemberApi(), ...rest } = options;
  const manager = new Manager({ name: NAME, ...rest });
  manager.add(etcdClusterController(members));
  // +kubeloop:scaffold:controllers
  return manager;
}
