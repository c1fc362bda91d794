//! Call form: none for an `fn` item declared inside a function's body
//! (`url::Url::make_relative::extract_path_filename`): no path outside that body names it.

use carve_storage::FunctionInfo;

use crate::act::call::parse_fn_path;
use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// A function whose path goes through another function.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let segments = parse_fn_path(&info.path).ok()?;
    let (_, rest) = segments.split_first()?;
    let (_, owners) = rest.split_last()?;
    is_nested_fn(api, owners).then_some(Target::Private)
}

/// Whether the item path `owners` (below the crate) names a function, free or associated: a
/// function recorded under it (`url::Url::make_relative::extract_path_filename`) is an `fn` item
/// declared inside that function's body.
pub(crate) fn is_nested_fn(api: &CrateApi, owners: &[String]) -> bool {
    let Some((outer, parent)) = owners.split_last() else {
        return false;
    };
    let free = api
        .find_module(parent)
        .is_some_and(|m| m.functions.contains_key(outer));
    let associated = parent.split_last().is_some_and(|(ty, module)| {
        api.find_module(module)
            .and_then(|m| m.types.get(ty))
            .is_some_and(|t| t.functions.contains_key(outer))
    });
    // A trait's provided method (`base64::engine::Engine::encode::inner`: the generic shim's
    // non-generic body, recorded when an optimised build inlined the shim itself).
    let provided = parent.split_last().is_some_and(|(tr, module)| {
        api.find_module(module)
            .and_then(|m| m.traits.get(tr))
            .is_some_and(|t| t.methods.iter().any(|m| m.name == *outer))
    });
    free || associated || provided
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn a_function_declared_in_a_function_s_body_is_private() {
        let r = rulebook();
        let f = r.function("rulebook::outer::inner").clone();
        let (rule, target) = decide(&r.api, &f);
        assert_eq!(rule, "nested_fn");
        assert!(matches!(target, Target::Private), "{}", f.path);
    }

    #[test]
    fn a_function_declared_in_a_trait_method_s_body_is_private() {
        let r = rulebook();
        let mut f = r.function("rulebook::outer::inner").clone();
        f.path = "rulebook::Shape::area::inner".to_string();
        let (rule, target) = decide(&r.api, &f);
        assert_eq!(rule, "nested_fn");
        assert!(matches!(target, Target::Private), "{}", f.path);
    }
}
