//! Call form: a method of a public trait of one of the crate's dependencies implemented by a
//! public type of the crate (`impl num_traits::ToPrimitive for NotNan<f64>`), called through
//! the trait's path as the dependency names it:
//! `<ordered_float::NotNan<f64> as num_traits::cast::ToPrimitive>::to_i64(&x)`. An integration
//! test links the package's dependencies, so it can name their traits; the method's signature is
//! the recorded instance's, as for a standard trait.

use carve_storage::FunctionInfo;

use crate::act::call::{outside_lib, trait_impl};
use crate::act::rules::std_trait::resolve_std_trait_impl;
use crate::act::target::Target;
use crate::read::crate_api::CrateApi;
use crate::read::types::strip_generics;

/// A dependency's trait on one of the crate's types.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let (ty, tr, method) = trait_impl(info)?;
    let trait_base = strip_generics(&tr);
    let first = trait_base.split("::").next()?;
    let dependency = api
        .dev_dependencies
        .iter()
        .any(|d| d.replace('-', "_") == first);
    if !dependency || first == api.crate_name || !trait_base.contains("::") {
        return None;
    }
    Some(
        outside_lib(api, info)
            .unwrap_or_else(|| resolve_std_trait_impl(api, info, &ty, &tr, trait_base, &method)),
    )
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn a_dependency_s_trait_is_called_through_its_path_and_another_crate_s_is_not() {
        // `Counter::from`, as if its trait were `From`-like in a dependency the crate lists.
        let r = rulebook();
        let mut info = r
            .function("<rulebook::Counter as core::convert::From<u32>>::from")
            .clone();
        info.path = "<rulebook::Counter as num_like::convert::Make<u32>>::from".to_string();
        let (rule, _) = decide(&r.api, &info);
        assert_ne!(rule, "dependency_trait", "no such dependency");
        let mut api = r.api.clone();
        api.dev_dependencies.insert("num-like".to_string());
        let (rule, target) = decide(&api, &info);
        assert_eq!(rule, "dependency_trait");
        let Target::Callable(c) = target else {
            panic!("{} is not callable", info.path)
        };
        assert_eq!(
            c.call_path,
            "<rulebook::Counter as num_like::convert::Make<_>>::from"
        );
        assert_eq!(c.via_trait.as_deref(), Some("num_like::convert::Make"));
    }
}
