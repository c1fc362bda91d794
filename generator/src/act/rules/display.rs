//! Call form: `<T as Display>::fmt` on a public type of the crate, carved as the `to_string()`
//! call it stands for (or `format!("{:>10}", v)` with the recorded options; see
//! `act/display.rs`), against the text the recording holds.

use carve_storage::FunctionInfo;

use crate::act::call::{outside_lib, trait_impl};
use crate::act::target::{Callable, Target};
use crate::read::crate_api::{CrateApi, FnApi};
use crate::read::types::DeclType;

/// `Display::fmt` of one of the crate's types.
pub(crate) fn rule(api: &CrateApi, info: &FunctionInfo) -> Option<Target> {
    let (ty, tr, _) = trait_impl(info)?;
    if !is_display(crate::read::types::strip_generics(&tr)) {
        return None;
    }
    Some(outside_lib(api, info).unwrap_or_else(|| resolve(api, info, &ty)))
}

/// `<ty as Display>::fmt` on a public type of the crate, as `value.to_string()`.
pub fn resolve(api: &CrateApi, info: &FunctionInfo, ty: &str) -> Target {
    let base = crate::read::types::strip_generics(ty);
    if !crate::syntax::is_path(base) {
        return Target::Unsupported("trait impl on a reference or type parameter");
    }
    if api.public_type(base).is_none() {
        return Target::Private;
    }
    if info.params.len() != 2 {
        return Target::Unsupported("trait impl");
    }
    let module = base
        .split("::")
        .skip(1)
        .collect::<Vec<_>>()
        .split_last()
        .map(|(_, m)| m.iter().map(|s| s.to_string()).collect())
        .unwrap_or_default();
    Target::Callable(Box::new(Callable {
        module,
        call_path: format!("{base}::to_string"),
        subject: "to_string".to_string(),
        api: FnApi {
            name: "to_string".to_string(),
            ident: "to_string".to_string(),
            public: true,
            has_receiver: true,
            mut_receiver: false,
            self_by_value: false,
            params: Vec::new(),
            ret: DeclType::String,
            ret_written: "String".to_string(),
            ret_ok_unit: false,
            blocker: None,
            uninferable_generics: 0,
            signature: String::new(),
        },
        self_type: Some(base.to_string()),
        via_trait: None,
        display: true,
    }))
}

/// Whether `tr` (as DWARF spells it, without arguments) is `Display`.
pub fn is_display(tr: &str) -> bool {
    tr == "core::fmt::Display"
}

#[cfg(test)]
mod tests {
    use crate::act::rules::decide;
    use crate::act::target::Target;
    use crate::testdata::rulebook;

    #[test]
    fn display_fmt_is_called_as_to_string() {
        let r = rulebook();
        let (rule, target) = decide(
            &r.api,
            r.function("<rulebook::Counter as core::fmt::Display>::fmt"),
        );
        assert_eq!(rule, "display");
        let Target::Callable(c) = target else {
            panic!(
                "{} is not callable",
                "<rulebook::Counter as core::fmt::Display>::fmt"
            )
        };
        assert_eq!(c.call_path, "rulebook::Counter::to_string");
        assert!(c.display);
    }
}
