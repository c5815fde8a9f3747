//! `no-op`: a kpt test function that returns its input unchanged, with no
//! results.

use kpt::resource_list::ResourceList;

use crate::FnError;

/// Run the function.
pub fn run(_list: &mut ResourceList) -> Result<(), FnError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::common::testing::run;

    #[test]
    fn leaves_input_alone() {
        let input = "apiVersion: v1 # c\nkind: ConfigMap\nmetadata:\n  name: a\n";
        let (out, results, err) = run(super::run, input, None);
        assert!(err.is_none() && results.is_empty());
        assert_eq!(out, input);
    }
}
