//! Writing items back to files as kyaml's `LocalPackageWriter` does (kpt writes render
//! and eval output, and `fn sink` input, through it): items grouped by their path
//! annotation, each file's items sorted by index, the reader's annotations removed.

use std::collections::{BTreeMap, BTreeSet};

use super::PackageFiles;
use super::resources::{
    BARE_SEQ_KEY, ResourceError, SEQ_INDENT, Sources, annotation, item_index, item_path,
    strip_reader,
};
use crate::yaml::{self, Node, SeqIndent};

/// `<ns>/<kind>_<name>.yaml` for a resource without a path (kyaml's default).
pub fn default_path(node: &Node) -> String {
    let kind = node
        .get("kind")
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_lowercase();
    let name = node
        .get_path(&["metadata", "name"])
        .and_then(Node::as_str)
        .unwrap_or_default();
    let file = format!("{kind}_{name}.yaml");
    match node
        .get_path(&["metadata", "namespace"])
        .and_then(Node::as_str)
    {
        Some(ns) if !ns.is_empty() => format!("{ns}/{file}"),
        _ => file,
    }
}

/// Normalise a slash path, rejecting anything that escapes the package.
///
/// A leading `/` means the package root (kpt writes `/a/b.yaml` to `a/b.yaml` inside the
/// package); `..` may never climb out of it.
pub fn clean_path(p: &str) -> Result<String, ResourceError> {
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(ResourceError::OutsidePackage(p.to_string()));
                }
            }
            s => parts.push(s),
        }
    }
    Ok(parts.join("/"))
}

/// [`clean_path`] without a copy when the path is already clean (the usual case).
pub fn clean_path_cow(p: &str) -> Result<std::borrow::Cow<'_, str>, ResourceError> {
    let clean = !p.is_empty() && p.split('/').all(|seg| !matches!(seg, "" | "." | ".."));
    if clean {
        Ok(std::borrow::Cow::Borrowed(p))
    } else {
        clean_path(p).map(std::borrow::Cow::Owned)
    }
}

/// Write items (paths root-relative) into `files` as kpt's package writer does: every
/// file that holds an output item is written whole through the encoder (unchanged
/// documents included, so a non-canonical file comes back in kpt's form); files whose
/// resources all disappeared are left for [`prune`], other files are not touched.
/// Returns the set of files that hold output resources.
pub fn write_items(
    files: &mut PackageFiles,
    items: Vec<Node>,
) -> Result<BTreeSet<String>, ResourceError> {
    write_items_with(files, items, true)
}

/// [`write_items`] as kyaml's package writer, which `pkg update` writes through: two
/// resources at one path and index (a resource upstream renamed while it was edited
/// locally, both kept) are written one after the other, in the order given. Render
/// refuses that instead (kpt's `detectPathConflicts`).
pub fn write_items_keeping_duplicates(
    files: &mut PackageFiles,
    items: Vec<Node>,
) -> Result<BTreeSet<String>, ResourceError> {
    write_items_with(files, items, false)
}

fn write_items_with(
    files: &mut PackageFiles,
    items: Vec<Node>,
    refuse_duplicates: bool,
) -> Result<BTreeSet<String>, ResourceError> {
    struct Entry {
        index: Option<String>,
        node: Node,
        seq: Option<String>,
    }
    let mut by_file: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
    for mut item in items {
        let path = match item_path(&item) {
            Some(p) => clean_path(p)?,
            None => default_path(&item),
        };
        let index = item_index(&item).map(str::to_string);
        let seq = annotation(&item, SEQ_INDENT).map(str::to_string);
        strip_reader(&mut item);
        by_file.entry(path).or_default().push(Entry {
            index,
            node: item,
            seq,
        });
    }
    let written: BTreeSet<String> = by_file.keys().cloned().collect();
    for (path, mut entries) in by_file {
        if refuse_duplicates {
            let mut seen = BTreeSet::new();
            for index in entries.iter().filter_map(|e| e.index.as_deref()) {
                if !seen.insert(index) {
                    return Err(ResourceError::Duplicate {
                        path: path.clone(),
                        index: index.to_string(),
                    });
                }
            }
        }
        // kyaml's `DefaultPathAndIndexAnnotation`: a resource without an index gets the
        // file's highest index (not one past it; an unreadable index counts as 0), the
        // next one without an index the one after, in the order given.
        let top = entries
            .iter()
            .filter_map(|e| e.index.as_deref())
            .map(|i| go_atoi(i).unwrap_or(0))
            .fold(0, i64::max);
        for (e, n) in entries.iter_mut().filter(|e| e.index.is_none()).zip(top..) {
            e.index = Some(n.to_string());
        }
        let keys: Vec<&str> = entries
            .iter()
            .map(|e| e.index.as_deref().unwrap_or(""))
            .collect();
        let order = sort_order(&keys)?;
        let mut slots: Vec<Option<Entry>> = entries.drain(..).map(Some).collect();
        let mut docs = Vec::with_capacity(slots.len());
        for i in order {
            let Some(e) = slots[i].take() else { continue };
            // kyaml indents sequences as the item's seqindent annotation says (compact
            // when it has none).
            let seq_indent = if e.seq.as_deref() == Some("wide") {
                SeqIndent::Wide
            } else {
                SeqIndent::Compact
            };
            docs.push((e.node, seq_indent));
        }
        files.insert(path.clone(), file_text(&path, &docs).into_bytes());
    }
    Ok(written)
}

/// Go's `strconv.Atoi` (64-bit): an optional sign and decimal digits, or its error text.
fn go_atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.Atoi: parsing {}: invalid syntax",
            crate::goquote::go_quote(s)
        ));
    }
    s.trim_start_matches('+').parse::<i64>().map_err(|_| {
        format!(
            "strconv.Atoi: parsing {}: value out of range",
            crate::goquote::go_quote(s)
        )
    })
}

/// The order kyaml's `SortNodes` gives one file's resources (a stable sort; an empty
/// index first, then by number). Go's `sort.SliceStable` sorts blocks of 20 by
/// insertion, so its comparison function sees each resource next to its neighbours:
/// an index that is not a number fails the write as soon as it is compared with a
/// different one, with `SortNodes`' text.
fn sort_order(keys: &[&str]) -> Result<Vec<usize>, ResourceError> {
    let less = |a: &str, b: &str| -> Result<bool, ResourceError> {
        if a == b {
            return Ok(false);
        }
        if a.is_empty() {
            return Ok(true);
        }
        if b.is_empty() {
            return Ok(false);
        }
        let parse = |v: &str| {
            go_atoi(v).map_err(|e| {
                ResourceError::BadIndex(format!(
                    "unable to parse config.kubernetes.io/index {v} :{e}"
                ))
            })
        };
        Ok(parse(a)? < parse(b)?)
    };
    let mut order: Vec<usize> = (0..keys.len()).collect();
    // Go's insertionSort over each block of 20, as `stable` starts.
    for block in order.chunks_mut(20) {
        for i in 1..block.len() {
            let mut j = i;
            while j > 0 && less(keys[block[j]], keys[block[j - 1]])? {
                block.swap(j, j - 1);
                j -= 1;
            }
        }
    }
    // Go then merges the blocks; a merge compares values across blocks, so a number
    // and text, or two different texts, still fail. Merging by a stable sort on the
    // values, which are all numbers or all equal by now, gives the same order.
    let numeric = keys.iter().all(|k| k.is_empty() || go_atoi(k).is_ok());
    if !numeric
        && let Some(first) = keys.first()
        && let Some(other) = keys.iter().find(|k| *k != first)
    {
        less(other, first)?;
        less(first, other)?;
    }
    order.sort_by_key(|&i| (!keys[i].is_empty(), go_atoi(keys[i]).unwrap_or(0)));
    Ok(order)
}

/// A resource file as kyaml's `ByteWriter` writes it, which kpt does for every file it
/// read resources from or writes resources to (unchanged or not): a lone resource of a
/// `.json` file as indented JSON, anything else as YAML documents joined by `---`.
fn file_text(path: &str, docs: &[(Node, SeqIndent)]) -> String {
    if let [(node, _)] = docs
        && path.ends_with(".json")
        && let Ok(value) = node.try_to_value()
    {
        return crate::yaml::go_json::encode_indented(&value);
    }
    // One encoder for the whole file, as kyaml's: a comment it leaves pending at the end
    // of one document is written at the start of the next. A wrapped bare list is
    // written as the list it was when it has items (kyaml's `upWrapBareSequenceNode`
    // leaves an empty one in its wrapper).
    yaml::emit_documents(docs.iter().map(|(node, seq)| {
        let inner = node
            .get(BARE_SEQ_KEY)
            .filter(|list| !list.items().is_empty());
        (inner.unwrap_or(node), *seq)
    }))
}

/// Delete the resource files read into `sources` that no output item lives in.
pub fn prune(files: &mut PackageFiles, sources: &Sources, output_paths: &BTreeSet<String>) {
    for f in sources.files() {
        if !output_paths.contains(f) {
            files.remove(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::resources::{INDEX, PATH, set_annotations};
    use crate::yaml::parse_one;

    fn item(name: &str, index: Option<&str>) -> Node {
        let mut n = parse_one(&format!(
            "apiVersion: v1\nkind: Thing\nmetadata:\n  name: {name}\n"
        ))
        .expect("yaml");
        let mut pairs = vec![(PATH, "things.yaml")];
        if let Some(i) = index {
            pairs.push((INDEX, i));
        }
        set_annotations(&mut n, &pairs);
        n
    }

    fn names(files: &PackageFiles) -> Vec<String> {
        files
            .get_text("things.yaml")
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.strip_prefix("  name: "))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn a_resource_without_an_index_takes_the_highest_one_of_its_file() {
        // Index 1 is shared with `beta`: the order given decides between them.
        let mut files = PackageFiles::new();
        let items = vec![
            item("fresh", None),
            item("alpha", Some("0")),
            item("beta", Some("1")),
        ];
        write_items(&mut files, items).expect("write");
        assert_eq!(names(&files), ["alpha", "fresh", "beta"]);
        let items = vec![
            item("alpha", Some("0")),
            item("beta", Some("1")),
            item("fresh", None),
            item("fresher", None),
        ];
        write_items(&mut files, items).expect("write");
        assert_eq!(names(&files), ["alpha", "beta", "fresh", "fresher"]);
        // Sorted as numbers.
        let items = vec![item("ten", Some("10")), item("nine", Some("9"))];
        write_items(&mut files, items).expect("write");
        assert_eq!(names(&files), ["nine", "ten"]);
    }

    #[test]
    fn a_wrapped_bare_list_is_written_as_a_list_unless_it_is_empty() {
        let mut files = PackageFiles::new();
        let wrapped = |list: &str, path: &str| {
            let mut n = parse_one(&format!("{BARE_SEQ_KEY}: {list}\n")).expect("yaml");
            set_annotations(&mut n, &[(PATH, path)]);
            n
        };
        let items = vec![wrapped("[x, y]", "full.yaml"), wrapped("[]", "none.yaml")];
        write_items(&mut files, items).expect("write");
        assert_eq!(files.get_text("full.yaml"), Some("[x, y]\n"));
        assert_eq!(
            files.get_text("none.yaml"),
            Some("bareSeqNodeWrappingKey: []\n")
        );
    }

    #[test]
    fn an_index_that_is_no_number_fails_once_compared_with_another() {
        let mut files = PackageFiles::new();
        let items = vec![item("alpha", Some("0")), item("beta", Some("x1"))];
        let e = write_items(&mut files, items).expect_err("bad index");
        assert_eq!(
            e.to_string(),
            "unable to parse config.kubernetes.io/index x1 :strconv.Atoi: parsing \"x1\": invalid syntax"
        );
        // Alone, or next to equal ones, it is never compared.
        let items = vec![item("alpha", Some("x1")), item("beta", Some("x1"))];
        write_items_keeping_duplicates(&mut files, items).expect("equal");
        assert_eq!(names(&files), ["alpha", "beta"]);
        let huge = "99999999999999999999";
        let items = vec![item("alpha", Some("0")), item("beta", Some(huge))];
        let e = write_items(&mut files, items).expect_err("range");
        assert!(e.to_string().ends_with("value out of range"), "{e}");
    }
}
