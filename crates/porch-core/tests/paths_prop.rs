//! Random file names through `porch_core::paths`: no panic, and whatever is accepted obeys
//! every rule git applies to tree entries.

use porch_core::paths::{MAX_COMPONENT_BYTES, MAX_PATH_BYTES, validate_file_path};
use proptest::prelude::*;

/// Names built from the pieces the rules care about, so the interesting cases are common.
fn tricky_name() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("/".to_owned()),
        Just(".".to_owned()),
        Just("..".to_owned()),
        Just(".git".to_owned()),
        Just(".GiT".to_owned()),
        Just("git~1".to_owned()),
        Just(" ".to_owned()),
        Just(":".to_owned()),
        Just("\\".to_owned()),
        Just("\0".to_owned()),
        Just("\u{200c}".to_owned()),
        Just("\u{feff}".to_owned()),
        "[a-z]{1,8}",
        "\\PC{0,4}",
        "x{250,260}",
    ];
    prop::collection::vec(piece, 0..12).prop_map(|v| v.concat())
}

/// What git would see as `.git` after the file system's folding.
fn folds_to_dotgit(component: &str) -> bool {
    let kept: String = component
        .chars()
        .filter(|c| !matches!(c, '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}'))
        .collect::<String>()
        .to_ascii_lowercase();
    let stem = kept.split(':').next().unwrap_or("");
    let trimmed = stem.trim_end_matches([' ', '.']);
    trimmed == ".git" || trimmed == "git~1"
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 4000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn accepted_names_obey_every_rule(name in tricky_name()) {
        if validate_file_path(&name).is_ok() {
            prop_assert!(!name.is_empty());
            prop_assert!(name.len() <= MAX_PATH_BYTES);
            prop_assert!(!name.starts_with('/'));
            prop_assert!(!name.contains('\\'));
            prop_assert!(!name.chars().any(char::is_control));
            for c in name.split('/') {
                prop_assert!(!c.is_empty() && c != "." && c != "..", "{:?}", name);
                prop_assert!(c.len() <= MAX_COMPONENT_BYTES);
                prop_assert!(!folds_to_dotgit(c), "{:?}", name);
            }
        }
    }

    #[test]
    fn any_string_is_judged_without_panic(name in "\\PC*|.*") {
        let _ = validate_file_path(&name);
    }

    #[test]
    fn a_dotgit_component_anywhere_is_refused(a in "[a-z]{1,5}", b in "[a-z]{1,5}", g in prop_oneof![Just(".git"), Just(".GIT"), Just("git~1"), Just(".git."), Just(".git:x")]) {
        let path = format!("{a}/{g}/{b}");
        prop_assert!(validate_file_path(&path).is_err());
    }
}
