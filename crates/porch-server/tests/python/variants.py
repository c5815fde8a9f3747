"""PackageVariant and PackageVariantSet driven with the official Kubernetes Python client.

Run by tests/python_client.rs against a real porch-server whose namespace holds a published
upstream `blueprints.foo.v1` and an empty `deployments` repository. Each step asserts what
kube-apiserver and Porch would answer; the first failed assertion ends the run with a trace.

usage: variants.py KUBECONFIG NAMESPACE
"""

import sys
import time

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

KUBECONFIG, NS = sys.argv[1], sys.argv[2]
config.load_kube_config(config_file=KUBECONFIG)
api = client.ApiClient()
custom = client.CustomObjectsApi(api)
core = client.CoreV1Api(api)

PORCH = ("porch.kpt.dev", "v1alpha1")
CONFIG = ("config.porch.kpt.dev", "v1alpha1")
SETS = ("config.porch.kpt.dev", "v1alpha2")


def step(text):
    print("step:", text, flush=True)


def eventually(what, check, timeout=60.0):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = check()
            if last:
                return last
        except ApiException as e:
            last = e
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}: last={last!r}")


def revisions():
    return custom.list_namespaced_custom_object(*PORCH, NS, "packagerevisions")["items"]


def revision(name):
    return custom.get_namespaced_custom_object(*PORCH, NS, "packagerevisions", name)


def variant(name):
    return custom.get_namespaced_custom_object(*CONFIG, NS, "packagevariants", name)


def condition(obj, kind):
    for c in obj.get("status", {}).get("conditions", []) or []:
        if c.get("type") == kind:
            return c
    return {}


def downstream(package):
    return [
        r
        for r in revisions()
        if r["spec"].get("repository") == "deployments" and r["spec"].get("packageName") == package
    ]


step("paging: limit and continue walk every revision once")
everything = {r["metadata"]["name"] for r in revisions()}
seen, token = [], None
while True:
    page = custom.list_namespaced_custom_object(
        *PORCH, NS, "packagerevisions", limit=1, _continue=token
    )
    seen += [r["metadata"]["name"] for r in page["items"]]
    token = page["metadata"].get("continue")
    if not token:
        break
assert sorted(seen) == sorted(everything), (seen, everything)
assert "blueprints.foo.v1" in everything, everything

step("a PackageVariant clones its upstream into a draft it owns")
pv = {
    "apiVersion": "config.porch.kpt.dev/v1alpha1",
    "kind": "PackageVariant",
    "metadata": {"name": "py-pv"},
    "spec": {
        "upstream": {"repo": "blueprints", "package": "foo", "revision": 1},
        "downstream": {"repo": "deployments", "package": "bar"},
        "labels": {"team": "a"},
    },
}
created = custom.create_namespaced_custom_object(*CONFIG, NS, "packagevariants", pv)
assert created["metadata"]["uid"], created
drafts = eventually("the downstream draft", lambda: downstream("bar"))
assert len(drafts) == 1, drafts
draft = drafts[0]
name = draft["metadata"]["name"]
assert name == "deployments.bar.packagevariant-1", name
owner = draft["metadata"]["ownerReferences"][0]
assert (owner["kind"], owner["name"], owner["uid"]) == (
    "PackageVariant",
    "py-pv",
    created["metadata"]["uid"],
), owner
assert draft["metadata"]["labels"]["team"] == "a", draft["metadata"]
ready = eventually(
    "Ready", lambda: condition(variant("py-pv"), "Ready").get("status") == "True" and variant("py-pv")
)
assert ready["status"]["downstreamTargets"][0]["name"] == name, ready["status"]
assert ready["metadata"]["finalizers"] == ["config.porch.kpt.dev/packagevariants"], ready["metadata"]

step("a watch from the list's resourceVersion sees the variant change once it is patched")
listed = custom.list_namespaced_custom_object(*CONFIG, NS, "packagevariants")
rv = listed["metadata"]["resourceVersion"]
custom.patch_namespaced_custom_object(
    *CONFIG, NS, "packagevariants", "py-pv", {"spec": {"labels": {"team": "b"}}}
)
w = watch.Watch()
events = []
for ev in w.stream(
    custom.list_namespaced_custom_object,
    *CONFIG,
    NS,
    "packagevariants",
    resource_version=rv,
    timeout_seconds=5,
):
    events.append((ev["type"], ev["object"]["metadata"]["name"], ev["object"]["spec"].get("labels")))
    if ev["object"]["spec"].get("labels") == {"team": "b"}:
        w.stop()
assert ("MODIFIED", "py-pv", {"team": "b"}) in events, events

step("a label change is no reason for a new draft (labels are set at creation, as upstream)")
time.sleep(1.0)
assert [r["metadata"]["name"] for r in downstream("bar")] == [name], downstream("bar")
assert revision(name)["metadata"]["labels"]["team"] == "a", revision(name)["metadata"]

step("a stale resourceVersion is a 409 Conflict")
current = variant("py-pv")
stale = dict(current)
stale["metadata"] = dict(current["metadata"], resourceVersion="1")
try:
    custom.replace_namespaced_custom_object(*CONFIG, NS, "packagevariants", "py-pv", stale)
    raise AssertionError("a stale replace succeeded")
except ApiException as e:
    assert e.status == 409, (e.status, e.body)

step("dry-run deletes (query string and DeleteOptions body) delete nothing")
custom.delete_namespaced_custom_object(*CONFIG, NS, "packagevariants", "py-pv", dry_run="All")
custom.delete_namespaced_custom_object(
    *CONFIG, NS, "packagevariants", "py-pv", body=client.V1DeleteOptions(dry_run=["All"])
)
assert variant("py-pv")["metadata"]["name"] == "py-pv"
assert revision(name)["metadata"]["name"] == name

step("a PackageVariantSet generates one variant per named package")
pvs = {
    "apiVersion": "config.porch.kpt.dev/v1alpha2",
    "kind": "PackageVariantSet",
    "metadata": {"name": "py-set"},
    "spec": {
        "upstream": {"repo": "blueprints", "package": "foo", "revision": 1},
        "targets": [{"repositories": [{"name": "deployments", "packageNames": ["s1", "s2"]}]}],
    },
}
created_set = custom.create_namespaced_custom_object(*SETS, NS, "packagevariantsets", pvs)


def generated():
    items = custom.list_namespaced_custom_object(*CONFIG, NS, "packagevariants")["items"]
    return sorted(
        i["metadata"]["name"]
        for i in items
        if any(o.get("uid") == created_set["metadata"]["uid"] for o in i["metadata"].get("ownerReferences", []))
    )


names = eventually("two generated variants", lambda: len(generated()) == 2 and generated())
assert names == ["py-set-deployments-s1", "py-set-deployments-s2"], names
eventually("their drafts", lambda: downstream("s1") and downstream("s2"))

step("deleting the set collects its variants and their drafts")
custom.delete_namespaced_custom_object(*SETS, NS, "packagevariantsets", "py-set")
eventually("the generated variants gone", lambda: generated() == [])
eventually("their drafts gone", lambda: not downstream("s1") and not downstream("s2"))

step("deleting the variant deletes its draft, then the variant itself")
custom.delete_namespaced_custom_object(*CONFIG, NS, "packagevariants", "py-pv")
eventually("the draft gone", lambda: downstream("bar") == [])


def gone():
    try:
        variant("py-pv")
        return False
    except ApiException as e:
        return e.status == 404


eventually("the variant gone", gone)
print("ok", flush=True)
