//! `by-path` matching: dot paths with `*` (one element), `**` (any number of
//! elements) and `name[i]` / `name[*]` / `*[*]` for list items, as the
//! catalog's `pathparser.go` matches them (a dynamic-programming glob over
//! path elements).

/// True when the walked field path (`a.b[0].c`, leading dot allowed)
/// matches the `by-path` pattern. An empty pattern matches nothing.
pub(crate) fn path_match(pattern: &str, field_path: &str) -> bool {
    if pattern.is_empty() {
        return false;
    }
    let pat: Vec<&str> = pattern.split('.').collect();
    let path: Vec<&str> = field_path.trim_start_matches('.').split('.').collect();
    back_track_match(&path, &pat)
}

fn back_track_match(path: &[&str], pat: &[&str]) -> bool {
    let (n, m) = (path.len(), pat.len());
    // dp[i][j]: the first i path elements match the first j pattern elements.
    let mut dp = vec![vec![false; m + 1]; n + 1];
    dp[0][0] = true;
    for j in 1..=m {
        if pat[j - 1] == "**" {
            dp[0][j] = dp[0][j - 1];
        }
    }
    for i in 1..=n {
        for j in 1..=m {
            if pat[j - 1] == "**" {
                dp[i][j] = dp[i][j - 1] || dp[i - 1][j];
            } else if pat[j - 1] == "*" || element_match(path[i - 1], pat[j - 1]) {
                dp[i][j] = dp[i - 1][j - 1];
            }
        }
    }
    dp[n][m]
}

/// One element: equal text, or a list item `a[1]` matched by `a[*]`,
/// `*[*]`, `*[1]` or `a[1]`.
fn element_match(elem: &str, pattern: &str) -> bool {
    if elem == pattern {
        return true;
    }
    if !elem.contains('[') {
        return false;
    }
    let e: Vec<&str> = elem.split('[').collect();
    let p: Vec<&str> = pattern.split('[').collect();
    if p[0] != "*" && e[0] != p[0] {
        return false;
    }
    p.len() > 1 && (p[1] == "*]" || e.get(1) == p.get(1))
}

/// A plain `a.b.c` path (no wildcards, no empty elements): values can be put
/// there directly, creating missing fields.
pub(crate) fn is_abs_path(path: &str) -> bool {
    path.split('.').all(|e| !e.is_empty() && !e.contains('*'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_like_the_catalog() {
        assert!(path_match("metadata.name", ".metadata.name"));
        assert!(!path_match("metadata.name", ".metadata.namespace"));
        assert!(path_match(
            "spec.**.image",
            ".spec.template.spec.containers[0].image"
        ));
        assert!(path_match("**.image", ".image"));
        assert!(path_match("a.*.c", "a.b.c"));
        assert!(!path_match("a.*.c", "a.c"));
        assert!(path_match("a.b[*].c", "a.b[3].c"));
        assert!(path_match("a.*[1].c", "a.b[1].c"));
        assert!(!path_match("a.b[2].c", "a.b[1].c"));
        assert!(path_match("data.**", ".data.FQDN"));
        assert!(!path_match("", ".a"));
    }

    #[test]
    fn abs_paths() {
        assert!(is_abs_path("a.b.c"));
        assert!(!is_abs_path("a.*.c"));
        assert!(!is_abs_path("a..c"));
    }
}
