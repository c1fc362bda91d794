//! Call form: none for a function that is not Rust (a C program's): not supported.

use carve_storage::FunctionInfo;

use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// A function of another language.
pub(crate) fn rule(_api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    (info.language != carve_storage::Language::Rust).then_some(Target::Unsupported("not Rust"))
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn a_function_of_another_language_is_not_supported() {
        let r = rulebook();
        // `rulebook::add` as a C program would have recorded it.
        let mut f = r.function("rulebook::add").clone();
        f.language = carve_storage::Language::C;
        let (rule, target) = decide(&r.api, &f);
        assert_eq!(rule, "not_rust");
        assert!(
            matches!(target, Target::Unsupported("not Rust")),
            "{}",
            f.path
        );
    }
}
