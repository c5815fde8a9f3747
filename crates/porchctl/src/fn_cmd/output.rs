//! Out-of-place output of `fn render`/`fn eval` (`-o stdout|unwrap|DIR`) and reading a
//! ResourceList from stdin (`fn eval -`).

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use kpt::package::resources::{self, PACKAGE_PATH};
use kpt::package::{PackageFiles, fs};
use kpt::resource_list::ResourceList;
use kpt::yaml::{Node, SeqIndent, emit_documents};

/// Where results go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Back into the package (default for directories).
    InPlace,
    /// A ResourceList on stdout.
    Stdout,
    /// Plain multi-document YAML on stdout.
    Unwrap,
    /// A new directory.
    Dir(String),
}

impl Output {
    /// Parse `-o`.
    pub fn parse(s: Option<&str>, stdin_input: bool) -> Output {
        match s {
            None if stdin_input => Output::Stdout,
            None => Output::InPlace,
            Some("stdout") => Output::Stdout,
            Some("unwrap") => Output::Unwrap,
            Some(dir) => Output::Dir(dir.to_string()),
        }
    }
}

/// Write items to the chosen out-of-place destination.
pub fn write(out: &Output, items: Vec<Node>) -> anyhow::Result<()> {
    match out {
        Output::InPlace => Ok(()),
        Output::Stdout => {
            let items = items
                .into_iter()
                .map(|mut n| {
                    resources::remove_annotation(&mut n, PACKAGE_PATH);
                    n
                })
                .collect();
            print(&ResourceList::new(items).to_yaml())
        }
        Output::Unwrap => {
            let docs: Vec<(Node, SeqIndent)> = items
                .into_iter()
                .map(|mut n| {
                    let wide = resources::annotation(&n, resources::SEQ_INDENT) == Some("wide");
                    resources::strip_internal(&mut n);
                    let seq = if wide {
                        SeqIndent::Wide
                    } else {
                        SeqIndent::Compact
                    };
                    (n, seq)
                })
                .collect();
            // One encoder for the whole stream, as kyaml's ByteWriter: a line comment
            // go-yaml leaves pending at a document's end opens the next one.
            print(&emit_documents(docs.iter().map(|(n, s)| (n, *s))))
        }
        Output::Dir(dir) => {
            let mut files = PackageFiles::new();
            resources::write_items(&mut files, items)?;
            let dir = Path::new(dir);
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            fs::write_changes(dir, &PackageFiles::new(), &files)
                .with_context(|| format!("writing {}", dir.display()))
        }
    }
}

fn print(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// Read a ResourceList (or plain multi-document YAML) from stdin.
pub fn read_stdin() -> anyhow::Result<ResourceList> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).context("reading stdin")?;
    let docs = kpt::yaml::parse_stream(&text).context("stdin is not valid YAML")?;
    if let [one] = docs.as_slice()
        && one.root.get("kind").and_then(Node::as_str) == Some("ResourceList")
    {
        return ResourceList::from_node(one.root.clone()).context("stdin");
    }
    Ok(ResourceList::new(
        docs.into_iter().map(|d| d.root).collect(),
    ))
}
