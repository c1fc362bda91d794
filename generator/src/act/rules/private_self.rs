//! Call form: none for a trait impl on a private type of the crate (`impl<K: Hash> Hash for
//! KeyRef<K>`): no public API, whatever the trait.

use carve_storage::FunctionInfo;

use crate::act::call::trait_impl;
use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// A trait impl on a type the crate declares and keeps private.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let (ty, _, _) = trait_impl(info)?;
    let base = crate::read::types::strip_generics(&ty);
    (api.declared_type(base).is_some() && api.public_type(base).is_none())
        .then_some(Target::Private)
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn a_trait_impl_on_a_private_type_is_private() {
        let r = rulebook();
        let f = r
            .function("<rulebook::Hidden as rulebook::Shape>::area")
            .clone();
        let (rule, target) = decide(&r.api, &f);
        assert_eq!(rule, "private_self");
        assert!(matches!(target, Target::Private), "{}", f.path);
    }
}
