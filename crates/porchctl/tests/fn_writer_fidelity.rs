//! What `fn render` writes back into files it read, where real packages showed kpt
//! and us apart (174 files of public kpt packages — Config Connector blueprints, Nephio
//! catalogs, kpt's examples — rendered by kpt 1.0.0-beta.56 and by porchctl):
//!
//! - comments keep their trailing blanks;
//! - comments inside flow collections come back where go-yaml puts them;
//! - an annotation kpt sets keeps the style of the value it replaces (kyaml's
//!   `AnnotationSetter`), and loses that value's comment;
//! - kyaml's writer drops an `annotations` or `metadata` field left empty, so a
//!   kustomization without metadata stays without;
//! - a `metadata` that is no mapping is refused with kyaml's `ErrorIfInvalid` text and
//!   the file is left alone;
//! - around a function call (a further 250 files of Kubernetes manifests through
//!   `exec:` functions): a document's head and foot comments are not handed to the
//!   function and come back as they were; a folded scalar the comment copier visits in
//!   a plain list's element comes back double-quoted; a line comment go-yaml's encoder
//!   leaves pending at the end of a document (a block list's) opens the next one, in
//!   files and in `-o unwrap`'s stream alike.
//!
//! Expected texts are what kpt 1.0.0-beta.56 writes for the same inputs (with kpt
//! HEAD's `krm-fn` attribution and error wording where the two differ).

mod pkgfix;
use pkgfix::{package, porchctl, read, render};

const NO_PIPELINE: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\n";

/// Renders a package of `Kptfile` and `r.yaml` holding `text`.
fn render_file(text: &str) -> (i32, String, String) {
    let (_tmp, dir) = package(&[("Kptfile", NO_PIPELINE), ("r.yaml", text)]);
    let (code, stderr) = render(&dir, &[]);
    (code, stderr, read(&dir, "r.yaml"))
}

#[test]
fn comments_keep_their_blanks_and_flow_comments_their_place() {
    let input = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c   \n  annotations:\n    a: plain # trailing   \ndata:\n  list: [\n    \"a\", # first  \n    # head of b\n    \"b\"\n  ]\n  map: {k: v, # after k\n    j: w}\n";
    let kpt = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    a: plain # trailing   \ndata:\n  list: [\"a\", # first  \n    # head of b\n    \"b\"]\n  map: {k: v, # after k\n    j: w}\n";
    let (code, stderr, out) = render_file(input);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out, kpt);
}

#[test]
fn attribution_keeps_the_style_of_the_value_it_replaces() {
    let bucket = |ann: &str| {
        format!(
            "apiVersion: storage.cnrm.cloud.google.com/v1beta1\nkind: StorageBucket\nmetadata:\n  name: b\n{ann}spec:\n  location: EU\n"
        )
    };
    for (given, written) in [
        (
            "",
            "  annotations:\n    cnrm.cloud.google.com/blueprint: 'krm-fn'\n",
        ),
        (
            "  annotations:\n    cnrm.cloud.google.com/blueprint: cnrm/x/v0.4.0\n",
            "  annotations:\n    cnrm.cloud.google.com/blueprint: cnrm/x/v0.4.0,krm-fn\n",
        ),
        (
            "  annotations:\n    cnrm.cloud.google.com/blueprint: \"cnrm/x/v0.4.0\" # why\n",
            "  annotations:\n    cnrm.cloud.google.com/blueprint: \"cnrm/x/v0.4.0,krm-fn\"\n",
        ),
    ] {
        let (code, stderr, out) = render_file(&bucket(given));
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(out, bucket(written), "{given}");
    }
}

#[test]
fn empty_metadata_is_not_written() {
    let kustomization = |meta: &str| {
        format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n{meta}resources:\n- deployment.yaml\n"
        )
    };
    for meta in [
        "",
        "metadata: {}\n",
        "metadata:\n",
        "metadata:\n  annotations: {}\n",
    ] {
        let (code, stderr, out) = render_file(&kustomization(meta));
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(out, kustomization(""), "{meta}");
    }
    // Other fields keep the metadata; an annotations field with nothing in it goes.
    let (code, stderr, out) = render_file(&kustomization(
        "metadata:\n  labels: {a: b}\n  annotations: []\n",
    ));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out, kustomization("metadata:\n  labels: {a: b}\n"));
}

#[test]
fn metadata_that_is_no_mapping_is_refused_and_left_alone() {
    for (meta, error) in [
        (
            "metadata: [a]\n",
            "wrong node kind: expected MappingNode but got SequenceNode: node contents:\n[a]\n",
        ),
        (
            "metadata: x\n",
            "wrong node kind: expected MappingNode but got ScalarNode: node contents:\nx\n",
        ),
        (
            "metadata:\n  name: a\n  annotations: [x]\n",
            "wrong node kind: expected MappingNode but got SequenceNode: node contents:\n[x]\n",
        ),
    ] {
        let text = format!("apiVersion: v1\nkind: A\n{meta}");
        let (code, stderr, out) = render_file(&text);
        assert_eq!(code, 1, "{meta}");
        assert!(
            stderr.contains(&format!("r.yaml: {error}")),
            "{meta}: {stderr}"
        );
        assert_eq!(out, text);
    }
}

/// A package whose pipeline runs `fn.sh` (a shell script, by absolute path) on `r.yaml`.
fn render_with_function(script: &str, text: &str) -> (i32, String, String) {
    let (_tmp, dir) = package(&[("fn.sh", script), ("r.yaml", text)]);
    let kptfile = format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n    - exec: {}\n",
        dir.join("fn.sh").display()
    );
    std::fs::write(dir.join("Kptfile"), kptfile).expect("write Kptfile");
    let (code, stderr) = render(&dir, &["--allow-exec"]);
    (code, stderr, read(&dir, "r.yaml"))
}

const CAT: &str = "#!/bin/sh\ncat\n";

/// Renders `text` through `script` and checks the file comes back as `kpt` wrote it.
fn assert_renders_as(script: &str, text: &str, kpt: &str) {
    let (code, stderr, out) = render_with_function(script, text);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out, kpt);
}

/// A function that rewrites B's flow list `[get] # D` as a block list without its
/// comment, and the two resources it runs on.
const FLOW_TO_BLOCK: &str = "#!/bin/sh\nsed 's/verbs: \\[get\\] # D/verbs:\\n      - get/'\n";
const B_THEN_C: &str = "apiVersion: v1\nkind: B\nmetadata:\n  name: b\nrules:\n- verbs: [get] # D\n---\napiVersion: v1\nkind: C\nmetadata:\n  name: c\n";

#[test]
fn document_comments_stay_out_of_the_call_and_come_back() {
    // The foot after a blank line was written into the ResourceList and came back as
    // the next resource's head as well.
    let text = "apiVersion: v1\nkind: A\nmetadata:\n  name: a\nspec:\n  x: 1\n\n\n# trailing comment\n---\n# C1\n# C2\n\n# EX\n\napiVersion: v1\nkind: B\nmetadata:\n  name: b\n";
    let kpt = "apiVersion: v1\nkind: A\nmetadata:\n  name: a\nspec:\n  x: 1\n\n# trailing comment\n---\n# C1\n# C2\n\n# EX\napiVersion: v1\nkind: B\nmetadata:\n  name: b\n";
    assert_renders_as(CAT, text, kpt);
}

#[test]
fn a_folded_scalar_in_a_plain_lists_element_comes_back_double_quoted() {
    let text = "apiVersion: v1\nkind: A\nmetadata:\n  name: a\nspec:\n  validations:\n  - expression: >-\n      a long\n      text\n  - expression: plain\n";
    let kpt = "apiVersion: v1\nkind: A\nmetadata:\n  name: a\nspec:\n  validations:\n  - expression: \"a long text\"\n  - expression: plain\n";
    assert_renders_as(CAT, text, kpt);
}

#[test]
fn a_pending_line_comment_opens_the_next_document() {
    // The function writes the flow list as a block list without its comment; the comment
    // copied back onto the block list is one go-yaml's encoder only writes later.
    let kpt = "apiVersion: v1\nkind: B\nmetadata:\n  name: b\nrules:\n- verbs:\n  - get\n---\n# D\napiVersion: v1\nkind: C\nmetadata:\n  name: c\n";
    assert_renders_as(FLOW_TO_BLOCK, B_THEN_C, kpt);
}

#[test]
fn unwrapped_output_is_one_stream_with_the_pending_comment() {
    // `-o unwrap` writes through one encoder too (kyaml's ByteWriter), so the comment
    // left pending by B's block list opens C there as well. kpt 1.0.0-beta.56 lists the
    // Kptfile first; kpt HEAD's render lists a package's Kptfile last (COMPATIBILITY.md).
    let (_tmp, dir) = package(&[("fn.sh", FLOW_TO_BLOCK), ("r.yaml", B_THEN_C)]);
    let kptfile = format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n    - exec: {}\n",
        dir.join("fn.sh").display()
    );
    std::fs::write(dir.join("Kptfile"), &kptfile).expect("write Kptfile");
    let path = dir.to_str().expect("utf8 path");
    let (code, stdout, stderr) = porchctl(
        &dir,
        &["fn", "render", path, "--allow-exec", "-o", "unwrap"],
    );
    assert_eq!(code, 0, "{stderr}");
    let kpt = "apiVersion: v1\nkind: B\nmetadata:\n  name: b\nrules:\n- verbs:\n  - get\n---\n# D\napiVersion: v1\nkind: C\nmetadata:\n  name: c\n---\n";
    assert_eq!(stdout, format!("{kpt}{kptfile}"));
    // Out of place: the package itself is untouched.
    assert_eq!(read(&dir, "r.yaml"), B_THEN_C);
}

#[test]
fn a_foot_comment_the_resource_list_moves_comes_back_once() {
    // In the ResourceList this comment is at column 2, right after the list item: go-yaml
    // reads it as the item's last key's foot, and the copier restores the input's foot
    // on `ports` as well. kpt 1.0.0-beta.56 writes it once only for the ResourceList's
    // last item; we write it once, where it was, for every resource.
    let one = "apiVersion: v1\nkind: A\nmetadata:\n  name: a\nports:\n- containerPort: 80\n# - containerPort: 443\n";
    let two = format!("{one}---\napiVersion: v1\nkind: B\nmetadata:\n  name: b\n");
    for text in [one.to_string(), two] {
        assert_renders_as(CAT, &text, &text);
    }
}

#[test]
fn a_comment_on_a_later_document_marker_goes_with_kyamls_split() {
    // kyaml cuts a stream at every later `---` line, taking the line whole; the first
    // line's marker reaches go-yaml, whose comment heads the document.
    let text = "--- # c\napiVersion: v1\nkind: A\nmetadata:\n  name: x\n--- # d\napiVersion: v1\nkind: B\nmetadata:\n  name: y\n";
    let kpt = "# c\napiVersion: v1\nkind: A\nmetadata:\n  name: x\n---\napiVersion: v1\nkind: B\nmetadata:\n  name: y\n";
    let (code, stderr, out) = render_file(text);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out, kpt);
}
