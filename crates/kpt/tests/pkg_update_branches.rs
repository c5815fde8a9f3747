//! Branches of the 3-way merge and of the replacing strategies that kpt HEAD's own
//! tests pin down (its `Visitor`, its `NullPreservingVisitor` with the pre-pass for
//! local `null` lists, and the Kptfile handling of fast-forward and
//! force-delete-replace), each on this file's own resources.

use kpt::kptfile::Kptfile;
use kpt::package::PackageFiles;
use kpt::pkg::merge3::{MergeOptions, SchemaRegistry, merge_nodes, merge_resources};
use kpt::pkg::update::{Strategy, UpdateOptions, update_package};
use kpt::yaml::{Node, SeqIndent, emit_node, parse_one};

/// kyaml's rules (kpt 1.0.0-beta), kpt HEAD's `Visitor`, its null-preserving one.
fn kyaml() -> MergeOptions {
    MergeOptions::default()
}
fn head() -> MergeOptions {
    MergeOptions {
        keep_tagged_null: true,
        ..MergeOptions::default()
    }
}
fn preserving() -> MergeOptions {
    MergeOptions {
        keep_tagged_null: true,
        preserve_explicit_null: true,
        ..MergeOptions::default()
    }
}

/// The bare walk of three documents (no resource matching, no pre-pass).
fn walk(opts: &MergeOptions, o: &str, u: &str, d: &str) -> String {
    let p = |s: &str| parse_one(s).expect("yaml");
    let out = merge_nodes(
        Some(&p(d)),
        Some(&p(o)),
        Some(&p(u)),
        &SchemaRegistry::default(),
        opts,
    )
    .expect("merge");
    out.map(|n| emit_node(&n, SeqIndent::Compact))
        .unwrap_or_default()
}

/// The resource merge of one resource per side (`o` may be empty: added upstream).
fn merge_one(opts: &MergeOptions, o: &str, u: &str, d: &str) -> String {
    let p = |s: &str| -> Vec<Node> {
        if s.is_empty() {
            Vec::new()
        } else {
            vec![parse_one(s).expect("yaml")]
        }
    };
    let out = merge_resources(p(o), p(u), p(d), &SchemaRegistry::default(), opts).expect("merge");
    assert_eq!(out.len(), 1, "one resource out");
    emit_node(&out[0], SeqIndent::Compact)
}

const POD_HEAD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: box\nspec:\n";

fn pod(volumes: &str) -> String {
    format!("{POD_HEAD}  volumes:{volumes}\n  restartPolicy: Never\n")
}

#[test]
fn a_local_null_on_a_keyed_list_clears_it_under_heads_rules_only() {
    let o = pod("\n  - name: data\n    emptyDir: {}");
    let u = pod("\n  - name: data\n    emptyDir: {}\n  - name: cache\n    emptyDir: {}");
    let d = pod(" null");
    // kyaml's list walk has no null rule: the local null list is rebuilt from
    // upstream's elements.
    let k = walk(&kyaml(), &o, &u, &d);
    assert!(k.contains("name: data") && k.contains("name: cache"), "{k}");
    // kpt HEAD: the local null clears a list origin had.
    let h = walk(&head(), &o, &u, &d);
    assert_eq!(h, format!("{POD_HEAD}  restartPolicy: Never\n"));
    // Origin already null: not a local deletion, upstream's list comes in.
    let h = walk(&head(), &pod(" null"), &u, &d);
    assert!(h.contains("name: cache") && h.contains("name: data"), "{h}");
}

#[test]
fn a_null_map_origin_also_had_is_dropped_by_head_and_kept_when_preserving() {
    let o = "labels: null\nkeep: 1\n";
    let u = "labels:\n  tier: web\nkeep: 1\n";
    let d = "labels: null\nkeep: 1\n";
    // kyaml: a local null clears; kpt HEAD keeps the null map to merge into, which
    // is then dropped as a null; the preserving visitor takes updated's map.
    assert_eq!(walk(&kyaml(), o, u, d), "keep: 1\n");
    assert_eq!(walk(&head(), o, u, d), "keep: 1\n");
    assert_eq!(
        walk(&preserving(), o, u, d),
        "labels:\n  tier: web\nkeep: 1\n"
    );
    // Null on every side: dropped, or kept as written when preserving.
    let all = "labels: ~\nkeep: 1\n";
    assert_eq!(walk(&head(), all, all, all), "keep: 1\n");
    assert_eq!(walk(&preserving(), all, all, all), all);
}

#[test]
fn heads_rules_compare_values_not_comments_or_quoting() {
    // A comment-only change upstream: kyaml takes updated's node (with its
    // comment) over an unchanged local; kpt HEAD keeps local.
    let o = "a: x\nb: [p, q]\n";
    let u = "a: x # note\nb: ['p', \"q\"]\n";
    let d = "a: x\nb: [p, r]\n";
    assert_eq!(walk(&kyaml(), o, u, d), "a: x # note\nb: ['p', \"q\"]\n");
    assert_eq!(walk(&head(), o, u, d), "a: x\nb: [p, r]\n");
    // A real change still wins under both; a quoted number is a new value.
    let u = "a: z\nb: [p, '1']\n";
    let o = "a: x\nb: [p, 1]\n";
    assert_eq!(walk(&head(), o, u, d), "a: z\nb: [p, '1']\n");
}

#[test]
fn preserving_writes_the_null_that_clears_as_it_was_spelled() {
    let o = "a: 1\nb: 2\nc: 3\nd: 4\n";
    let u = "a: ~\nb: 2\nc:\nd: 40\n";
    let d = "a: 10\nb: null\nc: 3\nd: 4\n";
    // kpt HEAD's Visitor removes each cleared field.
    assert_eq!(walk(&head(), o, u, d), "d: 40\n");
    // Updated's `~` and empty null and local's `null` stay.
    assert_eq!(walk(&preserving(), o, u, d), "a: ~\nb: null\nc:\nd: 40\n");
    // A local null origin also had is not a deletion: updated's value comes in.
    assert_eq!(
        walk(&preserving(), "a: null\n", "a: 5\n", "a: null\n"),
        "a: 5\n"
    );
}

#[test]
fn preserving_keeps_a_local_null_list_through_the_resource_merge_only() {
    let o = pod("\n  - name: data\n    emptyDir: {}");
    let u = pod("\n  - name: data\n    emptyDir:\n      medium: Memory");
    let d = pod(" null");
    // The resource merge hides origin's and updated's list from the walk.
    assert_eq!(merge_one(&preserving(), &o, &u, &d), d);
    assert_eq!(merge_one(&preserving(), "", &u, &d), d);
    // Not when updated nulls it too, nor in the bare walk.
    let gone = format!("{POD_HEAD}  restartPolicy: Never\n");
    assert_eq!(merge_one(&preserving(), &o, &pod(" null"), &d), gone);
    assert_eq!(walk(&preserving(), &o, &u, &d), gone);
    // kpt HEAD's plain Visitor clears it in the resource merge as well.
    assert_eq!(merge_one(&head(), &o, &u, &d), gone);
}

fn files(entries: &[(&str, &str)]) -> PackageFiles {
    let mut f = PackageFiles::new();
    for (p, b) in entries {
        f.insert(*p, b.to_string());
    }
    f
}

#[test]
fn an_update_can_preserve_nulls() {
    let cm = |body: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\ndata:\n{body}")
    };
    let o = files(&[("cm.yaml", &cm("  x: \"1\"\n  y: \"2\"\n"))]);
    let u = files(&[("cm.yaml", &cm("  x: \"1\"\n  y: \"3\"\n"))]);
    let l = files(&[("cm.yaml", &cm("  x: ~\n  y: \"2\"\n"))]);
    let run = |merge: MergeOptions| {
        let opts = UpdateOptions {
            merge,
            add_identities: false,
        };
        let out = update_package(&o, &u, &l, Strategy::ResourceMerge, &opts).expect("update");
        out.get_text("cm.yaml").unwrap_or_default().to_string()
    };
    assert_eq!(run(preserving()), cm("  x: ~\n  y: \"3\"\n"));
    assert_eq!(run(head()), cm("  y: \"3\"\n"));
}

fn kptfile(upstream_ref: &str, lock: Option<&str>, extra: &str) -> String {
    let mut k = format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\nupstream:\n  type: git\n  git:\n    repo: https://example.com/r.git\n    directory: /app\n    ref: {upstream_ref}\n"
    );
    if let Some(c) = lock {
        k.push_str(&format!(
            "upstreamLock:\n  type: git\n  git:\n    repo: https://example.com/r.git\n    directory: /app\n    ref: {upstream_ref}\n    commit: {c}\n"
        ));
    }
    k.push_str(extra);
    k
}

fn read_kf(f: &PackageFiles) -> Kptfile {
    Kptfile::parse(f.get_text("Kptfile").expect("Kptfile")).expect("parse")
}

const SVC: &str = "apiVersion: v1\nkind: Service\nmetadata:\n  name: front\n";
const PIPELINE: &str = "pipeline:\n  mutators:\n  - image: set-namespace:v0.4\n";

#[test]
fn replacing_strategies_take_upstream_from_updated_and_keep_the_rest_of_local() {
    for strategy in [Strategy::ForceDeleteReplace, Strategy::FastForward] {
        let o = files(&[("Kptfile", &kptfile("v1", None, "")), ("s.yaml", SVC)]);
        let l = files(&[("Kptfile", &kptfile("v1", Some("c1"), "")), ("s.yaml", SVC)]);
        let u = files(&[("Kptfile", &kptfile("v2", None, PIPELINE))]);
        let out = update_package(&o, &u, &l, strategy, &UpdateOptions::default()).expect("update");
        let k = read_kf(&out);
        let git = k.upstream.and_then(|u| u.git).expect("upstream");
        assert_eq!(git.git_ref, "v2", "{strategy}");
        // Updated has no lock: local's stays. The pipeline stays local's.
        let lock = k.upstream_lock.and_then(|l| l.git).expect("lock");
        assert_eq!(lock.commit, "c1", "{strategy}");
        assert!(k.pipeline.is_none(), "{strategy}");
        assert!(out.get("s.yaml").is_none(), "{strategy}");
    }
}

const RENDERED: &str = "status:\n  conditions:\n  - type: Synced\n    status: \"True\"\n  - type: Rendered\n    status: \"False\"\n    reason: RenderFailed\n  renderStatus:\n    errorSummary: boom\n";

#[test]
fn fast_forward_ignores_and_clears_what_a_render_recorded() {
    let synced = "status:\n  conditions:\n  - type: Synced\n    status: \"True\"\n";
    let o = files(&[("Kptfile", &kptfile("v1", None, synced)), ("s.yaml", SVC)]);
    let l = files(&[
        ("Kptfile", &kptfile("v1", Some("c1"), RENDERED)),
        ("s.yaml", SVC),
    ]);
    let u = files(&[("Kptfile", &kptfile("v2", None, synced)), ("s.yaml", SVC)]);
    let out = update_package(&o, &u, &l, Strategy::FastForward, &UpdateOptions::default())
        .expect("a render is no local change");
    let status = read_kf(&out).status.expect("status");
    let kinds: Vec<&str> = status
        .conditions
        .iter()
        .map(|c| c.condition_type.as_str())
        .collect();
    assert_eq!(kinds, ["Synced"]);
    assert!(status.render_status.is_none());
    // Only a render's record: the status goes altogether.
    let bare = RENDERED.replace("  - type: Synced\n    status: \"True\"\n", "");
    let o = files(&[("Kptfile", &kptfile("v1", None, "")), ("s.yaml", SVC)]);
    let l = files(&[
        ("Kptfile", &kptfile("v1", Some("c1"), &bare)),
        ("s.yaml", SVC),
    ]);
    let out = update_package(&o, &o, &l, Strategy::FastForward, &UpdateOptions::default())
        .expect("update");
    assert!(read_kf(&out).status.is_none());
    // A real Kptfile edit next to the render's record still refuses.
    let edited = format!("{PIPELINE}{bare}");
    let l = files(&[
        ("Kptfile", &kptfile("v1", Some("c1"), &edited)),
        ("s.yaml", SVC),
    ]);
    let err = update_package(&o, &o, &l, Strategy::FastForward, &UpdateOptions::default())
        .expect_err("local pipeline edit");
    assert_eq!(err.kind(), "local-changes");
}
