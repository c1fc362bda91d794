//! Call form: none for a path no test can write (a closure, compiler-generated code, a path
//! whose segments are no Rust path): not supported, by kind.

use carve_storage::FunctionInfo;

use crate::act::call::parse_fn_path;
use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// A path [`parse_fn_path`] refuses.
pub(crate) fn rule(_api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    parse_fn_path(&info.path).err().map(Target::Unsupported)
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn a_closure_is_no_function_a_test_names() {
        let r = rulebook();
        let f = r.function("rulebook::find::{{closure}}").clone();
        let (rule, target) = decide(&r.api, &f);
        assert_eq!(rule, "unparsable");
        assert!(
            matches!(target, Target::Unsupported("closure")),
            "{}",
            f.path
        );
    }
}
