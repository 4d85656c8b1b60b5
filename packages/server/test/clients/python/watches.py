"""Watches through the Python client's own `watch.Watch().stream(...)`: events from a list's
resourceVersion, resuming from the last event's resourceVersion (by hand, and by the client
itself after the server drops the stream), the initial state of a watch without one, bookmarks,
custom objects, and a resourceVersion too old to resume from (410 Expired)."""

from common import NS, check, eq, failure, run, sync
from custom import GROUP, PLURAL, VERSION, ensure_crd, gadget
from kubernetes import client, watch

# Bounds every request: a watch that never delivers fails the scenario instead of hanging it.
TIMEOUT = (5, 20)


def cm(name, label, data=None):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels={"w": label}), data=data)


def collect(w, stream, count, on_event=None):
    """The first `count` events of `stream` as (type, name, data), then stops the watch."""
    events = []
    for e in stream:
        obj = e["object"]
        check(isinstance(obj, client.V1ConfigMap), "a %s event carries a V1ConfigMap, not %r" % (e["type"], obj))
        events.append((e["type"], obj.metadata.name, obj.data))
        if on_event:
            on_event(len(events))
        if len(events) == count:
            w.stop()
    return events


def events_from_a_list():
    v1 = client.CoreV1Api()
    rv = v1.list_namespaced_config_map(NS, label_selector="w=py").metadata.resource_version
    v1.create_namespaced_config_map(NS, cm("w1", "py", {"v": "1"}))
    v1.patch_namespaced_config_map("w1", NS, {"data": {"v": "2"}})
    v1.delete_namespaced_config_map("w1", NS)
    last = v1.create_namespaced_config_map(NS, cm("w2", "py", {"v": "1"}))
    v1.create_namespaced_config_map(NS, cm("other", "not-py"))

    w = watch.Watch()
    stream = w.stream(
        v1.list_namespaced_config_map, NS, label_selector="w=py", resource_version=rv, _request_timeout=TIMEOUT
    )
    eq(
        collect(w, stream, 4),
        [
            ("ADDED", "w1", {"v": "1"}),
            ("MODIFIED", "w1", {"v": "2"}),
            ("DELETED", "w1", {"v": "2"}),
            ("ADDED", "w2", {"v": "1"}),
        ],
        "the events since the list",
    )
    eq(w.resource_version, last.metadata.resource_version, "the watch remembers the last resourceVersion")

    # Resuming from it gives only what came after.
    v1.patch_namespaced_config_map("w2", NS, {"data": {"v": "2"}})
    w2 = watch.Watch()
    stream = w2.stream(
        v1.list_namespaced_config_map,
        NS,
        label_selector="w=py",
        resource_version=w.resource_version,
        _request_timeout=TIMEOUT,
    )
    eq(collect(w2, stream, 1), [("MODIFIED", "w2", {"v": "2"})], "the events after a resume")

    # Without a resourceVersion, and from "0", a watch starts with the current state.
    for start in [{}, {"resource_version": "0"}]:
        w3 = watch.Watch()
        stream = w3.stream(
            v1.list_namespaced_config_map, NS, label_selector="w=py", _request_timeout=TIMEOUT, **start
        )
        eq(collect(w3, stream, 1), [("ADDED", "w2", {"v": "2"})], "the initial state (%r)" % start)

    # A watch across namespaces, narrowed by a field selector.
    w4 = watch.Watch()
    stream = w4.stream(
        v1.list_config_map_for_all_namespaces,
        field_selector="metadata.name=w2",
        resource_version=last.metadata.resource_version,
        _request_timeout=TIMEOUT,
    )
    v1.delete_namespaced_config_map("w2", NS)
    eq(collect(w4, stream, 2), [("MODIFIED", "w2", {"v": "2"}), ("DELETED", "w2", {"v": "2"})], "by field")
    v1.delete_namespaced_config_map("other", NS)


def resume_after_drop():
    """The client reconnects by itself when the server ends the stream, from the
    resourceVersion of the last event it saw: nothing is lost and nothing repeated."""
    v1 = client.CoreV1Api()
    rv = v1.list_namespaced_config_map(NS, label_selector="w=drop").metadata.resource_version
    v1.create_namespaced_config_map(NS, cm("d1", "drop"))

    def on_event(n):
        if n == 1:
            dropped = sync("dropWatches")["dropped"]
            check(dropped >= 1, "the server had the watch open (dropped %d)" % dropped)
            v1.create_namespaced_config_map(NS, cm("d2", "drop"))
        if n == 2:
            v1.patch_namespaced_config_map("d1", NS, {"data": {"k": "v"}})

    w = watch.Watch()
    stream = w.stream(
        v1.list_namespaced_config_map, NS, label_selector="w=drop", resource_version=rv, _request_timeout=TIMEOUT
    )
    eq(
        collect(w, stream, 3, on_event),
        [("ADDED", "d1", None), ("ADDED", "d2", None), ("MODIFIED", "d1", {"k": "v"})],
        "the events across the dropped stream",
    )
    v1.delete_collection_namespaced_config_map(NS, label_selector="w=drop")


def bookmarks():
    v1 = client.CoreV1Api()
    rv = v1.list_namespaced_config_map(NS).metadata.resource_version
    w = watch.Watch()
    for e in w.stream(
        v1.list_namespaced_config_map,
        NS,
        label_selector="w=bookmark",
        resource_version=rv,
        allow_watch_bookmarks=True,
        _request_timeout=TIMEOUT,
    ):
        eq(e["type"], "BOOKMARK", "the only event of a quiet watch")
        obj = e["object"]
        eq(obj["kind"], "ConfigMap", "a bookmark's kind")
        eq(obj["apiVersion"], "v1", "a bookmark's apiVersion")
        check(int(obj["metadata"]["resourceVersion"]) >= int(rv), "a bookmark's resourceVersion")
        w.stop()


def custom_objects():
    ensure_crd()
    co = client.CustomObjectsApi()
    rv = co.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)["metadata"]["resourceVersion"]
    co.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, gadget("wg"))
    co.patch_namespaced_custom_object_status(GROUP, VERSION, NS, PLURAL, "wg", {"status": {"phase": "Up"}})
    co.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "wg")
    w = watch.Watch()
    events = []
    for e in w.stream(
        co.list_namespaced_custom_object, GROUP, VERSION, NS, PLURAL, resource_version=rv, _request_timeout=TIMEOUT
    ):
        events.append((e["type"], e["object"]["metadata"]["name"], e["object"].get("status")))
        if len(events) == 3:
            w.stop()
    eq(
        events,
        [("ADDED", "wg", None), ("MODIFIED", "wg", {"phase": "Up"}), ("DELETED", "wg", {"phase": "Up"})],
        "custom object events",
    )
    check(int(w.resource_version) > int(rv), "the watch followed custom objects' resourceVersions")


def expired():
    """Against a server that keeps only a short history: a watch from a resourceVersion it no
    longer has ends with an ERROR event of 410, which the client retries once, then raises."""
    v1 = client.CoreV1Api()
    old = v1.list_namespaced_config_map(NS).metadata.resource_version
    v1.create_namespaced_config_map(NS, cm("churn", "expired"))
    for i in range(40):
        v1.patch_namespaced_config_map("churn", NS, {"data": {"i": str(i)}})
    w = watch.Watch()
    e = failure(
        lambda: list(w.stream(v1.list_namespaced_config_map, NS, resource_version=old, _request_timeout=TIMEOUT))
    )
    eq(e.status, 410, "the status of an expired watch")
    check(
        e.reason.startswith("Expired: too old resource version: %s (" % old),
        "the reason of an expired watch: %r" % e.reason,
    )
    # The documented recovery: list again, then watch from the new list.
    rv = v1.list_namespaced_config_map(NS, label_selector="w=expired").metadata.resource_version
    v1.patch_namespaced_config_map("churn", NS, {"data": {"i": "last"}})
    w = watch.Watch()
    stream = w.stream(
        v1.list_namespaced_config_map, NS, label_selector="w=expired", resource_version=rv, _request_timeout=TIMEOUT
    )
    eq(collect(w, stream, 1), [("MODIFIED", "churn", {"i": "last"})], "a watch from a fresh list")


if __name__ == "__main__":
    run(
        {
            "events_from_a_list": events_from_a_list,
            "resume_after_drop": resume_after_drop,
            "bookmarks": bookmarks,
            "custom_objects": custom_objects,
            "expired": expired,
        }
    )
