"""Failures as the Python client sees them: an ApiException with the HTTP status, and a Status
body with the reason and message kube-apiserver gives."""

from common import NS, api_client, check, eq, eventually, failure, gone, page_not_found, run, status_of
from kubernetes import client


def cm(name, **meta):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, **meta))


def not_found_and_exists():
    v1 = client.CoreV1Api()
    body = status_of(
        failure(v1.read_namespaced_config_map, "py-missing", NS), 404, "NotFound", 'configmaps "py-missing" not found'
    )
    eq(body["details"], {"name": "py-missing", "kind": "configmaps"}, "details of a NotFound")
    status_of(
        failure(v1.create_namespaced_config_map, "py-no-such-ns", cm("a")),
        404,
        "NotFound",
        'namespaces "py-no-such-ns" not found',
    )
    status_of(
        failure(client.AppsV1Api().read_namespaced_deployment, "py-missing", NS),
        404,
        "NotFound",
        'deployments.apps "py-missing" not found',
    )

    v1.create_namespaced_config_map(NS, cm("py-dup"))
    body = status_of(
        failure(v1.create_namespaced_config_map, NS, cm("py-dup")),
        409,
        "AlreadyExists",
        'configmaps "py-dup" already exists',
    )
    eq(body["details"], {"name": "py-dup", "kind": "configmaps"}, "details of an AlreadyExists")

    uid = v1.read_namespaced_config_map("py-dup", NS).metadata.uid
    status_of(
        failure(
            v1.delete_namespaced_config_map,
            "py-dup",
            NS,
            body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="not-" + uid)),
        ),
        409,
        "Conflict",
        'Operation cannot be fulfilled on ConfigMap "py-dup": the UID in the precondition (not-%s) does not match '
        "the UID in record (%s). The object might have been deleted and then recreated" % (uid, uid),
    )
    v1.delete_namespaced_config_map(
        "py-dup", NS, body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=uid))
    )


def invalid_names():
    v1 = client.CoreV1Api()
    for name in ["Bad_Name", "UPPER", "ünïcode", "a" * 254, "-lead", "trail-"]:
        body = status_of(failure(v1.create_namespaced_config_map, NS, cm(name)), 422, "Invalid")
        check(
            body["message"].startswith('ConfigMap "%s" is invalid: metadata.name: Invalid value: "%s": ' % (name, name)),
            "the message of an invalid name: %s" % body["message"],
        )
        eq(
            [(c["reason"], c["field"]) for c in body["details"]["causes"]],
            [("FieldValueInvalid", "metadata.name")],
            "the cause of an invalid name",
        )
        eq(body["details"]["name"], name, "details.name of an invalid object")
        eq(body["details"]["kind"], "ConfigMap", "details.kind of an invalid object")
    # Label values are shorter, and more restricted, than names.
    body = status_of(
        failure(v1.create_namespaced_config_map, NS, cm("py-labels", labels={"ok": "x" * 64, "bad key!": "v"})),
        422,
        "Invalid",
    )
    eq(
        sorted(c["field"] for c in body["details"]["causes"]),
        ["metadata.labels", "metadata.labels"],
        "both bad labels are named",
    )
    status_of(failure(v1.create_namespace, client.V1Namespace(metadata=client.V1ObjectMeta(name="a.b"))), 422, "Invalid")


def raw_call(method, path, body, query=None, content_type="application/json"):
    """A request through the client's own ApiClient, for parameters its generated methods lack
    (22.x has no field_validation) and bodies they cannot express (duplicate keys)."""
    return client.ApiClient().call_api(
        path,
        method,
        query_params=query or [],
        header_params={"Content-Type": content_type, "Accept": "application/json"},
        body=body,
        auth_settings=["BearerToken"],
        response_type="object",
        _return_http_data_only=False,
    )


def field_validation():
    v1 = client.CoreV1Api()
    path = "/api/v1/namespaces/default/configmaps"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py-strict", "bogus": 1}, "extra": "x"}
    strict = status_of(failure(raw_call, "POST", path, body, [("fieldValidation", "Strict")]), 400, "BadRequest")
    eq(
        strict["message"],
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'unknown field "metadata.bogus", unknown field "extra"',
        "the message of a strict decoding error (fields in the order of the document)",
    )
    _, code, headers = raw_call("POST", path, body, [("fieldValidation", "Warn")])
    eq(code, 201, "a create with warnings succeeds")
    warnings = [w.strip() for w in headers.get("Warning", "").split(",")]
    eq(
        sorted(warnings),
        ['299 - "unknown field \\"extra\\""', '299 - "unknown field \\"metadata.bogus\\""'],
        "the Warning headers",
    )
    # A patch with unknown fields: Strict refuses it, Ignore drops them silently.
    patch = {"metadata": {"labels": {"a": "b"}, "nope": True}}
    smp = "application/strategic-merge-patch+json"
    status_of(
        failure(raw_call, "PATCH", path + "/py-strict", patch, [("fieldValidation", "Strict")], smp),
        422,
        "Invalid",
    )
    _, code, headers = raw_call("PATCH", path + "/py-strict", patch, [("fieldValidation", "Ignore")], smp)
    eq(code, 200, "a patch with an unknown field under Ignore")
    check("Warning" not in headers, "Ignore gives no warning")
    eq(v1.read_namespaced_config_map("py-strict", NS).metadata.labels, {"a": "b"}, "labels after the patch")
    v1.delete_namespaced_config_map("py-strict", NS)


def http_errors():
    api = client.ApiClient()

    def call(method, path, headers=None, body=None):
        return api.call_api(
            path,
            method,
            header_params=dict({"Accept": "application/json", "Content-Type": "application/json"}, **(headers or {})),
            body=body,
            auth_settings=["BearerToken"],
            response_type="object",
        )

    status_of(
        failure(call, "PUT", "/api/v1/namespaces/default/configmaps", body={}),
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
    status_of(
        failure(call, "GET", "/api/v1/namespaces/default/configmaps", headers={"Accept": "application/xml"}),
        406,
        "NotAcceptable",
    )
    status_of(
        failure(
            client.CoreV1Api(api_client("application/xml")).patch_namespaced_config_map, "x", NS, "<data/>"
        ),
        415,
        "UnsupportedMediaType",
    )
    # A group no API serves is a path like any other: Go's plain-text 404.
    page_not_found(failure(call, "GET", "/apis/nope.example.com/v1/widgets"))
    # A resource a served group/version lacks is a Status.
    status_of(
        failure(call, "GET", "/apis/apps/v1/namespaces/default/widgets"),
        404,
        "NotFound",
        "the server could not find the requested resource",
    )

    # A wrong token is a 401.
    conf = client.Configuration.get_default_copy()
    conf.api_key = {"authorization": "Bearer wrong"}
    status_of(
        failure(client.CoreV1Api(client.ApiClient(conf)).list_namespace), 401, "Unauthorized", "Unauthorized"
    )


def forbidden_in_terminating_namespace():
    v1 = client.CoreV1Api()
    v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py-term")))
    # A finalizer keeps the namespace terminating until the test lets it go.
    v1.create_namespaced_config_map("py-term", cm("held", finalizers=["example.com/hold"]))
    v1.delete_namespace("py-term")
    eventually(
        lambda: v1.read_namespaced_config_map("held", "py-term").metadata.deletion_timestamp,
        "the namespace controller to delete the content",
    )
    status_of(
        failure(v1.create_namespaced_config_map, "py-term", cm("late")),
        403,
        "Forbidden",
        'configmaps "late" is forbidden: unable to create new content in namespace py-term because it is being terminated',
    )
    v1.patch_namespaced_config_map("held", "py-term", [{"op": "remove", "path": "/metadata/finalizers"}])
    eventually(lambda: gone(v1.read_namespace, "py-term"), "the namespace to go")


def as_kube_apiserver_answers():
    """Answers read off kube-apiserver (the anchor's 1.24, each checked unchanged in 1.32's
    sources) where the local plane used to differ: what it refuses, and what it lets through."""
    v1 = client.CoreV1Api()
    # A finalizer without a domain is refused on a built-in kind, and taken on a Lease.
    body = status_of(
        failure(v1.create_namespaced_config_map, NS, cm("py-fin", finalizers=["cleanup"])),
        422,
        "Invalid",
        'ConfigMap "py-fin" is invalid: metadata.finalizers[0]: Invalid value: "cleanup": '
        "name is neither a standard finalizer name nor is it fully qualified",
    )
    eq(
        [(c["reason"], c["field"]) for c in body["details"]["causes"]],
        [("FieldValueInvalid", "metadata.finalizers[0]")],
        "the causes",
    )
    lease = client.V1Lease(metadata=client.V1ObjectMeta(name="py-fin", finalizers=["cleanup"]))
    client.CoordinationV1Api().create_namespaced_lease(NS, lease, dry_run="All")
    # A long generateName is cut to 58 characters before the random suffix, and only it is invalid.
    body = status_of(failure(v1.create_namespaced_config_map, NS, cm(None, generate_name="g" * 300)), 422, "Invalid")
    eq([c["field"] for c in body["details"]["causes"]], ["metadata.generateName"], "the one cause")
    check(body["details"]["name"].startswith("g" * 58) and len(body["details"]["name"]) == 63, body["details"]["name"])
    # A negative limit asks for no paging.
    v1.create_namespaced_config_map(NS, cm("py-lim"))
    page = v1.list_namespaced_config_map(NS, limit=-1)
    check(not page.metadata._continue and any(i.metadata.name == "py-lim" for i in page.items), "an unpaged list")
    # A dryRun value other than All makes the options invalid.
    status_of(
        failure(v1.create_namespaced_config_map, NS, cm("py-dry"), dry_run="Bogus"),
        422,
        "Invalid",
        'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Bogus"}: supported values: "All"',
    )
    # A field label of a kind without its own conversion, and one of a kind with it.
    status_of(
        failure(v1.list_namespaced_config_map, NS, field_selector="data.x=1"),
        400,
        "BadRequest",
        '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
    )
    status_of(
        failure(v1.list_namespace, field_selector="name=default"), 400, "BadRequest", "field label not supported: name"
    )
    # A continue token that is not one.
    status_of(
        failure(v1.list_namespaced_config_map, NS, limit=1, _continue="garbage"),
        400,
        "BadRequest",
        "invalid continue token: continue key is not valid: invalid character '\\u0081' looking for beginning of value",
    )
    # A negative grace period is taken as 1 s.
    v1.delete_namespaced_config_map("py-lim", NS, grace_period_seconds=-5)
    eventually(lambda: gone(v1.read_namespaced_config_map, "py-lim", NS), "the ConfigMap to go")


def workload_answers():
    """More of kube-apiserver's answers (anchor 1.24, unchanged in 1.32): workload templates,
    autoscalers that could not wake from zero, docker config Secrets."""
    pod = client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels={"app": "x"}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")], active_deadline_seconds=5),
    )
    deployment = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="py-d"),
        spec=client.V1DeploymentSpec(selector=client.V1LabelSelector(match_labels={"app": "x"}), template=pod),
    )
    body = status_of(
        failure(client.AppsV1Api().create_namespaced_deployment, NS, deployment, dry_run="All"),
        422,
        "Invalid",
        'Deployment.apps "py-d" is invalid: spec.template.spec.activeDeadlineSeconds: Forbidden: '
        "activeDeadlineSeconds in ReplicaSet is not Supported",
    )
    eq(body["details"]["causes"][0]["reason"], "FieldValueForbidden", "the cause's reason")
    hpa = client.V1HorizontalPodAutoscaler(
        metadata=client.V1ObjectMeta(name="py-h"),
        spec=client.V1HorizontalPodAutoscalerSpec(
            scale_target_ref=client.V1CrossVersionObjectReference(api_version="apps/v1", kind="Deployment", name="d"),
            min_replicas=0,
            max_replicas=5,
        ),
    )
    status_of(
        failure(client.AutoscalingV1Api().create_namespaced_horizontal_pod_autoscaler, NS, hpa, dry_run="All"),
        422,
        "Invalid",
        'HorizontalPodAutoscaler.autoscaling "py-h" is invalid: [spec.minReplicas: Invalid value: 0: must be greater '
        "than or equal to 1, spec.metrics: Forbidden: must specify at least one Object or External metric to support "
        "scaling to zero replicas]",
    )
    secret = client.V1Secret(
        metadata=client.V1ObjectMeta(name="py-s"),
        type="kubernetes.io/dockerconfigjson",
        string_data={".dockerconfigjson": "{bad"},
    )
    status_of(
        failure(client.CoreV1Api().create_namespaced_secret, NS, secret, dry_run="All"),
        422,
        "Invalid",
        'Secret "py-s" is invalid: data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": '
        "invalid character 'b' looking for beginning of object key string",
    )


if __name__ == "__main__":
    run(
        {
            "not_found_and_exists": not_found_and_exists,
            "invalid_names": invalid_names,
            "field_validation": field_validation,
            "http_errors": http_errors,
            "forbidden_in_terminating_namespace": forbidden_in_terminating_namespace,
            "as_kube_apiserver_answers": as_kube_apiserver_answers,
            "workload_answers": workload_answers,
        }
    )
