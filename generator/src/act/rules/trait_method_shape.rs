//! Call form: none for a trait method whose name no test can write: a closure inside one
//! (`<T as Tr>::m::{closure#0}`), or a name with generic arguments or a path in it.

use carve_storage::FunctionInfo;

use crate::act::call::trait_impl;
use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// A trait impl's method no test names.
pub(crate) fn rule(_api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let (_, _, method) = trait_impl(info)?;
    if method.contains("{{closure}}") || method.contains("{closure#") {
        return Some(Target::Unsupported("closure"));
    }
    if method.contains(['{', '<', ':']) {
        return Some(Target::Unsupported("trait impl"));
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn a_closure_inside_a_trait_method_is_not_supported() {
        let r = rulebook();
        let f = r
            .function("<u32 as rulebook::Shape>::area::{{closure}}")
            .clone();
        let (rule, target) = decide(&r.api, &f);
        assert_eq!(rule, "trait_method_shape");
        assert!(
            matches!(target, Target::Unsupported("closure")),
            "{}",
            f.path
        );
    }
}
