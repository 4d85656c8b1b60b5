"""A CustomResourceDefinition made with ApiextensionsV1Api, then its objects through
CustomObjectsApi: CRUD, selectors, pagination, the patch types, schema validation, and the
status and scale subresources."""

from common import NS, api_client, check, eq, eventually, failure, gone, page_not_found, run, status_of
from kubernetes import client

GROUP = "py.example.com"
VERSION = "v1"
PLURAL = "gadgets"


def gadget_crd():
    schema = client.V1JSONSchemaProps(
        type="object",
        properties={
            "spec": client.V1JSONSchemaProps(
                type="object",
                required=["color"],
                properties={
                    "color": client.V1JSONSchemaProps(type="string", enum=["red", "green", "blue"]),
                    "replicas": client.V1JSONSchemaProps(type="integer", minimum=0, default=1),
                    "tags": client.V1JSONSchemaProps(
                        type="array", items=client.V1JSONSchemaProps(type="string")
                    ),
                },
            ),
            "status": client.V1JSONSchemaProps(
                type="object",
                properties={
                    "phase": client.V1JSONSchemaProps(type="string"),
                    "replicas": client.V1JSONSchemaProps(type="integer"),
                    "selector": client.V1JSONSchemaProps(type="string"),
                },
            ),
        },
    )
    return client.V1CustomResourceDefinition(
        metadata=client.V1ObjectMeta(name="%s.%s" % (PLURAL, GROUP)),
        spec=client.V1CustomResourceDefinitionSpec(
            group=GROUP,
            scope="Namespaced",
            names=client.V1CustomResourceDefinitionNames(
                plural=PLURAL, singular="gadget", kind="Gadget", short_names=["gd"]
            ),
            versions=[
                client.V1CustomResourceDefinitionVersion(
                    name=VERSION,
                    served=True,
                    storage=True,
                    schema=client.V1CustomResourceValidation(open_apiv3_schema=schema),
                    subresources=client.V1CustomResourceSubresources(
                        status={},
                        scale=client.V1CustomResourceSubresourceScale(
                            spec_replicas_path=".spec.replicas",
                            status_replicas_path=".status.replicas",
                            label_selector_path=".status.selector",
                        ),
                    ),
                )
            ],
        ),
    )


def ensure_crd():
    ext = client.ApiextensionsV1Api()
    try:
        ext.create_custom_resource_definition(gadget_crd())
    except client.ApiException as e:
        if e.status != 409:
            raise

    def established():
        crd = ext.read_custom_resource_definition("%s.%s" % (PLURAL, GROUP))
        conds = {c.type: c.status for c in (crd.status.conditions or [])}
        return conds.get("Established") == "True" and conds.get("NamesAccepted") == "True"

    eventually(established, "the CRD to be established")
    eventually(
        lambda: client.CustomObjectsApi().list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL) is not None,
        "the resource to be served",
    )


def gadget(name, color="green", **spec):
    return {
        "apiVersion": "%s/%s" % (GROUP, VERSION),
        "kind": "Gadget",
        "metadata": {"name": name, "labels": {"suite": "python"}},
        "spec": dict(color=color, **spec),
    }


def crd_and_custom_objects():
    ensure_crd()
    ext = client.ApiextensionsV1Api()
    crd = ext.read_custom_resource_definition("%s.%s" % (PLURAL, GROUP))
    eq(crd.status.accepted_names.kind, "Gadget", "acceptedNames")
    eq(crd.status.stored_versions, ["v1"], "storedVersions")
    listed = ext.list_custom_resource_definition(field_selector="metadata.name=%s.%s" % (PLURAL, GROUP))
    eq(len(listed.items), 1, "the CRD by field selector")

    co = client.CustomObjectsApi()
    created = co.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, gadget("g1"))
    eq(created["spec"], {"color": "green", "replicas": 1}, "a created object, defaulted")
    check(created["metadata"]["uid"], "a uid")
    eq(created["metadata"]["generation"], 1, "generation")

    got = co.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "g1")
    eq(got["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"], "get")

    for i in range(2, 6):
        co.create_namespaced_custom_object(
            GROUP, VERSION, NS, PLURAL, gadget("g%d" % i, color="red" if i % 2 else "blue")
        )
    co.patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "g3", {"metadata": {"labels": {"odd": "yes"}}}
    )
    items = co.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, label_selector="suite=python,odd")["items"]
    eq([x["metadata"]["name"] for x in items], ["g3"], "a label selector")
    items = co.list_cluster_custom_object(GROUP, VERSION, PLURAL, field_selector="metadata.name=g4")["items"]
    eq([x["metadata"]["name"] for x in items], ["g4"], "a field selector across namespaces")

    first = co.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, limit=2)
    eq([x["metadata"]["name"] for x in first["items"]], ["g1", "g2"], "first page")
    eq(first["metadata"]["remainingItemCount"], 3, "remainingItemCount")
    names = [x["metadata"]["name"] for x in first["items"]]
    token = first["metadata"]["continue"]
    while token:
        page = co.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, limit=2, _continue=token)
        names += [x["metadata"]["name"] for x in page["items"]]
        token = page["metadata"].get("continue")
    eq(names, ["g1", "g2", "g3", "g4", "g5"], "every page")

    got["spec"]["tags"] = ["a", "b"]
    replaced = co.replace_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "g1", got)
    eq(replaced["spec"]["tags"], ["a", "b"], "after a replace")
    eq(replaced["metadata"]["generation"], 2, "a spec change moves the generation on")
    status_of(
        failure(co.replace_namespaced_custom_object, GROUP, VERSION, NS, PLURAL, "g1", got),
        409,
        "Conflict",
        'Operation cannot be fulfilled on gadgets.py.example.com "g1": the object has been modified; '
        "please apply your changes to the latest version and try again",
    )

    # CustomObjectsApi sends merge patches; a JSON patch needs the content type set.
    patched = co.patch_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "g1", {"spec": {"tags": ["c"]}})
    eq(patched["spec"]["tags"], ["c"], "a merge patch replaces a list")
    jp = client.CustomObjectsApi(api_client("application/json-patch+json"))
    patched = jp.patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "g1", [{"op": "add", "path": "/spec/tags/-", "value": "d"}]
    )
    eq(patched["spec"]["tags"], ["c", "d"], "after a JSON patch")
    # Custom resources have no strategic merge patch.
    smp = client.CustomObjectsApi(api_client("application/strategic-merge-patch+json"))
    status_of(
        failure(smp.patch_namespaced_custom_object, GROUP, VERSION, NS, PLURAL, "g1", {"spec": {"replicas": 2}}),
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    )

    # Schema validation.
    bad = status_of(
        failure(co.create_namespaced_custom_object, GROUP, VERSION, NS, PLURAL, gadget("bad", color="pink")),
        422,
        "Invalid",
    )
    eq(
        [(c["reason"], c["field"]) for c in bad["details"]["causes"]],
        [("FieldValueNotSupported", "spec.color")],
        "the cause of a value outside the enum",
    )
    eq(bad["details"]["group"], GROUP, "details.group")
    eq(bad["details"]["kind"], "Gadget", "details.kind")
    missing = gadget("bad")
    del missing["spec"]["color"]
    bad = status_of(failure(co.create_namespaced_custom_object, GROUP, VERSION, NS, PLURAL, missing), 422, "Invalid")
    eq(
        [(c["reason"], c["field"]) for c in bad["details"]["causes"]],
        [("FieldValueRequired", "spec.color")],
        "the cause of a missing required field",
    )
    status_of(
        failure(co.get_namespaced_custom_object, GROUP, VERSION, NS, PLURAL, "nope"),
        404,
        "NotFound",
        'gadgets.py.example.com "nope" not found',
    )

    co.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "g5", propagation_policy="Background")
    check(gone(co.get_namespaced_custom_object, GROUP, VERSION, NS, PLURAL, "g5"), "deleted")
    # 22.x's delete_collection takes no selector: it deletes every gadget of the namespace.
    co.delete_collection_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)
    eq(co.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL)["items"], [], "deletecollection")


def custom_status_and_scale():
    ensure_crd()
    co = client.CustomObjectsApi()
    co.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, gadget("s1", replicas=2))

    # The status subresource changes only the status (and ignores the spec)...
    patched = co.patch_namespaced_custom_object_status(
        GROUP,
        VERSION,
        NS,
        PLURAL,
        "s1",
        {"spec": {"color": "red"}, "status": {"phase": "Ready", "replicas": 2, "selector": "app=s1"}},
    )
    eq(patched["status"], {"phase": "Ready", "replicas": 2, "selector": "app=s1"}, "status after patch_status")
    eq(patched["spec"]["color"], "green", "patch_status ignores the spec")
    eq(patched["metadata"]["generation"], 1, "a status change keeps the generation")
    got = co.get_namespaced_custom_object_status(GROUP, VERSION, NS, PLURAL, "s1")
    eq(got["status"]["phase"], "Ready", "get_status")

    # ...and the main resource ignores the status.
    got["status"]["phase"] = "Hacked"
    got["spec"]["replicas"] = 3
    replaced = co.replace_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "s1", got)
    eq(replaced["status"]["phase"], "Ready", "a replace of the main resource ignores the status")
    eq(replaced["spec"]["replicas"], 3, "...and takes the spec")

    replaced["status"]["phase"] = "Done"
    after = co.replace_namespaced_custom_object_status(GROUP, VERSION, NS, PLURAL, "s1", replaced)
    eq(after["status"]["phase"], "Done", "replace_status")
    # A status of the wrong type is refused by the schema.
    status_of(
        failure(
            co.patch_namespaced_custom_object_status,
            GROUP,
            VERSION,
            NS,
            PLURAL,
            "s1",
            {"status": {"replicas": "many"}},
        ),
        422,
        "Invalid",
    )

    scale = co.get_namespaced_custom_object_scale(GROUP, VERSION, NS, PLURAL, "s1")
    eq(scale["kind"], "Scale", "the scale subresource")
    eq(scale["spec"]["replicas"], 3, "spec.replicas of the scale")
    eq(scale["status"], {"replicas": 2, "selector": "app=s1"}, "status of the scale")
    scaled = co.patch_namespaced_custom_object_scale(GROUP, VERSION, NS, PLURAL, "s1", {"spec": {"replicas": 5}})
    eq(scaled["spec"]["replicas"], 5, "after patching the scale")
    eq(co.get_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "s1")["spec"]["replicas"], 5, "scale writes spec")
    co.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "s1")


def crd_deletion():
    """Deleting the CRD removes its objects and stops serving them."""
    ensure_crd()
    co = client.CustomObjectsApi()
    co.create_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, gadget("doomed"))
    ext = client.ApiextensionsV1Api()
    ext.delete_custom_resource_definition("%s.%s" % (PLURAL, GROUP))
    eventually(lambda: gone(ext.read_custom_resource_definition, "%s.%s" % (PLURAL, GROUP)), "the CRD to go")
    # Its group is served no more: the plain-text 404 of any unknown path.
    page_not_found(failure(co.list_namespaced_custom_object, GROUP, VERSION, NS, PLURAL))


if __name__ == "__main__":
    run(
        {
            "crd_and_custom_objects": crd_and_custom_objects,
            "custom_status_and_scale": custom_status_and_scale,
            "crd_deletion": crd_deletion,
        }
    )
