//! A Go program built at test time against a Debian-packaged Go library (go-yaml v3,
//! go.starlark.net), used as the oracle of a differential test, and a batch run of it:
//! each input followed by `\0\n` on stdin, each answer likewise on stdout. Shared by
//! `kpt`'s and `krm-functions`' differential tests (`#[path]`-included).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where Debian installs Go library sources.
pub const GOPATH: &str = "/usr/share/gocode";

/// Builds `program` (a `main` package) in `dir` as `name`; `None`, with the reason
/// printed, when Go or the library under `GOPATH/src/<library>` is absent (`packages`
/// names the Debian packages that provide them).
#[allow(dead_code)]
pub fn build(
    dir: &Path,
    program: &str,
    name: &str,
    library: &str,
    packages: &str,
) -> Option<PathBuf> {
    build_with(dir, program, name, library, packages, None)
}

/// [`build`], with `overlay` (a GOPATH tree of patched packages) searched before
/// Debian's.
#[allow(dead_code)]
pub fn build_with(
    dir: &Path,
    program: &str,
    name: &str,
    library: &str,
    packages: &str,
    overlay: Option<&Path>,
) -> Option<PathBuf> {
    let go = ["/usr/bin/go", "/usr/lib/go/bin/go"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file());
    let source = Path::new(GOPATH).join("src").join(library);
    let (Some(go), true) = (go, source.is_dir()) else {
        eprintln!(
            "skipped: needs go and the {library} sources (apt-get install {packages}; \
             .ci/setup.sh installs them)"
        );
        return None;
    };
    let main = dir.join("main.go");
    std::fs::write(&main, program).expect("write main.go");
    let bin = dir.join(name);
    let out = Command::new(go)
        .arg("build")
        .arg("-o")
        .arg(&bin)
        .arg(&main)
        .env(
            "GOPATH",
            match overlay {
                Some(o) => format!("{}:{GOPATH}", o.display()),
                None => GOPATH.to_string(),
            },
        )
        .env("GO111MODULE", "off")
        .env("GOCACHE", dir.join("cache"))
        .env("GOFLAGS", "")
        .output()
        .expect("go build runs");
    assert!(
        out.status.success(),
        "go build failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(bin)
}

/// The program's answer for each input, in one process.
pub fn answers(bin: &Path, inputs: &[String]) -> Vec<String> {
    let mut child = Command::new(bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the Go oracle starts");
    let mut input = String::new();
    for d in inputs {
        input.push_str(d);
        input.push_str("\x00\n");
    }
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("the Go oracle's output");
    writer.join().expect("writer").expect("write stdin");
    let text = String::from_utf8(out.stdout).expect("utf8");
    let answers: Vec<String> = text
        .split("\x00\n")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    assert_eq!(answers.len(), inputs.len(), "one answer per input");
    answers
}

/// A Go `main` package for [`answers`]: `answer` is Go source defining
/// `func answer(in string) string` (and whatever it needs), called once per input; `imports`
/// are the packages it uses besides `bufio`, `io`, `os` and `strings`, which the loop uses.
#[allow(dead_code)]
pub fn program(imports: &[&str], answer: &str) -> String {
    let imports: String = imports.iter().map(|i| format!("\t{i:?}\n")).collect();
    format!(
        "package main\n\nimport (\n\t\"bufio\"\n\t\"io\"\n\t\"os\"\n\t\"strings\"\n{imports})\n\n{answer}\n\nfunc main() {{\n\tin := bufio.NewReader(os.Stdin)\n\tout := bufio.NewWriter(os.Stdout)\n\tdefer out.Flush()\n\tfor {{\n\t\tline, err := in.ReadString(0)\n\t\tif err == io.EOF {{\n\t\t\treturn\n\t\t}}\n\t\tin.ReadString('\\n')\n\t\tout.WriteString(answer(strings.TrimSuffix(line, \"\\x00\")))\n\t\tout.WriteString(\"\\x00\\n\")\n\t}}\n}}\n"
    )
}

/// A small deterministic generator (xorshift64) for the generated inputs of these tests:
/// the same inputs on every run.
#[allow(dead_code)]
pub struct Rng(pub u64);

#[allow(dead_code)]
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// One of `items` (not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}
