//! Call form: a provided (default) method of one of the crate's public traits, run on one of the
//! crate's public types, called as a method with the trait imported (`wide.encode(b"ab")` with
//! `use shim::Engine`). The run records such a method under the trait's own path
//! (`shim::Engine::encode`, `bytes::buf::buf_mut::BufMut::put_u8`), not under an impl's: the
//! type it ran on is its recorded receiver's.

use carve_storage::FunctionInfo;

use crate::act::call::parse_fn_path;
use crate::act::rules::crate_trait::trait_method;
use crate::act::rules::foreign_self::resolve_foreign_self_impl;
use crate::act::target::Target;
use crate::read::crate_api::CrateApi;

/// A method recorded under a public trait's path, whose receiver is a public type of the crate.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let segments = parse_fn_path(&info.path).ok()?;
    let (method, owner) = segments.split_last()?;
    let trait_path = owner.join("::");
    let Some(trait_api) = api.public_trait(&trait_path) else {
        // A provided method of a trait of the crate no test can name (arrayvec's
        // `ArrayVecImpl::try_push`): private, reached through the public calls above it.
        let (name, module) = owner.get(1..)?.split_last()?;
        let declared = api.find_module(module).and_then(|m| m.traits.get(name));
        return declared
            .is_some_and(|t| t.methods.iter().any(|m| m.name == *method))
            .then_some(Target::Private);
    };
    let m = trait_api.methods.iter().find(|m| m.name == *method)?;
    // The type it ran on: the recorded receiver's (`&shim::Wide`).
    let self_ty = info
        .params
        .iter()
        .find(|p| p.name == "self")?
        .type_name
        .as_str();
    let base = crate::read::types::strip_generics(
        self_ty
            .trim_start_matches('&')
            .trim_start_matches("mut ")
            .trim(),
    );
    // A blanket impl over a std type (itertools' `impl<T: Iterator> Itertools for T` run on
    // `[1, 2].iter().cloned()`): called by its full path, the receiver written as the first
    // argument, as for a trait impl on a std type.
    if ["core::", "alloc::", "std::"]
        .iter()
        .any(|std| base.starts_with(std))
    {
        let self_ty = self_ty.strip_prefix('&').unwrap_or(self_ty);
        let self_ty = self_ty.strip_prefix("mut ").unwrap_or(self_ty).trim();
        return Some(resolve_foreign_self_impl(
            api,
            info,
            self_ty,
            &trait_path,
            method,
        ));
    }
    if !crate::syntax::is_path(base) || api.public_type(base).is_none() {
        return Some(Target::Unsupported(
            "provided method on a type a test cannot name",
        ));
    }
    let module = parse_fn_path(base)
        .ok()
        .and_then(|s| s.get(1..s.len().saturating_sub(1)).map(<[String]>::to_vec))
        .unwrap_or_default();
    Some(trait_method(m, base, &trait_path, module))
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn a_method_recorded_under_a_trait_s_path_is_called_on_its_receiver_s_type() {
        // What a run records for a provided method of `Shape` run on a `Square`.
        let r = rulebook();
        let mut f = r
            .function("<rulebook::Square as rulebook::Shape>::area")
            .clone();
        f.path = "rulebook::Shape::area".to_string();
        let (rule, target) = decide(&r.api, &f);
        assert_eq!(rule, "provided_method");
        let Target::Callable(c) = target else {
            panic!("{} is not callable", f.path)
        };
        assert_eq!(c.self_type.as_deref(), Some("rulebook::Square"));
        assert_eq!(c.via_trait.as_deref(), Some("rulebook::Shape"));
        assert!(c.api.has_receiver);
    }

    #[test]
    fn a_provided_method_run_on_a_std_type_is_called_by_the_trait_s_path() {
        // What a run records for a provided method of a blanket impl run on a std iterator.
        let r = rulebook();
        let mut f = r.function("<u32 as rulebook::Shape>::area").clone();
        f.path = "rulebook::Shape::area".to_string();
        f.params[0].type_name = "&core::slice::iter::Iter<u32>".to_string();
        let (rule, target) = decide(&r.api, &f);
        assert_eq!(rule, "provided_method");
        let Target::Callable(c) = target else {
            panic!("{} is not callable", f.path)
        };
        assert_eq!(
            c.call_path,
            "<std::slice::Iter<u32> as rulebook::Shape>::area"
        );
    }

    #[test]
    fn a_provided_method_of_a_private_trait_is_private() {
        let r = rulebook();
        let mut f = r.function("rulebook::hidden_area").clone();
        f.path = "rulebook::Sealed::seal".to_string();
        let (rule, target) = decide(&r.api, &f);
        assert_eq!(rule, "provided_method");
        assert!(matches!(target, Target::Private), "{}", f.path);
    }
}
