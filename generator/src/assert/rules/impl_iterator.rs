//! Observation: the result of a function declared to return `impl Iterator<Item = T>` (or a
//! double-ended or exact-size one) is checked by the items it gives, collected, as
//! `items.rs` checks a named iterator: its hidden type (a `FlatMap` over a closure) cannot be
//! named, compared or taken apart in a test, and the recording holds that state, not the
//! items. They are observed on this build at verification (`verify/observe.rs`). Items of a
//! type of the crate that is not `Debug` are checked by the text each displays when it is
//! `Display` (similar's `iter_hunks`: each hunk as a unified diff prints it), else by their
//! number; of any other type, by `{:?}` (a probe that does not compile goes).

use crate::arrange::builder::Builder;
use crate::assert::rules::items::{check_items_by, ItemsBy};
use crate::assert::subject::{observed_parts, Subject, Verdict};
use crate::read::crate_api::CrateApi;
use crate::read::types::impl_iterator;

/// A returned `impl Iterator`'s items, collected.
pub(crate) fn rule(s: &Subject, b: &mut Builder) -> Verdict {
    let returned = matches!(s.call.outcome, carve_storage::Outcome::Returned);
    if !returned || !impl_iterator(&s.target.api.ret_written) {
        return Verdict::Pass(None);
    }
    check_items_by(b, items_by(s.cx.api, &s.target.api.ret_written));
    observed_parts(None, "items")
}

/// How the items of `impl Iterator<Item = T>` (as `written`) are checked: by `{:?}` unless
/// `T` names types of the crate none of which is `Debug` (as `getters::debuggable` reads a
/// name).
fn items_by(api: &CrateApi, written: &str) -> ItemsBy {
    let Some(syn::Type::Path(item)) = item_type(written) else {
        return ItemsBy::Debug;
    };
    let Some(name) = item.path.segments.last().map(|s| s.ident.to_string()) else {
        return ItemsBy::Debug;
    };
    let has = |t: &str| api.types_named(&name).any(|ty| ty.traits.contains(t));
    if api.types_named(&name).next().is_none() || has("Debug") {
        ItemsBy::Debug
    } else if has("Display") {
        ItemsBy::Display
    } else {
        ItemsBy::Count
    }
}

/// `T` of `impl Iterator<Item = T> + ...` as written, through references.
fn item_type(written: &str) -> Option<syn::Type> {
    let syn::Type::ImplTrait(t) = syn::parse_str::<syn::Type>(written).ok()? else {
        return None;
    };
    t.bounds.iter().find_map(|bound| {
        let syn::TypeParamBound::Trait(bound) = bound else {
            return None;
        };
        let syn::PathArguments::AngleBracketed(args) = &bound.path.segments.last()?.arguments
        else {
            return None;
        };
        args.args.iter().find_map(|a| match a {
            syn::GenericArgument::AssocType(item) if item.ident == "Item" => {
                let mut ty = item.ty.clone();
                while let syn::Type::Reference(r) = ty {
                    ty = *r.elem;
                }
                Some(ty)
            }
            _ => None,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_item_type_is_read_from_the_declared_return() {
        let item = |w: &str| item_type(w).map(|t| quote::quote!(#t).to_string());
        assert_eq!(
            item("impl Iterator<Item = UnifiedDiffHunk<'diff, 'old, 'new, T>> + '_").as_deref(),
            Some("UnifiedDiffHunk < 'diff , 'old , 'new , T >")
        );
        assert_eq!(
            item("impl DoubleEndedIterator<Item = &str> + '_").as_deref(),
            Some("str")
        );
        assert_eq!(item("impl Iterator<Item = u8>").as_deref(), Some("u8"));
        assert_eq!(item("Vec<u8>"), None);
    }
}
