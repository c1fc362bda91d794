//! Call form: a method of one of the crate's public traits implemented by one of its public
//! types, called as a method with the trait imported (`c.ask(&a)` with `use abc::Asker`).

use carve_storage::FunctionInfo;

use crate::act::call::{outside_lib, parse_fn_path, trait_impl};
use crate::act::target::{Callable, Target};
use crate::read::crate_api::{CrateApi, FnApi, TraitMethodApi};

/// A trait impl of the crate on a type of the crate: the last trait-impl rule, it decides every
/// trait impl the ones before it left.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let (ty, tr, method) = trait_impl(info)?;
    Some(resolve_crate_trait_impl(api, info, &ty, &tr, &method))
}

fn resolve_crate_trait_impl(
    api: &CrateApi,
    info: &FunctionInfo,
    ty: &str,
    tr: &str,
    method: &str,
) -> Target {
    let Ok(ty_segments) = parse_fn_path(ty) else {
        return Target::Unsupported("trait impl");
    };
    let trait_base = crate::read::types::strip_generics(tr);
    let base = crate::read::types::strip_generics(ty);
    if tr != trait_base {
        return Target::Unsupported("trait impl");
    }
    if let Some(outside) = outside_lib(api, info) {
        return outside;
    }
    // The type and trait come from the trace's function name: written only when the crate's
    // source declares them, and as Rust paths (`&mut D`, a blanket impl's Self, is not one).
    if !(crate::syntax::is_path(base) && crate::syntax::is_path(tr)) {
        return Target::Unsupported("trait impl on a reference or type parameter");
    }
    let (Some(_), Some(trait_api)) = (api.public_type(base), api.public_trait(tr)) else {
        return Target::Private;
    };
    let Some(m) = trait_api.methods.iter().find(|m| m.name == method) else {
        return Target::Unsupported("not found in the source");
    };
    let Some((_, module)) = ty_segments.split_first() else {
        return Target::Unsupported("trait impl");
    };
    let module = module[..module.len().saturating_sub(1)].to_vec();
    trait_method(m, base, tr, module)
}

/// Trait method `m` called as a method on an object of `base` (declared in `module`), the trait
/// `trait_path` imported: `c.ask(&a)` with `use abc::Asker`.
pub(crate) fn trait_method(
    m: &TraitMethodApi,
    base: &str,
    trait_path: &str,
    module: Vec<String>,
) -> Target {
    // An `unsafe fn` (`BufMut::advance_mut`) is neither tested nor replayed as a step.
    if let Some(blocker) = m.blocker {
        return Target::Unsupported(blocker);
    }
    Target::Callable(Box::new(Callable {
        module,
        call_path: format!("{base}::{}", m.name),
        subject: m.name.clone(),
        api: FnApi {
            name: m.name.clone(),
            ident: m.name.clone(),
            public: true,
            has_receiver: true,
            mut_receiver: m.mut_receiver,
            self_by_value: false,
            params: m.params.clone(),
            ret: m.ret.clone(),
            ret_written: m.ret_written.clone(),
            ret_ok_unit: crate::read::types::written_ok_unit(&m.ret_written),
            blocker: None,
            uninferable_generics: 0,
            signature: String::new(),
        },
        self_type: Some(base.to_string()),
        via_trait: Some(trait_path.to_string()),
        display: false,
    }))
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn a_trait_method_of_the_crate_is_called_with_the_trait_imported() {
        let r = rulebook();
        let (rule, target) = decide(
            &r.api,
            r.function("<rulebook::Square as rulebook::Shape>::area"),
        );
        assert_eq!(rule, "crate_trait");
        let Target::Callable(c) = target else {
            panic!(
                "{} is not callable",
                "<rulebook::Square as rulebook::Shape>::area"
            )
        };
        assert_eq!(c.call_path, "rulebook::Square::area");
        assert_eq!(c.via_trait.as_deref(), Some("rulebook::Shape"));
    }
}
