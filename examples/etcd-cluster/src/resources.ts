import type { KubeObject } from 'kubeloop/client';
import type { CrdSource } from 'kubeloop/manifests';
import { EtcdCluster, etcdClusterSample } from './api/etcd/v1alpha1/etcdcluster.js';
// +kubeloop:scaffold:imports

/** The kinds the project defines, each with the example `config/samples` gets. */
export const resources: Array<{ resource: CrdSource; sample?: KubeObject }> = [
  { resource: EtcdCluster, sample: etcdClusterSample },
  // +kubeloop:scaffold:resources
];
