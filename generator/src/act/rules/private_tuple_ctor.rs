//! Call form: none for a private tuple struct's constructor, which rustc emits as a function
//! named after the type (`smallvec::ConstNonNull(ptr)`).

use carve_storage::FunctionInfo;

use crate::act::call::parse_fn_path;
use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// A function whose path is a private type of the crate.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let segments = parse_fn_path(&info.path).ok()?;
    let (_, rest) = segments.split_first()?;
    let type_path = format!("{}::{}", api.crate_name, rest.join("::"));
    (api.declared_type(&type_path).is_some() && api.public_type(&type_path).is_none())
        .then_some(Target::Private)
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn a_private_tuple_struct_s_constructor_is_private() {
        let r = rulebook();
        let f = r.function("rulebook::Wrap").clone();
        let (rule, target) = decide(&r.api, &f);
        assert_eq!(rule, "private_tuple_ctor");
        assert!(matches!(target, Target::Private), "{}", f.path);
    }
}
