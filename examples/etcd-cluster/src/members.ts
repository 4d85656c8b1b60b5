/**
 * The member API: what the operator calls to change an etcd cluster's membership (etcd's
 * `MemberList`, `MemberAdd`, `MemberRemove`). The pods of this example are simulated, so no
 * etcd answers; {@link InMemoryMemberApi} keeps each cluster's member list in the operator's
 * process instead. An operator for real etcd implements {@link MemberApi} with an etcd client
 * on the cluster's client Service; the orchestration does not change.
 */

/** A member of an etcd cluster. */
export interface Member {
  /** The ID etcd gave the member when it was added (hex, as etcdctl prints it). */
  readonly id: string;
  /** The member's name: its pod's, `<cluster>-<ordinal>`. */
  readonly name: string;
  /** Where its peers reach it: `http://<pod>.<headless service>.<namespace>.svc:2380`. */
  readonly peerURL: string;
}

/** Which etcd cluster: the EtcdCluster's namespace and name. */
export interface ClusterRef {
  readonly namespace: string;
  readonly name: string;
}

/** The membership operations of an etcd cluster. */
export interface MemberApi {
  /** The cluster's members, in the order they were added. */
  list(cluster: ClusterRef): Promise<Member[]>;
  /** Adds a member (before its pod starts, as `etcdctl member add`), returning it with its ID. */
  add(cluster: ClusterRef, name: string, peerURL: string): Promise<Member>;
  /** Removes the member of that ID (before its pod goes, as `etcdctl member remove`). */
  remove(cluster: ClusterRef, id: string): Promise<void>;
}

/** One membership change, as {@link InMemoryMemberApi} records it. */
export interface MemberOperation {
  readonly op: 'add' | 'remove';
  /** `namespace/name` of the cluster. */
  readonly cluster: string;
  readonly member: string;
  readonly id: string;
}

/**
 * The member API of simulated clusters: the member lists live in this process. It refuses what
 * etcd refuses (a duplicate name, removing an unknown ID) and records every change, so tests can
 * read how the operator changed the membership.
 */
export class InMemoryMemberApi implements MemberApi {
  private readonly clusters = new Map<string, Member[]>();
  private nextId = 1;
  /** Every change made, oldest first. */
  readonly history: MemberOperation[] = [];

  async list(cluster: ClusterRef): Promise<Member[]> {
    return [...(this.clusters.get(key(cluster)) ?? [])];
  }

  async add(cluster: ClusterRef, name: string, peerURL: string): Promise<Member> {
    const members = this.clusters.get(key(cluster)) ?? [];
    if (members.some((m) => m.name === name)) throw new Error(`member ${name} already exists`);
    // etcd's IDs are random 64-bit numbers; a counter keeps the fake's deterministic.
    const member = { id: (this.nextId++).toString(16).padStart(16, '0'), name, peerURL };
    this.clusters.set(key(cluster), [...members, member]);
    this.history.push({ op: 'add', cluster: key(cluster), member: name, id: member.id });
    return member;
  }

  async remove(cluster: ClusterRef, id: string): Promise<void> {
    const members = this.clusters.get(key(cluster)) ?? [];
    const member = members.find((m) => m.id === id);
    if (!member) throw new Error(`member ${id} not found`);
    this.clusters.set(
      key(cluster),
      members.filter((m) => m.id !== id),
    );
    this.history.push({ op: 'remove', cluster: key(cluster), member: member.name, id });
  }
}

const key = (c: ClusterRef) => `${c.namespace}/${c.name}`;
