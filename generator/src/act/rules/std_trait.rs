//! Call form: a method of a standard trait implemented by a public type of the crate, called
//! through the trait's public path (`<shapes::Stack<u32> as Default>::default()`,
//! `<Celsius as From<_>>::from(..)`; see `act/std_traits.rs` for the traits and their paths).

use carve_storage::FunctionInfo;

use crate::act::call::{outside_lib, parse_fn_path, trait_impl};
use crate::act::target::{Callable, Target};
use crate::act::{instance, std_traits};
use crate::read::crate_api::CrateApi;
use crate::read::paths::split_top;

/// A standard trait's method on one of the crate's types.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let (ty, tr, method) = trait_impl(info)?;
    let public_trait = std_traits::public_path(crate::read::types::strip_generics(&tr))?;
    Some(
        outside_lib(api, info)
            .unwrap_or_else(|| resolve_std_trait_impl(api, info, &ty, &tr, public_trait, &method)),
    )
}

/// A method of a standard trait implemented by a public type of the crate, called through the
/// trait's public path (see [`std_traits`]).
pub(crate) fn resolve_std_trait_impl(
    api: &CrateApi,
    info: &FunctionInfo,
    ty: &str,
    tr: &str,
    public_trait: &str,
    method: &str,
) -> Target {
    let base = crate::read::types::strip_generics(ty);
    if !(crate::syntax::is_path(base) && crate::syntax::is_ident(method)) {
        return Target::Unsupported("trait impl on a reference or type parameter");
    }
    if api.public_type(base).is_none() {
        return Target::Private;
    }
    // `<shapes::Stack<T> as Default>::default` is called on the recorded instance.
    let written = if ty == base {
        ty.to_string()
    } else {
        match instance::instance_type(info, base, api) {
            Some(written) => written,
            None => return Target::Unsupported("trait impl on a generic type"),
        }
    };
    let f = match std_traits::method_api(info, method) {
        Ok(f) => f,
        Err(why) => return Target::Unsupported(why),
    };
    // `From<u64>` is written `From<_>`: the argument's recorded type picks the impl.
    let generic_args = tr.len() > crate::read::types::strip_generics(tr).len();
    let trait_written = if generic_args {
        let inner = &tr[crate::read::types::strip_generics(tr).len() + 1..tr.len() - 1];
        let n = split_top(inner, ",").len();
        format!("{public_trait}<{}>", vec!["_"; n].join(", "))
    } else {
        public_trait.to_string()
    };
    let module = parse_fn_path(base)
        .ok()
        .and_then(|segments| {
            segments
                .get(1..segments.len().saturating_sub(1))
                .map(<[String]>::to_vec)
        })
        .unwrap_or_default();
    Target::Callable(Box::new(Callable {
        module,
        call_path: format!("<{written} as {trait_written}>::{method}"),
        // Named as a person calls it: `render/spell/parse.rs` writes `s.parse::<T>()`.
        subject: if public_trait == "std::str::FromStr" && method == "from_str" {
            "parse".to_string()
        } else {
            f.name.clone()
        },
        api: f,
        self_type: Some(base.to_string()),
        via_trait: Some(public_trait.to_string()),
        display: false,
    }))
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn a_std_trait_s_method_is_called_through_its_public_path() {
        let r = rulebook();
        let (rule, target) = decide(
            &r.api,
            r.function("<rulebook::Counter as core::convert::From<u32>>::from"),
        );
        assert_eq!(rule, "std_trait");
        let Target::Callable(c) = target else {
            panic!(
                "{} is not callable",
                "<rulebook::Counter as core::convert::From<u32>>::from"
            )
        };
        assert_eq!(
            c.call_path,
            "<rulebook::Counter as std::convert::From<_>>::from"
        );
    }
}
