import { Pod, PodDisruptionBudget, Service, StatefulSet } from 'kubeloop/client';
import { type ControllerDefinition, controller, setCondition, writeStatus } from 'kubeloop/runtime';
import { EtcdCluster, type MemberStatus } from '../api/etcd/v1alpha1/etcdcluster.js';
import type { Member, MemberApi } from '../members.js';
import {
  CLUSTER_LABEL,
  clientService,
  disruptionBudget,
  memberName,
  peerService,
  peerURL,
  podLabels,
  quorum,
  statefulSet,
} from './children.js';

type Phase = NonNullable<NonNullable<EtcdCluster['status']>['phase']>;

const ordinal = (m: { name: string }) => Number(m.name.slice(m.name.lastIndexOf('-') + 1));
const isReady = (pod: Pod) =>
  !pod.metadata?.deletionTimestamp &&
  (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/**
 * Reconciles EtcdClusters as etcd-operator does, through `members` (the etcd cluster's member
 * API): it keeps the StatefulSet, its Services and its PodDisruptionBudget, and changes the
 * membership one member at a time — a member is added (then its pod started) or removed (then its
 * pod stopped) only when every current member is ready, so the cluster never loses its majority
 * to its own scaling. A member whose pod was recreated (a new pod UID under the same name) lost
 * its data, so it is removed and added again, as etcd-operator replaces a dead member.
 *
 * Pods are watched (they belong to the StatefulSet, not to the EtcdCluster) through their
 * cluster label, so a pod becoming ready or going away reconciles its cluster.
 */
export function etcdClusterController(members: MemberApi): ControllerDefinition<EtcdCluster> {
  return controller(EtcdCluster)
    .owns(StatefulSet)
    .owns(Service)
    .owns(PodDisruptionBudget)
    .watches(Pod, (pod) => {
      const name = pod.metadata?.labels?.[CLUSTER_LABEL];
      return name ? [{ namespace: pod.metadata?.namespace ?? 'default', name }] : [];
    })
    .reconcile(async (cluster, { client, cache, events, log }) => {
      const namespace = cluster.metadata?.namespace ?? 'default';
      const name = cluster.metadata?.name ?? '';
      const ref = { namespace, name };
      const size = cluster.spec.size;

      for (const svc of [peerService(cluster), clientService(cluster)])
        if (!(await cache.get(Service, svc.metadata?.name ?? '', namespace))) await client.create(svc);

      // A new cluster starts from one member, its seed; the others join it one by one.
      let current = (await members.list(ref)).sort((a, b) => ordinal(a) - ordinal(b));
      if (current.length === 0) {
        const seed = await members.add(ref, memberName(cluster, 0), peerURL(cluster, memberName(cluster, 0)));
        events.normal('MemberAdded', `Added member ${seed.name} (${seed.id}), the seed of the cluster`);
        current = [seed];
      }

      const pods = new Map(
        (await cache.list(Pod, { namespace, labelSelector: podLabels(cluster) })).map((p) => [
          p.metadata?.name,
          p,
        ]),
      );
      const recorded = new Map((cluster.status?.members ?? []).map((m) => [m.name, m]));
      const seen: MemberStatus[] = [];
      let ready = 0;
      let recovering = false;
      for (const member of current) {
        const pod = pods.get(member.name);
        const before = recorded.get(member.name);
        const lastUID = before?.id === member.id ? before.podUID : undefined;
        if (!pod || !isReady(pod)) {
          // A member whose pod once ran and is gone or not ready now is being recovered.
          if (lastUID) recovering = true;
          seen.push({ name: member.name, id: member.id, ...(lastUID && { podUID: lastUID }) });
          continue;
        }
        let live: Member = member;
        if (lastUID && lastUID !== pod.metadata?.uid) {
          // The StatefulSet recreated the pod: its data went with the old one, so the member it was
          // cannot come back. Replace it by a fresh member of the same name (its peers forget the old ID).
          await members.remove(ref, member.id);
          live = await members.add(ref, member.name, peerURL(cluster, member.name));
          events.normal(
            'MemberReplaced',
            `Replaced member ${member.name} (${member.id} → ${live.id}): its pod was recreated`,
          );
          log.info({ member: member.name, old: member.id, id: live.id }, 'replaced member');
        }
        seen.push({ name: live.name, id: live.id, podUID: pod.metadata?.uid ?? '' });
        ready++;
      }

      // One membership change at a time, only with every member ready.
      let phase: Phase;
      let target = current.length;
      if (ready < current.length) {
        phase = recovering
          ? 'Recovering'
          : cluster.status?.phase === 'Running' || cluster.status?.phase === 'Scaling'
            ? 'Scaling'
            : 'Creating';
      } else if ([...pods.keys()].some((pod) => !current.some((m) => m.name === pod))) {
        // The pod of a removed member is still there (stopping): the last change is not done yet.
        phase = 'Scaling';
      } else if (current.length < size) {
        const next = memberName(cluster, current.length);
        const added = await members.add(ref, next, peerURL(cluster, next));
        events.normal(
          'MemberAdded',
          `Added member ${added.name} (${added.id}): ${current.length + 1} of ${size}`,
        );
        seen.push({ name: added.name, id: added.id });
        target = current.length + 1;
        phase =
          cluster.status?.phase === 'Running' || cluster.status?.phase === 'Scaling' ? 'Scaling' : 'Creating';
      } else if (current.length > size) {
        const last = seen[seen.length - 1] as MemberStatus;
        await members.remove(ref, last.id);
        events.normal(
          'MemberRemoved',
          `Removed member ${last.name} (${last.id}): ${current.length - 1} members, ${size} asked`,
        );
        seen.pop();
        ready--;
        target = current.length - 1;
        phase = 'Scaling';
      } else {
        phase = 'Running';
      }

      // The StatefulSet follows the membership: its pods are the members.
      const sts = await cache.get(StatefulSet, name, namespace);
      if (!sts) await client.create(statefulSet(cluster, target));
      else if (sts.spec?.replicas !== target) {
        // A merge patch of the replicas alone: the StatefulSet's controller writes its status all
        // along, and an update of a cached copy would conflict with those writes.
        await client.patch(sts, { spec: { replicas: target } });
        log.info({ replicas: target }, 'scaled StatefulSet');
      }
      const pdb = await cache.get(PodDisruptionBudget, name, namespace);
      const wanted = disruptionBudget(cluster, target);
      if (!pdb) await client.create(wanted);
      else if (pdb.spec?.minAvailable !== wanted.spec?.minAvailable)
        await client.patch(pdb, { spec: { minAvailable: wanted.spec?.minAvailable } });

      const generation = cluster.metadata?.generation;
      let conditions = setCondition(cluster.status?.conditions, {
        type: 'Available',
        status: ready >= quorum(target) ? 'True' : 'False',
        reason: ready >= quorum(target) ? 'QuorumReady' : 'NoQuorum',
        message: `${ready} of ${target} members ready`,
        observedGeneration: generation,
      });
      conditions = setCondition(conditions, {
        type: 'Progressing',
        status: phase === 'Running' ? 'False' : 'True',
        reason: phase,
        message: phase === 'Running' ? `${target} members, as asked` : `${target} members, ${size} asked`,
        observedGeneration: generation,
      });
      const { changed } = await writeStatus(client, cluster, {
        phase,
        size: target,
        readyMembers: ready,
        selector: Object.entries(podLabels(cluster))
          .map(([k, v]) => `${k}=${v}`)
          .join(','),
        members: seen,
        observedGeneration: generation,
        conditions,
      });
      if (changed) log.info({ phase, size: target, ready }, 'updated status');
      return undefined;
    });
}
