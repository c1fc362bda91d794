//! Call form: none for a function of the crate the source does not show (a macro's, code cfg'd
//! out): the last rule, it decides every function the ones before it left.

use carve_storage::FunctionInfo;

use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// Any function left.
pub(crate) fn rule(_api: &CrateApi, _info: &FunctionInfo) -> Option<Target> {
    Some(Target::Unsupported("not found in the source"))
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn a_function_a_macro_made_is_not_found_in_the_source() {
        let r = rulebook();
        let f = r.function("rulebook::made").clone();
        let (rule, target) = decide(&r.api, &f);
        assert_eq!(rule, "not_found");
        assert!(
            matches!(target, Target::Unsupported("not found in the source")),
            "{}",
            f.path
        );
    }
}
