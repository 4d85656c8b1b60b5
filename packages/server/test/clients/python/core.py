"""Core kinds through CoreV1Api: CRUD, selectors, pagination, the three patch types, deletion
with a propagation policy, and server-side apply."""

import base64

from common import NS, api_client, check, eq, eventually, failure, gone, run, status_of
from kubernetes import client


def configmap_crud():
    v1 = client.CoreV1Api()
    body = client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="py-cm", labels={"suite": "python"}),
        data={"a": "1"},
    )
    created = v1.create_namespaced_config_map(NS, body)
    check(created.metadata.uid, "a created object has a uid")
    check(created.metadata.creation_timestamp is not None, "creationTimestamp is parsed as a datetime")
    eq(created.metadata.namespace, NS, "namespace")

    read = v1.read_namespaced_config_map("py-cm", NS)
    eq(read.data, {"a": "1"}, "data read back")
    eq(read.metadata.resource_version, created.metadata.resource_version, "resourceVersion")

    read.data["a"] = "2"
    replaced = v1.replace_namespaced_config_map("py-cm", NS, read)
    eq(replaced.data, {"a": "2"}, "data replaced")
    check(
        int(replaced.metadata.resource_version) > int(read.metadata.resource_version),
        "a replace moves the resourceVersion on",
    )

    # A replace from a stale copy is refused by the optimistic lock.
    read.data["a"] = "stale"
    conflict = failure(v1.replace_namespaced_config_map, "py-cm", NS, read)
    status_of(
        conflict,
        409,
        "Conflict",
        'Operation cannot be fulfilled on configmaps "py-cm": the object has been modified; '
        "please apply your changes to the latest version and try again",
    )

    # A dict body is sent as a strategic merge patch.
    patched = v1.patch_namespaced_config_map("py-cm", NS, {"data": {"b": "x"}})
    eq(patched.data, {"a": "2", "b": "x"}, "after a strategic merge patch")

    # A list body is sent as a JSON patch.
    patched = v1.patch_namespaced_config_map(
        "py-cm",
        NS,
        [
            {"op": "test", "path": "/data/b", "value": "x"},
            {"op": "remove", "path": "/data/b"},
            {"op": "add", "path": "/metadata/labels/patched", "value": "json"},
        ],
    )
    eq(patched.data, {"a": "2"}, "after a JSON patch")
    eq(patched.metadata.labels, {"suite": "python", "patched": "json"}, "labels after a JSON patch")

    merge = client.CoreV1Api(api_client("application/merge-patch+json"))
    patched = merge.patch_namespaced_config_map(
        "py-cm", NS, {"metadata": {"labels": {"patched": None}}, "data": {"c": "3"}}
    )
    eq(patched.data, {"a": "2", "c": "3"}, "after a merge patch")
    eq(patched.metadata.labels, {"suite": "python"}, "a null in a merge patch removes the key")

    # A failed JSON patch test changes nothing.
    bad = failure(
        v1.patch_namespaced_config_map,
        "py-cm",
        NS,
        [{"op": "test", "path": "/data/a", "value": "nope"}, {"op": "remove", "path": "/data/a"}],
    )
    status_of(bad, 422, "Invalid")
    eq(v1.read_namespaced_config_map("py-cm", NS).data, {"a": "2", "c": "3"}, "data after a failed test")

    status = v1.delete_namespaced_config_map("py-cm", NS)
    eq(status.status, "Success", "a delete answers a Success Status")
    eq(status.details.name, "py-cm", "the Status names what was deleted")
    eq(status.details.kind, "configmaps", "the Status names the resource")
    eq(status.details.uid, created.metadata.uid, "the Status carries the uid")
    status_of(failure(v1.read_namespaced_config_map, "py-cm", NS), 404, "NotFound", 'configmaps "py-cm" not found')


def selectors_and_pagination():
    v1 = client.CoreV1Api()
    names = ["page-%d" % i for i in range(7)]
    for i, name in enumerate(names):
        v1.create_namespaced_config_map(
            NS,
            client.V1ConfigMap(
                metadata=client.V1ObjectMeta(
                    name=name, labels={"paged": "yes", "parity": "even" if i % 2 == 0 else "odd"}
                )
            ),
        )
    v1.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="unpaged", labels={"paged": "no"}))
    )

    got = v1.list_namespaced_config_map(NS, label_selector="paged=yes,parity in (odd)")
    eq([i.metadata.name for i in got.items], ["page-1", "page-3", "page-5"], "a set-based label selector")
    got = v1.list_namespaced_config_map(NS, label_selector="paged=yes,parity!=odd,!missing")
    eq([i.metadata.name for i in got.items], ["page-0", "page-2", "page-4", "page-6"], "existence selectors")
    got = v1.list_namespaced_config_map(NS, field_selector="metadata.name=page-3")
    eq([i.metadata.name for i in got.items], ["page-3"], "a field selector")
    got = v1.list_config_map_for_all_namespaces(
        field_selector="metadata.namespace=%s,metadata.name!=unpaged" % NS, label_selector="paged"
    )
    eq([i.metadata.name for i in got.items], names, "field and label selectors across namespaces")

    # Pages of 3 from one consistent snapshot: a write between pages does not show.
    first = v1.list_namespaced_config_map(NS, label_selector="paged=yes", limit=3)
    eq([i.metadata.name for i in first.items], names[:3], "first page")
    check(first.metadata._continue, "a first page carries a continue token")
    # kube-apiserver counts the remaining items only when no selector filters them.
    check(first.metadata.remaining_item_count is None, "no remainingItemCount under a selector")
    everything = v1.list_namespaced_config_map(NS)
    one = v1.list_namespaced_config_map(NS, limit=1)
    eq(one.metadata.remaining_item_count, len(everything.items) - 1, "remainingItemCount without selectors")
    v1.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="page-9", labels={"paged": "yes"}))
    )
    second = v1.list_namespaced_config_map(
        NS, label_selector="paged=yes", limit=3, _continue=first.metadata._continue
    )
    eq([i.metadata.name for i in second.items], names[3:6], "second page")
    eq(second.metadata.resource_version, first.metadata.resource_version, "pages share one snapshot")
    third = v1.list_namespaced_config_map(
        NS, label_selector="paged=yes", limit=3, _continue=second.metadata._continue
    )
    eq([i.metadata.name for i in third.items], names[6:], "last page")
    check(not third.metadata._continue, "the last page carries no continue token")
    check(third.metadata.remaining_item_count is None, "the last page carries no remainingItemCount")

    # A malformed continue token and a malformed selector are 400s.
    status_of(
        failure(v1.list_namespaced_config_map, NS, limit=3, _continue="garbage"),
        400,
        "BadRequest",
    )
    status_of(failure(v1.list_namespaced_config_map, NS, label_selector="a in (b"), 400, "BadRequest")
    status_of(failure(v1.list_namespaced_config_map, NS, field_selector="spec.nope=1"), 400, "BadRequest")

    deleted = v1.delete_collection_namespaced_config_map(NS, label_selector="paged")
    # kube-apiserver answers with the list of what it deleted (read into the V1Status the
    # client expects).
    eq(deleted.kind, "ConfigMapList", "deletecollection answers the deleted objects")
    got = v1.list_namespaced_config_map(NS, label_selector="paged")
    eq(got.items, [], "deletecollection removed every selected object")


def other_core_kinds():
    v1 = client.CoreV1Api()
    secret = v1.create_namespaced_secret(
        NS,
        client.V1Secret(metadata=client.V1ObjectMeta(name="py-secret"), string_data={"user": "admin"}),
    )
    eq(secret.data, {"user": base64.b64encode(b"admin").decode()}, "stringData is folded into data")
    check(secret.string_data is None, "stringData is not stored")
    eq(secret.type, "Opaque", "the default Secret type")

    svc = v1.create_namespaced_service(
        NS,
        client.V1Service(
            metadata=client.V1ObjectMeta(name="py-svc"),
            spec=client.V1ServiceSpec(
                selector={"app": "py"}, ports=[client.V1ServicePort(port=80, target_port=8080)]
            ),
        ),
    )
    check(svc.spec.cluster_ip and svc.spec.cluster_ip.count(".") == 3, "a clusterIP is allocated")
    eq(svc.spec.type, "ClusterIP", "the default Service type")
    eq(svc.spec.ports[0].protocol, "TCP", "the default port protocol")
    eq(svc.spec.ports[0].target_port, 8080, "an int-or-string targetPort reads back as an int")

    pod = v1.create_namespaced_pod(
        NS,
        client.V1Pod(
            metadata=client.V1ObjectMeta(name="py-pod", labels={"app": "py"}),
            spec=client.V1PodSpec(containers=[client.V1Container(name="app", image="nginx:1.27")]),
        ),
    )
    eq(pod.status.phase, "Pending", "a new pod is Pending")
    eq(pod.spec.restart_policy, "Always", "pod defaults")
    eq(pod.spec.containers[0].image_pull_policy, "IfNotPresent", "container defaults")
    got = v1.list_namespaced_pod(NS, field_selector="status.phase=Pending,spec.nodeName=")
    eq([p.metadata.name for p in got.items], ["py-pod"], "pod field selectors")
    # A strategic merge patch merges containers by name.
    patched = v1.patch_namespaced_pod(
        "py-pod", NS, {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}
    )
    eq([(c.name, c.image) for c in patched.spec.containers], [("app", "nginx:1.28")], "merged by name")

    ns = v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py-ns")))
    eq(ns.status.phase, "Active", "a new namespace is Active")
    eq(ns.metadata.labels, {"kubernetes.io/metadata.name": "py-ns"}, "the namespace name label")
    v1.delete_namespace("py-ns")
    eventually(lambda: gone(v1.read_namespace, "py-ns"), "the namespace to be finalized")

    v1.delete_namespaced_pod("py-pod", NS, grace_period_seconds=0)
    v1.delete_namespaced_service("py-svc", NS)
    v1.delete_namespaced_secret("py-secret", NS)


def propagation():
    """Deletion with each propagation policy, as the garbage collector carries it out."""
    v1 = client.CoreV1Api()

    def owner_and_child(name):
        owner = v1.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name)))
        ref = client.V1OwnerReference(
            api_version="v1",
            kind="ConfigMap",
            name=name,
            uid=owner.metadata.uid,
            block_owner_deletion=True,
        )
        v1.create_namespaced_config_map(
            NS,
            client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name + "-child", owner_references=[ref])),
        )

    owner_and_child("py-orphan")
    v1.delete_namespaced_config_map("py-orphan", NS, propagation_policy="Orphan")
    eventually(lambda: gone(v1.read_namespaced_config_map, "py-orphan", NS), "the orphaning owner to go")
    eventually(
        lambda: not v1.read_namespaced_config_map("py-orphan-child", NS).metadata.owner_references,
        "the orphan to lose its owner reference",
    )

    owner_and_child("py-bg")
    v1.delete_namespaced_config_map("py-bg", NS, body=client.V1DeleteOptions(propagation_policy="Background"))
    check(gone(v1.read_namespaced_config_map, "py-bg", NS), "a background deletion removes the owner at once")
    eventually(lambda: gone(v1.read_namespaced_config_map, "py-bg-child", NS), "the dependent to be collected")

    owner_and_child("py-fg")
    v1.delete_namespaced_config_map("py-fg", NS, propagation_policy="Foreground")
    eventually(lambda: gone(v1.read_namespaced_config_map, "py-fg-child", NS), "the dependent to go first")
    eventually(lambda: gone(v1.read_namespaced_config_map, "py-fg", NS), "the owner to follow")

    v1.delete_namespaced_config_map("py-orphan-child", NS)


def server_side_apply():
    apply = client.CoreV1Api(api_client("application/apply-patch+yaml"))
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: py-ssa\ndata:\n  a: '1'\n  b: '2'\n"
    applied = apply.patch_namespaced_config_map("py-ssa", NS, manifest, field_manager="py-a")
    eq(applied.data, {"a": "1", "b": "2"}, "apply creates")
    managers = [(m.manager, m.operation) for m in applied.metadata.managed_fields]
    eq(managers, [("py-a", "Apply")], "the applier owns its fields")

    # A second manager changing an owned field conflicts, unless it forces.
    other = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: py-ssa\ndata:\n  a: 'x'\n"
    conflict = failure(apply.patch_namespaced_config_map, "py-ssa", NS, other, field_manager="py-b")
    body = status_of(conflict, 409, "Conflict")
    eq(
        [(c["reason"], c["field"]) for c in body["details"]["causes"]],
        [("FieldManagerConflict", ".data.a")],
        "the conflict names the field",
    )
    forced = apply.patch_namespaced_config_map("py-ssa", NS, other, field_manager="py-b", force=True)
    eq(forced.data, {"a": "x", "b": "2"}, "a forced apply takes the field over")

    # Dropping a field from the first manager's configuration removes it (it owns it alone).
    apply.patch_namespaced_config_map(
        "py-ssa", NS, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: py-ssa\n", field_manager="py-a"
    )
    eq(client.CoreV1Api().read_namespaced_config_map("py-ssa", NS).data, {"a": "x"}, "after re-applying")
    client.CoreV1Api().delete_namespaced_config_map("py-ssa", NS)


def eviction():
    """pods/eviction through create_namespaced_pod_eviction, as kubectl drain's client calls it."""
    v1 = client.CoreV1Api()
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="py-evicted", labels={"app": "py-evicted"}),
        spec=client.V1PodSpec(node_selector={"nowhere": "true"}, containers=[client.V1Container(name="c", image="x")]),
    )
    v1.create_namespaced_pod(NS, pod)
    body = lambda name: client.V1Eviction(metadata=client.V1ObjectMeta(name=name, namespace=NS))
    status_of(
        failure(v1.create_namespaced_pod_eviction, "py-evicted", NS, body("other")),
        400,
        "BadRequest",
        "name in URL does not match name in Eviction object",
    )
    status_of(failure(v1.create_namespaced_pod_eviction, "py-none", NS, body("py-none")), 404, "NotFound")
    v1.create_namespaced_pod_eviction("py-evicted", NS, body("py-evicted"), dry_run="All")
    eq(v1.read_namespaced_pod("py-evicted", NS).metadata.name, "py-evicted", "a dry-run eviction keeps the pod")
    v1.create_namespaced_pod_eviction("py-evicted", NS, body("py-evicted"))
    eventually(lambda: gone(v1.read_namespaced_pod, "py-evicted", NS), "the evicted pod to go")


if __name__ == "__main__":
    run(
        {
            "configmap_crud": configmap_crud,
            "selectors_and_pagination": selectors_and_pagination,
            "other_core_kinds": other_core_kinds,
            "propagation": propagation,
            "server_side_apply": server_side_apply,
            "eviction": eviction,
        }
    )
