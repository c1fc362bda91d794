//! Call form: none for a function of another crate (its path does not start with the crate's
//! name): not supported here; carve that crate to test it.

use carve_storage::FunctionInfo;

use crate::act::call::parse_fn_path;
use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// A function outside the crate by its path.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let segments = parse_fn_path(&info.path).ok()?;
    let Some((krate, rest)) = segments.split_first() else {
        return Some(Target::Unsupported("unknown function"));
    };
    (krate != &api.crate_name || rest.is_empty()).then_some(Target::Unsupported("other crate"))
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn a_function_of_another_crate_is_not_this_crate_s_to_test() {
        let r = rulebook();
        // `rulebook::add` as another crate would have recorded it.
        let mut f = r.function("rulebook::add").clone();
        f.path = "numbers::add".to_string();
        let (rule, target) = decide(&r.api, &f);
        assert_eq!(rule, "other_crate");
        assert!(
            matches!(target, Target::Unsupported("other crate")),
            "{}",
            f.path
        );
    }
}
