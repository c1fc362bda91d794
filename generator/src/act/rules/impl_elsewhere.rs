//! Call form: a method of an inherent impl written in another module than its type's
//! (`similar::types::text_additions::<impl Change<&T>>::missing_newline`): called by the type's
//! own path; none when the type is private.

use carve_storage::{closing_angle, FunctionInfo};

use crate::act::call::callable;
use crate::act::target::Target;
use crate::read::crate_api::CrateApi;
use crate::read::paths::split_top;

/// `module::<impl Type<Args>>::method`.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let ty = inherent_impl_type(&info.path)?;
    let base = crate::read::types::strip_generics(&ty);
    if api.declared_type(base).is_some() && api.public_type(base).is_none() {
        return Some(Target::Private);
    }
    method_of_impl_elsewhere(api, info, base)
}

/// `m::<impl abc::Tree<abc::Item>>::append` → `abc::Tree<abc::Item>` (legacy mangling's
/// spelling of an inherent impl).
pub(crate) fn inherent_impl_type(path: &str) -> Option<String> {
    let at = path.find("<impl ")?;
    let inner = &path[at + 1..];
    let end = closing_angle(inner)?;
    let ty = inner[..end].strip_prefix("impl ")?;
    (split_top(ty, " for ").len() == 1).then(|| ty.trim().to_string())
}

/// `module::<impl Type<Args>>::method` where the inherent impl is written in `module`, another
/// module than the type's (`similar::types::text_additions::<impl Change<&T>>::missing_newline`):
/// the method as the impl declares it, called by the type's own path. `None` when the impl's
/// module or the method is not in the index.
pub(crate) fn method_of_impl_elsewhere(
    api: &CrateApi,
    info: &FunctionInfo,
    base: &str,
) -> Option<Target> {
    let at = info.path.find("::<impl ")?;
    let impl_module: Vec<String> = split_top(&info.path[..at], "::")
        .into_iter()
        .skip(1)
        .collect();
    let inner = &info.path[at + 3..];
    let method = inner[closing_angle(inner)? + 1..].strip_prefix("::")?;
    let type_name = base.rsplit("::").next()?;
    let in_impl = api.find_module(&impl_module)?.types.get(type_name)?;
    let f = in_impl.functions.get(method)?;
    let (declared_in, _) = api.split_path(base)?;
    if !(f.public && api.public_type(base).is_some()) {
        return Some(Target::Private);
    }
    Some(callable(api, info, declared_in, Some(in_impl), f))
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn a_method_of_an_impl_in_another_module_is_called_by_its_type_s_path() {
        let r = rulebook();
        let (rule, target) = decide(
            &r.api,
            r.function("rulebook::extra::<impl rulebook::Counter>::reset"),
        );
        assert_eq!(rule, "impl_elsewhere");
        let Target::Callable(c) = target else {
            panic!(
                "{} is not callable",
                "rulebook::extra::<impl rulebook::Counter>::reset"
            )
        };
        assert_eq!(c.call_path, "rulebook::Counter::reset");
    }
}
