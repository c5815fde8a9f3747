"""A package revision's life driven with the official Kubernetes Python client.

Run by tests/python_client.rs against a real porch-server with an empty registered
repository `deployments` in NAMESPACE: init a draft, edit its resources, propose, approve
through the approval subresource, and dry-run deletes (query string and DeleteOptions body)
of revisions, Secrets and a Namespace that must delete nothing.

usage: lifecycle.py KUBECONFIG NAMESPACE
"""

import sys
import time

from kubernetes import client, config
from kubernetes.client.rest import ApiException

KUBECONFIG, NS = sys.argv[1], sys.argv[2]
config.load_kube_config(config_file=KUBECONFIG)
api = client.ApiClient()
custom = client.CustomObjectsApi(api)
core = client.CoreV1Api(api)
PORCH = ("porch.kpt.dev", "v1alpha1")


def step(text):
    print("step:", text, flush=True)


def revision(name):
    return custom.get_namespaced_custom_object(*PORCH, NS, "packagerevisions", name)


def expect_status(code, call):
    try:
        call()
    except ApiException as e:
        assert e.status == code, (e.status, e.body)
        return e
    raise AssertionError(f"expected HTTP {code}")


step("init a draft")
pr = custom.create_namespaced_custom_object(
    *PORCH,
    NS,
    "packagerevisions",
    {
        "apiVersion": "porch.kpt.dev/v1alpha1",
        "kind": "PackageRevision",
        "metadata": {"namespace": NS},
        "spec": {
            "packageName": "py-pkg",
            "workspaceName": "ws",
            "repository": "deployments",
            "tasks": [{"type": "init", "init": {"description": "from python"}}],
        },
    },
)
name = pr["metadata"]["name"]
assert name == "deployments.py-pkg.ws", name
assert pr["spec"]["lifecycle"] == "Draft", pr["spec"]

step("edit its resources: a ConfigMap added, rendered, read back")
prr = custom.get_namespaced_custom_object(*PORCH, NS, "packagerevisionresources", name)
assert "Kptfile" in prr["spec"]["resources"], list(prr["spec"]["resources"])
prr["spec"]["resources"]["cm.yaml"] = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: py\ndata:\n  k: v\n"
)
updated = custom.replace_namespaced_custom_object(
    *PORCH, NS, "packagerevisionresources", name, prr
)
assert "cm.yaml" in updated["spec"]["resources"], list(updated["spec"]["resources"])
again = custom.get_namespaced_custom_object(*PORCH, NS, "packagerevisionresources", name)
assert "name: py" in again["spec"]["resources"]["cm.yaml"], again["spec"]["resources"]

step("a stale PackageRevisionResources write is a 409 and changes nothing")
prr["spec"]["resources"]["other.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: o\n"
expect_status(
    409,
    lambda: custom.replace_namespaced_custom_object(
        *PORCH, NS, "packagerevisionresources", name, prr
    ),
)
now = custom.get_namespaced_custom_object(*PORCH, NS, "packagerevisionresources", name)
assert "other.yaml" not in now["spec"]["resources"], list(now["spec"]["resources"])

step("propose, then approve through the approval subresource")
current = revision(name)
current["spec"]["lifecycle"] = "Proposed"
proposed = custom.replace_namespaced_custom_object(*PORCH, NS, "packagerevisions", name, current)
assert proposed["spec"]["lifecycle"] == "Proposed", proposed["spec"]
proposed["spec"]["lifecycle"] = "Published"
published = api.call_api(
    f"/apis/porch.kpt.dev/v1alpha1/namespaces/{NS}/packagerevisions/{name}/approval",
    "PUT",
    body=proposed,
    response_type="object",
    auth_settings=["BearerToken"],
    _return_http_data_only=True,
)
assert published["spec"]["lifecycle"] == "Published", published["spec"]
assert published["spec"]["revision"] == 1, published["spec"]
latest = revision(name)["metadata"]["labels"].get("kpt.dev/latest-revision")
assert latest == "true", revision(name)["metadata"]

step("dry-run deletes delete nothing: revision, Secret, Namespace (query and body)")
# A dry run answers what the real call would: a published revision is not deletable.
expect_status(
    403,
    lambda: custom.delete_namespaced_custom_object(
        *PORCH, NS, "packagerevisions", name, dry_run="All"
    ),
)
assert revision(name)["spec"]["lifecycle"] == "Published"
draft = custom.create_namespaced_custom_object(
    *PORCH,
    NS,
    "packagerevisions",
    {
        "apiVersion": "porch.kpt.dev/v1alpha1",
        "kind": "PackageRevision",
        "metadata": {"namespace": NS},
        "spec": {
            "packageName": "py-pkg",
            "workspaceName": "ws2",
            "repository": "deployments",
            "tasks": [{"type": "edit", "edit": {"sourceRef": {"name": name}}}],
        },
    },
)["metadata"]["name"]
custom.delete_namespaced_custom_object(*PORCH, NS, "packagerevisions", draft, dry_run="All")
custom.delete_namespaced_custom_object(
    *PORCH, NS, "packagerevisions", draft, body=client.V1DeleteOptions(dry_run=["All"])
)
assert revision(draft)["spec"]["lifecycle"] == "Draft"
custom.delete_namespaced_custom_object(*PORCH, NS, "packagerevisions", draft)
expect_status(404, lambda: revision(draft))
core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py-ns")))
core.create_namespaced_secret(
    "py-ns",
    client.V1Secret(
        metadata=client.V1ObjectMeta(name="s"), string_data={"username": "u", "password": "p"}
    ),
)
core.delete_namespaced_secret("s", "py-ns", body=client.V1DeleteOptions(dry_run=["All"]))
core.delete_namespaced_secret("s", "py-ns", dry_run="All")
core.delete_namespace("py-ns", body=client.V1DeleteOptions(dry_run=["All"]))
assert core.read_namespaced_secret("s", "py-ns").data["username"] == "dQ==", "u in base64"
assert core.read_namespace("py-ns").status.phase == "Active"

step("a real delete of the namespace removes it with its Secret")
core.delete_namespace("py-ns")


def gone():
    try:
        core.read_namespace("py-ns")
        return False
    except ApiException as e:
        return e.status == 404


deadline = time.time() + 30
while not gone():
    assert time.time() < deadline, "namespace still there"
    time.sleep(0.2)
expect_status(404, lambda: core.read_namespaced_secret("s", "py-ns"))
print("ok", flush=True)
