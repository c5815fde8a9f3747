//! `.krmignore`: gitignore-syntax exclusions for resource reading, per package.

use globset::{Glob, GlobSet, GlobSetBuilder};

/// Compiled `.krmignore` rules of one package.
#[derive(Debug, Clone)]
pub struct KrmIgnore {
    rules: Vec<(bool, GlobSet)>, // (negated, patterns); the last matching rule wins
}

impl KrmIgnore {
    /// Rules from the file text (empty text = nothing ignored).
    pub fn parse(text: &str) -> KrmIgnore {
        let mut rules = Vec::new();
        for raw in text.lines() {
            let line = raw.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (negated, pat) = match line.strip_prefix('!') {
                Some(p) => (true, p),
                None => (false, line.strip_prefix('\\').unwrap_or(line)),
            };
            let pat = pat.trim_end_matches('/');
            if pat.is_empty() {
                continue;
            }
            let anchored = pat.starts_with('/') || pat.contains('/');
            let pat = pat.trim_start_matches('/');
            let globs = if anchored {
                vec![pat.to_string(), format!("{pat}/**")]
            } else {
                vec![format!("**/{pat}"), format!("**/{pat}/**")]
            };
            let mut b = GlobSetBuilder::new();
            let mut ok = true;
            for g in globs {
                match Glob::new(&g) {
                    Ok(g) => {
                        b.add(g);
                    }
                    Err(_) => ok = false,
                }
            }
            if let (true, Ok(set)) = (ok, b.build()) {
                rules.push((negated, set));
            }
        }
        KrmIgnore { rules }
    }

    /// Is the package-relative path ignored?
    pub fn is_ignored(&self, rel_path: &str) -> bool {
        let mut ignored = false;
        for (negated, set) in &self.rules {
            if set.is_match(rel_path) {
                ignored = !negated;
            }
        }
        ignored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitignore_like_matching() {
        let k = KrmIgnore::parse("# comment\n.expected\nconfig/*.yaml\n!config/keep.yaml\n");
        assert!(k.is_ignored(".expected/diff.patch"));
        assert!(k.is_ignored("sub/.expected/x.yaml"));
        assert!(k.is_ignored("config/a.yaml"));
        assert!(!k.is_ignored("config/keep.yaml"));
        assert!(!k.is_ignored("resources.yaml"));
    }
}
