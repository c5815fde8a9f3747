#!/usr/bin/env python3
"""Generate crates/kpt/src/pkg/merge3/k8s_schema.rs: the parts of the built-in
Kubernetes OpenAPI schema that kpt's 3-way merge reads.

kpt 1.0.0-beta.56 merges with kyaml v0.15.0, which embeds the Kubernetes v1.21.2
OpenAPI document (gzip-compressed gnostic protobuf) and the Kustomization schema
(gzip-compressed JSON). kyaml's walker only uses, per schema node: `properties`,
`additionalProperties`, `items` (when `type` is exactly `array`), `$ref`, and the
`x-kubernetes-patch-strategy` / `x-kubernetes-list-map-keys` /
`x-kubernetes-patch-merge-key` extensions; and `x-kubernetes-group-version-kind` to
find the schema of a resource. This script reads both documents out of the installed
kpt binary (so the table is exactly what that kpt uses), keeps the schema nodes from
which a merge list is reachable and writes them as Rust statics.

Regenerate (Python 3 standard library only):

    python3 crates/kpt/scripts/gen_k8s_merge_schema.py [path/to/kpt] \
        > crates/kpt/src/pkg/merge3/k8s_schema.rs

(the module is declared `#[rustfmt::skip]`: one schema node per line).

The default kpt path is the one `google-cloud-cli-kpt` installs.
"""

import json
import sys
import zlib

KPT = "/usr/lib/google-cloud-sdk/bin/kpt"
GZIP_MAGIC = b"\x1f\x8b\x08\x00"


def gzip_streams(data):
    """Every gzip member in the binary that decompresses, with its text."""
    at = data.find(GZIP_MAGIC)
    while at >= 0:
        try:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out = d.decompress(data[at:at + 64 * 1024 * 1024])
            if d.eof:
                yield out
        except zlib.error:
            pass
        at = data.find(GZIP_MAGIC, at + 1)


# --- a minimal protobuf reader (wire format only) -------------------------------

def varint(b, p):
    r = s = 0
    while True:
        c = b[p]
        p += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, p


def fields(b):
    """(field number, value) pairs; length-delimited values as bytes."""
    p, out = 0, []
    while p < len(b):
        k, p = varint(b, p)
        num, wire = k >> 3, k & 7
        if wire == 0:
            v, p = varint(b, p)
        elif wire == 2:
            n, p = varint(b, p)
            v, p = b[p:p + n], p + n
        elif wire == 1:
            v, p = b[p:p + 8], p + 8
        elif wire == 5:
            v, p = b[p:p + 4], p + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        out.append((num, v))
    return out


def one(fs, num):
    vals = [v for n, v in fs if n == num]
    return vals[0] if vals else None


def ext_yaml(text):
    """The YAML of a gnostic vendor extension: a scalar, a list of scalars or a
    list of flat maps (the only shapes the Kubernetes document uses)."""
    lines = [l for l in text.splitlines() if l.strip()]
    if not lines[0].startswith("- "):
        assert len(lines) == 1, text
        return lines[0].strip().strip('"')
    items = []
    for l in lines:
        body = l[2:] if l.startswith("- ") else l.strip()
        if l.startswith("- "):
            items.append(None)
        if ": " in body or body.endswith(":"):
            k, _, v = body.partition(":")
            if items[-1] is None:
                items[-1] = {}
            items[-1][k.strip()] = v.strip().strip('"')
        else:
            items[-1] = body.strip().strip('"')
    return items


# gnostic openapi_v2.Schema field numbers used below.
S_REF, S_ADDITIONAL, S_TYPE, S_ITEMS, S_PROPERTIES, S_EXT = 1, 21, 22, 23, 25, 31


def proto_schema(b):
    """A gnostic Schema message as the JSON-shaped dict kyaml would see."""
    fs = fields(b)
    s = {}
    ref = one(fs, S_REF)
    if ref is not None:
        s["$ref"] = ref.decode()
    t = one(fs, S_TYPE)
    if t is not None:
        s["type"] = [v.decode() for n, v in fields(t) if n == 1]
    items = one(fs, S_ITEMS)
    if items is not None:
        schemas = [proto_schema(v) for n, v in fields(items) if n == 1]
        s["items"] = schemas[0] if len(schemas) == 1 else schemas
    add = one(fs, S_ADDITIONAL)
    if add is not None:
        inner = one(fields(add), 1)
        s["additionalProperties"] = proto_schema(inner) if inner is not None else False
    props = one(fs, S_PROPERTIES)
    if props is not None:
        s["properties"] = {}
        for n, v in fields(props):
            if n == 1:
                named = fields(v)
                s["properties"][one(named, 1).decode()] = proto_schema(one(named, 2))
    for n, v in fs:
        if n == S_EXT:
            named = fields(v)
            yaml_text = one(fields(one(named, 2)), 2).decode()
            s[one(named, 1).decode()] = ext_yaml(yaml_text)
    return s


def proto_definitions(doc):
    defs = {}
    for n, v in fields(one(fields(doc), 9)):
        if n == 1:
            named = fields(v)
            defs[one(named, 1).decode()] = proto_schema(one(named, 2))
    return defs


def load(path):
    data = open(path, "rb").read()
    k8s = kust = None
    for out in gzip_streams(data):
        if out.startswith(b"\n\x032.0") and b"x-kubernetes-patch-strategy" in out:
            k8s = out
        elif out.lstrip().startswith(b"{") and b"kustomize.config.k8s.io" in out:
            kust = out
    if k8s is None or kust is None:
        sys.exit(f"{path}: embedded OpenAPI documents not found")
    info = fields(one(fields(k8s), 2))
    version = one(info, 2).decode()
    defs = proto_definitions(k8s)
    # kyaml adds the Kustomization definitions after the Kubernetes ones.
    defs.update(json.loads(kust)["definitions"])
    return version, defs


# --- the schema graph kyaml walks ------------------------------------------------

def types(s):
    t = s.get("type", [])
    return [t] if isinstance(t, str) else t


class Graph:
    def __init__(self, defs):
        self.defs = defs
        self.nodes = []  # schema dicts, after $ref resolution
        self.ids = {}  # id(dict) -> node index

    def resolve(self, s):
        while isinstance(s, dict) and "$ref" in s:
            s = self.defs.get(s["$ref"].rsplit("/", 1)[-1])
        return s

    def node(self, s):
        s = self.resolve(s)
        if not isinstance(s, dict):
            return None
        if id(s) not in self.ids:
            self.ids[id(s)] = len(self.nodes)
            self.nodes.append(s)
        return self.ids[id(s)]

    def children(self, i):
        """(props {name: node}, additional node, items node) of node i."""
        s = self.nodes[i]
        props = {k: self.node(v) for k, v in s.get("properties", {}).items()}
        add = s.get("additionalProperties")
        add = self.node(add) if isinstance(add, dict) else None
        items = None
        if types(s) == ["array"] and isinstance(s.get("items"), dict):
            items = self.node(s["items"])
        return props, add, items


def merge_keys(s):
    """kyaml `PatchStrategyAndKeyList` when the strategy includes `merge`."""
    strategy = s.get("x-kubernetes-patch-strategy")
    if strategy is None or "merge" not in strategy.split(","):
        return None
    if "x-kubernetes-list-map-keys" in s:
        return list(s["x-kubernetes-list-map-keys"])
    if "x-kubernetes-patch-merge-key" in s:
        return [s["x-kubernetes-patch-merge-key"]]
    return []


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else KPT
    version, defs = load(path)
    g = Graph(defs)
    kinds = {}
    for name in sorted(defs):
        for gvk in defs[name].get("x-kubernetes-group-version-kind", []):
            api = gvk["version"] if not gvk.get("group") else f'{gvk["group"]}/{gvk["version"]}'
            kinds[(api, gvk["kind"])] = g.node(defs[name])
    # Discover every node reachable from a kind, then keep those that reach a merge list.
    edges, todo, seen = {}, list(set(kinds.values())), set()
    while todo:
        i = todo.pop()
        if i in seen:
            continue
        seen.add(i)
        edges[i] = g.children(i)
        props, add, items = edges[i]
        todo.extend(c for c in [*props.values(), add, items] if c is not None)
    relevant = {i for i in seen if merge_keys(g.nodes[i]) is not None}
    changed = True
    while changed:
        changed = False
        for i in seen - relevant:
            props, add, items = edges[i]
            if any(c in relevant for c in [*props.values(), add, items]):
                relevant.add(i)
                changed = True
    order = sorted(relevant, key=lambda i: (i not in kinds.values(), i))
    index = {n: k for k, n in enumerate(order)}

    def child(c):
        if c is None:
            return "X"
        if c in index:
            return f"N({index[c]})"
        return "O"

    out = []
    w = out.append
    w(f"//! The built-in Kubernetes {version} schema as kpt 1.0.0-beta.56 (kyaml v0.15.0)")
    w("//! merges with it, plus kyaml's Kustomization schema: only the schema nodes from")
    w("//! which a list with `x-kubernetes-patch-strategy: merge` is reachable.")
    w("//!")
    w("//! @generated by `crates/kpt/scripts/gen_k8s_merge_schema.py` from the OpenAPI")
    w("//! documents embedded in the kpt binary. Do not edit; regenerate instead.")
    w("")
    w("use super::builtin::Child::{N, O, X};")
    w("use super::builtin::Def;")
    w("")
    w("/// Schema nodes: merge keys, sorted properties, additionalProperties, items.")
    w(f"pub(super) static DEFS: [Def; {len(order)}] = [")
    for i in order:
        props, add, items = edges[i]
        keys = merge_keys(g.nodes[i])
        merge = "None" if keys is None else "Some(&[" + ", ".join(json.dumps(k) for k in keys) + "])"
        ps = ", ".join(f"({json.dumps(k)}, {child(props[k])})" for k in sorted(props))
        w(f"    Def {{ merge: {merge}, props: &[{ps}], more: {child(add)}, items: {child(items)} }},")
    w("];")
    w("")
    w("/// `(apiVersion, kind)` of every built-in type, sorted, with its schema.")
    w(f"pub(super) static KINDS: [(&str, &str, super::builtin::Child); {len(kinds)}] = [")
    for (api, kind) in sorted(kinds):
        w(f"    ({json.dumps(api)}, {json.dumps(kind)}, {child(kinds[(api, kind)])}),")
    w("];")
    print("\n".join(out))


if __name__ == "__main__":
    main()
