"""apps/v1 kinds through AppsV1Api: CRUD with server-side defaults, the patch types on nested
lists, the status and scale subresources, and deletion with a propagation policy."""

from common import NS, api_client, check, eq, eventually, failure, gone, run, status_of
from kubernetes import client


def deployment(name, replicas=1, containers=None):
    labels = {"app": name}
    return client.V1Deployment(
        metadata=client.V1ObjectMeta(name=name, labels={"suite": "python"}),
        spec=client.V1DeploymentSpec(
            replicas=replicas,
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(
                    containers=containers or [client.V1Container(name="app", image="nginx:1.27")]
                ),
            ),
        ),
    )


def deployment_crud():
    apps = client.AppsV1Api()
    created = apps.create_namespaced_deployment(
        NS,
        deployment(
            "py-deploy",
            containers=[
                client.V1Container(name="app", image="nginx:1.27"),
                client.V1Container(name="sidecar", image="busybox:1.36", command=["sleep", "inf"]),
            ],
        ),
    )
    eq(created.metadata.generation, 1, "generation of a new Deployment")
    eq(created.spec.strategy.type, "RollingUpdate", "the default strategy")
    eq(created.spec.strategy.rolling_update.max_surge, "25%", "the default maxSurge (int-or-string)")
    eq(created.spec.revision_history_limit, 10, "the default revisionHistoryLimit")
    eq(created.spec.progress_deadline_seconds, 600, "the default progressDeadlineSeconds")
    c = created.spec.template.spec.containers[0]
    eq(c.termination_message_path, "/dev/termination-log", "container defaults")
    eq(created.spec.template.spec.dns_policy, "ClusterFirst", "pod template defaults")

    got = apps.list_deployment_for_all_namespaces(label_selector="suite=python")
    eq([d.metadata.name for d in got.items], ["py-deploy"], "a label selector across namespaces")
    got = apps.list_namespaced_deployment(NS, field_selector="metadata.name=py-deploy")
    eq(len(got.items), 1, "a field selector")

    read = apps.read_namespaced_deployment("py-deploy", NS)
    read.spec.replicas = 3
    replaced = apps.replace_namespaced_deployment("py-deploy", NS, read)
    eq(replaced.spec.replicas, 3, "replicas after a replace")
    eq(replaced.metadata.generation, 2, "a spec change moves the generation on")

    # A strategic merge patch merges containers by name and keeps the other one.
    patched = apps.patch_namespaced_deployment(
        "py-deploy", NS, {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}}
    )
    eq(
        [(x.name, x.image) for x in patched.spec.template.spec.containers],
        [("app", "nginx:1.28"), ("sidecar", "busybox:1.36")],
        "containers after a strategic merge patch",
    )
    # ...and $patch: delete removes one element of the list.
    patched = apps.patch_namespaced_deployment(
        "py-deploy",
        NS,
        {"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}}},
    )
    eq([x.name for x in patched.spec.template.spec.containers], ["app"], "after $patch: delete")

    # A merge patch replaces the list whole.
    merge = client.AppsV1Api(api_client("application/merge-patch+json"))
    patched = merge.patch_namespaced_deployment(
        "py-deploy",
        NS,
        {"spec": {"template": {"spec": {"containers": [{"name": "only", "image": "redis:7"}]}}}},
    )
    eq([x.name for x in patched.spec.template.spec.containers], ["only"], "a merge patch replaces lists")
    eq(patched.spec.template.spec.containers[0].image_pull_policy, "IfNotPresent", "defaults after a patch")

    patched = apps.patch_namespaced_deployment(
        "py-deploy", NS, [{"op": "replace", "path": "/spec/replicas", "value": 5}]
    )
    eq(patched.spec.replicas, 5, "replicas after a JSON patch")

    # An invalid change is refused with its cause.
    bad = failure(
        apps.patch_namespaced_deployment, "py-deploy", NS, [{"op": "replace", "path": "/spec/replicas", "value": -1}]
    )
    body = status_of(bad, 422, "Invalid")
    eq(
        [(x["reason"], x["field"]) for x in body["details"]["causes"]],
        [("FieldValueInvalid", "spec.replicas")],
        "the cause of an invalid replicas",
    )
    eq(body["details"]["kind"], "Deployment", "details.kind of an Invalid")
    eq(body["details"]["group"], "apps", "details.group of an Invalid")

    apps.delete_namespaced_deployment("py-deploy", NS)
    status_of(failure(apps.read_namespaced_deployment, "py-deploy", NS), 404, "NotFound")


def deployment_status_and_scale():
    apps = client.AppsV1Api()
    apps.create_namespaced_deployment(NS, deployment("py-status", replicas=2))

    # replace_namespaced_deployment_status changes the status only.
    read = apps.read_namespaced_deployment_status("py-status", NS)
    read.status = client.V1DeploymentStatus(replicas=2, ready_replicas=1, observed_generation=1)
    read.spec.replicas = 9
    replaced = apps.replace_namespaced_deployment_status("py-status", NS, read)
    eq(replaced.status.ready_replicas, 1, "status after replace_status")
    eq(replaced.spec.replicas, 2, "replace_status ignores the spec")
    eq(replaced.metadata.generation, 1, "a status change keeps the generation")

    # The main resource ignores the status.
    read = apps.read_namespaced_deployment("py-status", NS)
    read.status.ready_replicas = 7
    replaced = apps.replace_namespaced_deployment("py-status", NS, read)
    eq(replaced.status.ready_replicas, 1, "a replace of the main resource ignores the status")

    patched = apps.patch_namespaced_deployment_status("py-status", NS, {"status": {"availableReplicas": 1}})
    eq(patched.status.available_replicas, 1, "a strategic merge patch of the status")
    eq(patched.status.ready_replicas, 1, "...keeps the rest of it")

    scale = apps.read_namespaced_deployment_scale("py-status", NS)
    eq(scale.spec.replicas, 2, "spec.replicas of the scale")
    eq(scale.status.selector, "app=py-status", "status.selector of the scale")
    scale.spec.replicas = 4
    scaled = apps.replace_namespaced_deployment_scale("py-status", NS, scale)
    eq(scaled.spec.replicas, 4, "after replacing the scale")
    scaled = apps.patch_namespaced_deployment_scale("py-status", NS, {"spec": {"replicas": 6}})
    eq(scaled.spec.replicas, 6, "after patching the scale")
    eq(apps.read_namespaced_deployment("py-status", NS).spec.replicas, 6, "the scale writes the deployment")

    # A stale status replace conflicts.
    stale = apps.read_namespaced_deployment_status("py-status", NS)
    apps.patch_namespaced_deployment_status("py-status", NS, {"status": {"replicas": 3}})
    status_of(failure(apps.replace_namespaced_deployment_status, "py-status", NS, stale), 409, "Conflict")
    apps.delete_namespaced_deployment("py-status", NS)


def propagation():
    """A Deployment's ReplicaSet (made by hand: no workload controller runs without nodes) goes
    with it, or stays behind, as the propagation policy says."""
    apps = client.AppsV1Api()

    def owned_replicaset(owner_name):
        owner = apps.create_namespaced_deployment(NS, deployment(owner_name))
        rs = client.V1ReplicaSet(
            metadata=client.V1ObjectMeta(
                name=owner_name + "-rs",
                owner_references=[
                    client.V1OwnerReference(
                        api_version="apps/v1",
                        kind="Deployment",
                        name=owner_name,
                        uid=owner.metadata.uid,
                        controller=True,
                        block_owner_deletion=True,
                    )
                ],
            ),
            spec=client.V1ReplicaSetSpec(
                replicas=0,
                selector=client.V1LabelSelector(match_labels={"app": owner_name}),
                template=owner.spec.template,
            ),
        )
        apps.create_namespaced_replica_set(NS, rs)

    owned_replicaset("py-fg")
    pending = apps.delete_namespaced_deployment(
        "py-fg", NS, body=client.V1DeleteOptions(propagation_policy="Foreground")
    )
    # The answer is the Deployment, waiting on its foregroundDeletion finalizer (read into the
    # V1Status the client expects: its details are empty).
    eq(pending.kind, "Deployment", "a foreground deletion answers with the object")
    eventually(lambda: gone(apps.read_namespaced_replica_set, "py-fg-rs", NS), "the ReplicaSet to go first")
    eventually(lambda: gone(apps.read_namespaced_deployment, "py-fg", NS), "the Deployment to follow")

    owned_replicaset("py-orphan")
    apps.delete_namespaced_deployment("py-orphan", NS, propagation_policy="Orphan")
    eventually(lambda: gone(apps.read_namespaced_deployment, "py-orphan", NS), "the Deployment to go")
    rs = eventually(
        lambda: (lambda r: r if not r.metadata.owner_references else None)(
            apps.read_namespaced_replica_set("py-orphan-rs", NS)
        ),
        "the ReplicaSet to be orphaned",
    )
    check(rs.metadata.deletion_timestamp is None, "an orphan is not being deleted")
    apps.delete_namespaced_replica_set("py-orphan-rs", NS)


if __name__ == "__main__":
    run(
        {
            "deployment_crud": deployment_crud,
            "deployment_status_and_scale": deployment_status_and_scale,
            "propagation": propagation,
        }
    )
