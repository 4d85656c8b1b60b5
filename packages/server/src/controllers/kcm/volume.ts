/**
 * The persistent volume controller of kube-controller-manager (`pkg/controller/volume/persistentvolume`)
 * and a simulated provisioner:
 * - a pending claim binds to the smallest Available volume of its class whose access modes and
 *   capacity suffice (or to a volume pre-bound to it); both turn `Bound`;
 * - a claim of a class whose provisioner is {@link LOCAL_PROVISIONER} gets a volume made for it
 *   (dynamic provisioning), at once or, for `WaitForFirstConsumer`, once a pod using it is scheduled;
 * - a volume whose claim is gone is `Released`, then deleted (`Delete`), kept (`Retain`) or made
 *   Available again (`Recycle`).
 */

import { milli } from 'kubeloop/api';
import {
  isAlreadyExists,
  isNotFound,
  type KubeObject,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  StorageClass,
} from 'kubeloop/client';
import { type ControllerDefinition, controller, type EventRecorder } from 'kubeloop/runtime';
import { modify } from '../status-write.js';

/** The simulated provisioner of the `standard` StorageClass (kind's `rancher.io/local-path`, minikube's hostpath). */
export const LOCAL_PROVISIONER = 'kubeloop.dev/local';

/** The default StorageClass the control plane starts with, as kind and minikube install one. */
export const STANDARD_STORAGE_CLASS: StorageClass = {
  metadata: {
    name: 'standard',
    annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
  },
  provisioner: LOCAL_PROVISIONER,
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'Immediate',
};

const BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
const BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
const PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
const SELECTED_NODE = 'volume.kubernetes.io/selected-node';
const PROVISIONER_ANNOTATIONS = [
  'volume.beta.kubernetes.io/storage-provisioner',
  'volume.kubernetes.io/storage-provisioner',
];

const metaTime = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const className = (o: { spec?: { storageClassName?: string } }) => o.spec?.storageClassName ?? '';

/** Whether `pv` can serve `claim` (kube's `FindMatchingVolume`, without node affinity). */
function matches(pv: PersistentVolume, claim: PersistentVolumeClaim): boolean {
  if (className(pv) !== className(claim)) return false;
  if ((pv.spec?.volumeMode ?? 'Filesystem') !== (claim.spec?.volumeMode ?? 'Filesystem')) return false;
  const modes = new Set(pv.spec?.accessModes ?? []);
  if (!(claim.spec?.accessModes ?? []).every((m) => modes.has(m))) return false;
  const want = milli(claim.spec?.resources?.requests?.storage) ?? 0;
  const have = milli(pv.spec?.capacity?.storage) ?? 0;
  if (have < want) return false;
  const sel = claim.spec?.selector?.matchLabels ?? {};
  return Object.entries(sel).every(([k, v]) => pv.metadata?.labels?.[k] === v);
}

/** Options of the volume controllers. */
export interface VolumeControllerOptions {
  /** Events, reported by `persistentvolume-controller` and the provisioner. */
  events: EventRecorder;
  provisionerEvents: EventRecorder;
}

/** The claim side of the persistent volume controller (`persistentvolume-binder`), with the simulated provisioner. */
export function claimBinderController(
  o: VolumeControllerOptions,
): ControllerDefinition<PersistentVolumeClaim> {
  const on = (claim: PersistentVolumeClaim): KubeObject => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: claim.metadata ?? {},
  });
  return controller(PersistentVolumeClaim)
    .named('persistentvolume-binder')
    .watches(PersistentVolume, (pv) => {
      const ref = pv.spec?.claimRef;
      return ref?.name ? [{ namespace: ref.namespace ?? '', name: ref.name }] : [];
    })
    .watches(Pod, (p) =>
      (p.spec?.volumes ?? []).flatMap((v) =>
        v.persistentVolumeClaim
          ? [{ namespace: p.metadata?.namespace ?? '', name: v.persistentVolumeClaim.claimName }]
          : [],
      ),
    )
    .reconcile(async (claim, { client, cache }) => {
      if (claim.metadata?.deletionTimestamp) return;
      const ns = claim.metadata?.namespace ?? '';
      const name = claim.metadata?.name ?? '';
      const uid = claim.metadata?.uid ?? '';
      const claims = client.api(PersistentVolumeClaim, ns);
      const volumes = await cache.list(PersistentVolume);
      const event = (type: 'Normal' | 'Warning', reason: string, note: string) =>
        o.events.event(on(claim), type, reason, note);

      const bind = async (pv: PersistentVolume, byController: boolean) => {
        const pvName = pv.metadata?.name ?? '';
        if (!pv.spec?.claimRef?.uid) {
          await modify<PersistentVolume>(client.api(PersistentVolume), pvName, (v) => {
            if (byController)
              v.metadata = {
                ...v.metadata,
                annotations: { ...v.metadata?.annotations, [BOUND_BY_CONTROLLER]: 'yes' },
              };
            v.spec = {
              ...v.spec,
              claimRef: {
                kind: 'PersistentVolumeClaim',
                namespace: ns,
                name,
                uid,
                apiVersion: 'v1',
                resourceVersion: claim.metadata?.resourceVersion ?? '',
              },
            };
          });
        }
        if (pv.status?.phase !== 'Bound')
          await modify<PersistentVolume>(
            client.api(PersistentVolume),
            pvName,
            (v) => {
              v.status = { ...v.status, phase: 'Bound', lastPhaseTransitionTime: metaTime() };
            },
            { status: true },
          );
        if (claim.spec?.volumeName !== pvName || claim.metadata?.annotations?.[BIND_COMPLETED] !== 'yes')
          await modify<PersistentVolumeClaim>(claims, name, (c) => {
            c.metadata = {
              ...c.metadata,
              annotations: {
                ...c.metadata?.annotations,
                [BIND_COMPLETED]: 'yes',
                ...(byController && { [BOUND_BY_CONTROLLER]: 'yes' }),
              },
            };
            c.spec = { ...c.spec, volumeName: pvName };
          });
        if (claim.status?.phase !== 'Bound')
          await modify<PersistentVolumeClaim>(
            claims,
            name,
            (c) => {
              c.status = {
                ...c.status,
                phase: 'Bound',
                accessModes: pv.spec?.accessModes ?? [],
                capacity: pv.spec?.capacity ?? {},
              };
            },
            { status: true },
          );
      };

      const volumeName = claim.spec?.volumeName;
      if (volumeName) {
        const pv = volumes.find((v) => v.metadata?.name === volumeName);
        if (!pv) {
          if (claim.status?.phase === 'Bound') {
            event(
              'Warning',
              'ClaimLost',
              'Bound claim has lost its PersistentVolume. Data on the volume is lost!',
            );
            await modify<PersistentVolumeClaim>(
              claims,
              name,
              (c) => {
                c.status = { ...c.status, phase: 'Lost' };
              },
              { status: true },
            );
          }
          return;
        }
        const ref = pv.spec?.claimRef;
        if (ref?.uid && ref.uid !== uid) {
          event('Warning', 'FailedBinding', `volume "${volumeName}" already bound to a different claim.`);
          return;
        }
        await bind(pv, false);
        return;
      }

      // A volume pre-bound to this claim wins; then the smallest that fits.
      const prebound = volumes.find(
        (v) =>
          v.spec?.claimRef?.name === name &&
          v.spec.claimRef.namespace === ns &&
          (!v.spec.claimRef.uid || v.spec.claimRef.uid === uid) &&
          v.status?.phase !== 'Released',
      );
      const candidates = volumes
        .filter((v) => !v.spec?.claimRef && v.status?.phase === 'Available' && !v.metadata?.deletionTimestamp)
        .filter((v) => matches(v, claim))
        .sort((a, b) => (milli(a.spec?.capacity?.storage) ?? 0) - (milli(b.spec?.capacity?.storage) ?? 0));
      const chosen = prebound ?? candidates[0];
      const cls = className(claim) ? await cache.get(StorageClass, className(claim)) : undefined;
      if (chosen && (cls?.volumeBindingMode !== 'WaitForFirstConsumer' || prebound)) {
        await bind(chosen, !prebound);
        return;
      }
      if (!cls) {
        event(
          'Normal',
          'FailedBinding',
          className(claim)
            ? `storageclass.storage.k8s.io "${className(claim)}" not found`
            : 'no persistent volumes available for this claim and no storage class is set',
        );
        return;
      }
      let annotations = claim.metadata?.annotations ?? {};
      if (cls.volumeBindingMode === 'WaitForFirstConsumer' && !annotations[SELECTED_NODE]) {
        // The scheduler names the node of the first pod that uses the claim.
        const consumer = (await cache.list(Pod, { namespace: ns })).find(
          (p) =>
            p.spec?.nodeName &&
            !p.metadata?.deletionTimestamp &&
            (p.spec.volumes ?? []).some((v) => v.persistentVolumeClaim?.claimName === name),
        );
        if (!consumer) {
          event('Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding');
          return;
        }
        annotations = { ...annotations, [SELECTED_NODE]: consumer.spec?.nodeName ?? '' };
        await modify<PersistentVolumeClaim>(claims, name, (c) => {
          c.metadata = {
            ...c.metadata,
            annotations: { ...c.metadata?.annotations, [SELECTED_NODE]: consumer.spec?.nodeName ?? '' },
          };
        });
      }
      if (chosen) {
        await bind(chosen, true);
        return;
      }
      const provisioner = cls.provisioner;
      if (PROVISIONER_ANNOTATIONS.some((a) => annotations[a] !== provisioner)) {
        await modify<PersistentVolumeClaim>(claims, name, (c) => {
          c.metadata = {
            ...c.metadata,
            annotations: {
              ...c.metadata?.annotations,
              ...Object.fromEntries(PROVISIONER_ANNOTATIONS.map((a) => [a, provisioner])),
            },
          };
        });
        event(
          'Normal',
          'ExternalProvisioning',
          `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
        );
      }
      if (provisioner !== LOCAL_PROVISIONER) return;
      // The simulated provisioner: a volume named for the claim, pre-bound to it.
      const pvName = `pvc-${uid}`;
      if (volumes.some((v) => v.metadata?.name === pvName)) return;
      o.provisionerEvents.event(
        on(claim),
        'Normal',
        'Provisioning',
        `External provisioner is provisioning volume for claim "${ns}/${name}"`,
      );
      try {
        await client.api(PersistentVolume).create({
          metadata: { name: pvName, annotations: { [PROVISIONED_BY]: provisioner } },
          spec: {
            capacity: { storage: claim.spec?.resources?.requests?.storage ?? '0' },
            accessModes: claim.spec?.accessModes ?? ['ReadWriteOnce'],
            persistentVolumeReclaimPolicy: cls.reclaimPolicy ?? 'Delete',
            storageClassName: className(claim),
            volumeMode: claim.spec?.volumeMode ?? 'Filesystem',
            hostPath: {
              path: `/var/lib/kubeloop/volumes/${ns}_${name}_${pvName}`,
              type: 'DirectoryOrCreate',
            },
            claimRef: {
              kind: 'PersistentVolumeClaim',
              namespace: ns,
              name,
              uid,
              apiVersion: 'v1',
              resourceVersion: claim.metadata?.resourceVersion ?? '',
            },
            ...(annotations[SELECTED_NODE] && {
              nodeAffinity: {
                required: {
                  nodeSelectorTerms: [
                    {
                      matchExpressions: [
                        {
                          key: 'kubernetes.io/hostname',
                          operator: 'In',
                          values: [annotations[SELECTED_NODE] ?? ''],
                        },
                      ],
                    },
                  ],
                },
              },
            }),
          },
        });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      o.provisionerEvents.event(
        on(claim),
        'Normal',
        'ProvisioningSucceeded',
        `Successfully provisioned volume ${pvName}`,
      );
    });
}

/** The volume side of the persistent volume controller: phases, release and reclaim. */
export function volumeReclaimController(o: VolumeControllerOptions): ControllerDefinition<PersistentVolume> {
  return controller(PersistentVolume)
    .named('persistentvolume-reclaimer')
    .watches(PersistentVolumeClaim, (c) =>
      c.spec?.volumeName ? [{ namespace: '', name: c.spec.volumeName }] : [],
    )
    .reconcile(async (pv, { client, cache }) => {
      if (pv.metadata?.deletionTimestamp) return;
      const name = pv.metadata?.name ?? '';
      const volumes = client.api(PersistentVolume);
      const phase = async (p: 'Available' | 'Bound' | 'Released') => {
        if (pv.status?.phase !== p)
          await modify<PersistentVolume>(
            volumes,
            name,
            (v) => {
              v.status = { ...v.status, phase: p, lastPhaseTransitionTime: metaTime() };
            },
            { status: true },
          );
      };
      const ref = pv.spec?.claimRef;
      if (!ref?.name) {
        await phase('Available');
        return;
      }
      const claim = await cache.get(PersistentVolumeClaim, ref.name, ref.namespace ?? '');
      if (claim && (!ref.uid || claim.metadata?.uid === ref.uid)) {
        // Bound once the claim points back; until then the claim's binder finishes the job.
        if (claim.spec?.volumeName === name) await phase('Bound');
        else if (!ref.uid) await phase('Available');
        return;
      }
      if (!ref.uid) {
        await phase('Available');
        return;
      }
      // The claim is gone: release, then reclaim.
      let live = claim;
      if (!live) {
        try {
          live = await client.api(PersistentVolumeClaim, ref.namespace ?? '').get(ref.name);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
      if (live && live.metadata?.uid === ref.uid) return;
      await phase('Released');
      const policy = pv.spec?.persistentVolumeReclaimPolicy ?? 'Retain';
      const regarding: KubeObject = {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: pv.metadata ?? {},
      };
      if (policy === 'Delete') {
        try {
          await volumes.delete(name);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      } else if (policy === 'Recycle') {
        await modify<PersistentVolume>(volumes, name, (v) => {
          if (v.spec) delete v.spec.claimRef;
        });
        await modify<PersistentVolume>(
          volumes,
          name,
          (v) => {
            v.status = { ...v.status, phase: 'Available', lastPhaseTransitionTime: metaTime() };
          },
          { status: true },
        );
        o.events.event(regarding, 'Normal', 'RecyclerPod', 'Recycler pod: Successfully assigned the volume');
      }
    });
}
