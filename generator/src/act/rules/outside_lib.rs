//! Call form: none for a function declared in a file the library does not hold: the binary's
//! (`binary only`) or another crate's.

use carve_storage::FunctionInfo;

use crate::act::call::outside_lib;
use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// A function whose declaring file is outside the library's module tree.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    outside_lib(api, info)
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn the_program_s_own_functions_are_binary_only() {
        let r = rulebook();
        let f = r.function("rulebook::main").clone();
        let (rule, target) = decide(&r.api, &f);
        assert_eq!(rule, "outside_lib");
        assert!(
            matches!(target, Target::Unsupported("binary only")),
            "{}",
            f.path
        );
    }
}
