//! Names of the generated PackageVariants (upstream `packageVariantIdentifier` and
//! `packageVariantName`).

/// Longest object name the generated PackageVariants may have (a DNS label).
pub const NAME_MAX_LENGTH: usize = 63;
/// Hex digits of the SHA-1 that stand in for the cut tail of a long identifier.
pub const NAME_HASH_LENGTH: usize = 8;

/// `<pvs>-<downstream repo>-<downstream package>`: what tells generated PackageVariants
/// apart, whether or not it fits in a name.
pub fn identifier(pvs_name: &str, downstream_repo: &str, downstream_package: &str) -> String {
    format!("{pvs_name}-{downstream_repo}-{downstream_package}")
}

/// The identifier itself when it fits in 63 characters; else its first 54 bytes, `-`, and the
/// first 8 hex digits of the SHA-1 of the whole identifier, so two long identifiers that share
/// a prefix still get different names.
pub fn name(id: &str) -> String {
    if id.len() <= NAME_MAX_LENGTH {
        return id.to_string();
    }
    let digest = sha1_smol::Sha1::from(id.as_bytes()).digest().to_string();
    let mut stub = NAME_MAX_LENGTH - NAME_HASH_LENGTH - 1;
    // Kubernetes names are ASCII; a multi-byte character can only come from a name the API
    // would refuse anyway, but cutting inside it must not panic.
    while !id.is_char_boundary(stub) {
        stub -= 1;
    }
    format!("{}-{}", &id[..stub], &digest[..NAME_HASH_LENGTH])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_identifiers_are_the_name() {
        let id = identifier("my-pvs", "dnrepo3", "dnpkg3");
        assert_eq!(id, "my-pvs-dnrepo3-dnpkg3");
        assert_eq!(name(&id), id);
        let exactly = "a".repeat(63);
        assert_eq!(name(&exactly), exactly);
    }

    #[test]
    fn long_identifiers_are_cut_to_54_and_hashed() {
        // The expected name is upstream's TestEnsurePackageVariants value.
        let id = identifier(
            "my-pvs",
            "dnrepo4",
            "supersupersuperloooooooooooooooooooooooooooooooooooooooooooooooooongpkgname",
        );
        let n = name(&id);
        assert_eq!(
            n,
            "my-pvs-dnrepo4-supersupersuperlooooooooooooooooooooooo-bec36506"
        );
        assert_eq!(n.len(), 63);
        let other = name(&format!("{id}x"));
        assert_ne!(n, other);
        assert_eq!(n[..54], other[..54]);
    }

    #[test]
    fn cutting_never_splits_a_character() {
        let id = format!("{}é{}", "a".repeat(53), "b".repeat(20));
        let n = name(&id);
        assert!(n.starts_with(&"a".repeat(53)));
        assert_eq!(n.len(), 53 + 1 + 8);
    }
}
