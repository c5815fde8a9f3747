//! A step's `tag:` (kpt HEAD's tag resolver): the tag replaces the image's own tag or
//! digest; an exact version or a plain word is used as it is, a semver constraint
//! would need the registry's tag list.

use super::run::resolve_image;

/// What a step's `tag:` is, as kpt HEAD's tag resolver reads it (Masterminds semver).
#[derive(Debug, PartialEq, Eq)]
enum TagKind {
    /// An exact version (`v0.2.4`, `0.4`, `1`): used as the tag.
    Version,
    /// A version constraint (`~0.2`, `0.4.1 - 0.4.3`, `>=1, <2`): needs the registry's tags.
    Constraint,
    /// Anything else (`latest`, `unstable`): used literally.
    Literal,
}

fn tag_kind(tag: &str) -> TagKind {
    static VERSION: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let version = VERSION.get_or_init(|| {
        regex::Regex::new(r"^v?[0-9]+(\.[0-9]+)?(\.[0-9]+)?(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")
            .ok()
    });
    if version.as_ref().is_some_and(|re| re.is_match(tag)) {
        return TagKind::Version;
    }
    let constraint_chars = tag
        .chars()
        .all(|c| c.is_ascii_digit() || " .,|-^~<>=!*xXv".contains(c));
    if constraint_chars
        && tag
            .chars()
            .any(|c| c.is_ascii_digit() || matches!(c, '*' | 'x' | 'X'))
    {
        TagKind::Constraint
    } else {
        TagKind::Literal
    }
}

/// The image a step runs: [`resolve_image`], then kpt HEAD's `tag:` override (the
/// image's own tag or digest replaced). A version constraint needs the registry's tag
/// list, which is not available here: that is an error naming the image.
pub fn resolve_image_tag(image: &str, tag: &str) -> Result<String, String> {
    let full = resolve_image(image);
    let tag = tag.trim();
    if tag.is_empty() || full.starts_with("builtins/") {
        return Ok(full);
    }
    let (name, _) = full.split_once('@').unwrap_or((&full, ""));
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let bare = match name[last_slash..].rfind(':') {
        Some(i) => &name[..last_slash + i],
        None => name,
    };
    match tag_kind(tag) {
        TagKind::Version | TagKind::Literal => Ok(format!("{bare}:{tag}")),
        TagKind::Constraint => Err(format!(
            "failed to list tags for image {bare:?}: listing registry tags is not supported, give an exact tag"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_overrides_the_image_tag_as_kpt_head() {
        let img = "ghcr.io/kptdev/krm-functions-catalog/set-labels";
        assert_eq!(resolve_image_tag(img, ""), Ok(format!("{img}:latest")));
        assert_eq!(
            resolve_image_tag(img, "v0.2.4"),
            Ok(format!("{img}:v0.2.4"))
        );
        assert_eq!(
            resolve_image_tag(&format!("{img}:v0.1"), "0.2"),
            Ok(format!("{img}:0.2"))
        );
        assert_eq!(
            resolve_image_tag(&format!("{img}@sha256:abc"), "unstable"),
            Ok(format!("{img}:unstable"))
        );
        assert_eq!(
            resolve_image_tag("set-labels", "v1"),
            Ok(format!("{img}:v1"))
        );
        // A registry port is not a tag.
        assert_eq!(
            resolve_image_tag("localhost:5000/fn/x", "v1"),
            Ok("localhost:5000/fn/x:v1".to_string())
        );
        for constraint in ["~0.2", "0.4.1 - 0.4.3", ">=1, <2", "^1.2", "1.x"] {
            let err = resolve_image_tag(img, constraint).expect_err(constraint);
            assert!(
                err.starts_with(&format!("failed to list tags for image \"{img}\"")),
                "{err}"
            );
        }
    }
}
