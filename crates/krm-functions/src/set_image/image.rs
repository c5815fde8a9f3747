//! Image references: kustomize's name matching and splitting, and the two
//! ways the catalog computes a replacement (containers vs. additional fields).

use regex::Regex;

/// The configured image change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Image {
    /// Tag-less image name to match.
    pub name: String,
    pub new_name: String,
    pub new_tag: String,
    pub digest: String,
}

/// kustomize `IsImageMatched`: `^<name>(@sha256)?(:[a-zA-Z0-9_.{}-]*)?$` with
/// the name used as a pattern, as kustomize does.
pub fn is_matched(value: &str, name: &str) -> bool {
    Regex::new(&format!("^{name}(@sha256)?(:[a-zA-Z0-9_.{{}}-]*)?$"))
        .map(|re| re.is_match(value))
        .unwrap_or(false)
}

/// Splits `name[:tag][@digest]` ignoring `:` in a registry host; the tag and
/// digest keep their separators.
pub fn split(image: &str) -> (&str, &str, &str) {
    let (rest, digest) = match image.find('@') {
        Some(i) => (&image[..i], &image[i..]),
        None => (image, ""),
    };
    let after_slash = rest.rfind('/').map_or(0, |i| i + 1);
    match rest[after_slash..].rfind(':') {
        Some(i) => (&rest[..after_slash + i], &rest[after_slash + i..], digest),
        None => (rest, "", digest),
    }
}

impl Image {
    /// The catalog's `getNewImageName` for containers: a new tag or digest
    /// replaces the old tag (digest wins); otherwise the old tag is kept, or
    /// the old digest when there was no tag.
    pub fn replacement(&self, old: &str) -> String {
        let (name, tag, digest) = split(old);
        let name = if self.new_name.is_empty() {
            name
        } else {
            &self.new_name
        };
        let mut tag = tag.to_string();
        if !self.new_tag.is_empty() {
            tag = format!(":{}", self.new_tag);
        }
        if !self.digest.is_empty() {
            tag = format!("@{}", self.digest);
        }
        if tag.is_empty() {
            format!("{name}{digest}")
        } else {
            format!("{name}{tag}")
        }
    }

    /// kustomize's image-tag updater (used for additional fields): a new tag
    /// and digest may both be set; either replaces both old parts.
    pub fn kustomize_replacement(&self, old: &str) -> String {
        let (name, tag, digest) = split(old);
        let name = if self.new_name.is_empty() {
            name
        } else {
            &self.new_name
        };
        let (mut tag, mut digest) = (
            tag.trim_start_matches(':').to_string(),
            digest.trim_start_matches('@').to_string(),
        );
        match (self.new_tag.is_empty(), self.digest.is_empty()) {
            (false, false) => (tag, digest) = (self.new_tag.clone(), self.digest.clone()),
            (false, true) => (tag, digest) = (self.new_tag.clone(), String::new()),
            (true, false) => (tag, digest) = (String::new(), self.digest.clone()),
            (true, true) => {}
        }
        let mut out = name.to_string();
        if !tag.is_empty() {
            out = format!("{out}:{tag}");
        }
        if !digest.is_empty() {
            out = format!("{out}@{digest}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_match() {
        assert_eq!(split("nginx"), ("nginx", "", ""));
        assert_eq!(split("nginx:1.2"), ("nginx", ":1.2", ""));
        assert_eq!(split("reg:5000/app"), ("reg:5000/app", "", ""));
        assert_eq!(
            split("reg:5000/app:v1@sha256:ab"),
            ("reg:5000/app", ":v1", "@sha256:ab")
        );
        assert!(is_matched("nginx:1.20.2", "nginx"));
        assert!(is_matched("nginx", "nginx"));
        assert!(!is_matched("bitnami/nginx:1", "nginx"));
        assert!(!is_matched("nginx-x:1", "nginx"));
    }

    #[test]
    fn replacements() {
        let img = Image {
            name: "nginx".into(),
            new_name: "bitnami/nginx".into(),
            new_tag: "1.21.4".into(),
            digest: String::new(),
        };
        assert_eq!(img.replacement("nginx:1.20.2"), "bitnami/nginx:1.21.4");
        let d = Image {
            digest: "sha256:e1".into(),
            new_tag: String::new(),
            ..img.clone()
        };
        assert_eq!(d.replacement("nginx:1.20.2"), "bitnami/nginx@sha256:e1");
        let rename = Image {
            new_tag: String::new(),
            ..img.clone()
        };
        assert_eq!(
            rename.replacement("nginx@sha256:x"),
            "bitnami/nginx@sha256:x"
        );
        assert_eq!(
            img.kustomize_replacement("nginx:1.20.2"),
            "bitnami/nginx:1.21.4"
        );
    }
}
