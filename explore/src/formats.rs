//! `Display` as callers format a value: besides `to_string()`, with the options a format
//! string gives (`{:>12}`, `{:^12}`, `{:.3}`, `{:#}`...), when the type's `Display` impl reads
//! the formatter's width, precision, alignment or flags (bytesize pads and centres its text
//! itself, and renders at the precision asked): it runs code `to_string()` never reaches. One
//! that does not (url's writes its text) would run std's padding only: its specs are not
//! tried, as seven more calls would only thin out the search.

use carve_generator::{CrateApi, TypeApi};

use crate::api::Callable;

/// How a formatted `Display` callable ends its `call`: `{:>12} (format)` on a receiver
/// `size` is `format!("{:>12}", size)` (see [`Callable::written`]).
pub(crate) const FORMAT: &str = " (format)";

/// The format specs tried: each alignment with a width, a precision alone and with a width,
/// the alternate form and the sign flag.
const SPECS: [&str; 7] = [
    "{:>12}", "{:<12}", "{:^12}", "{:.3}", "{:>12.3}", "{:#}", "{:+}",
];

/// The callables formatting as [`SPECS`] say, from `to_string`, the `Display` callable: the
/// same function (its path), receiver and result.
pub(crate) fn formatted(to_string: &Callable) -> Vec<Callable> {
    SPECS
        .iter()
        .map(|spec| Callable {
            call: format!("{spec}{FORMAT}"),
            ..to_string.clone()
        })
        .collect()
}

/// Whether `ty`'s `Display` impl reads the formatter's options, wherever the impl is (noted,
/// as its traits are, under the name the type has in the impl's module).
pub(crate) fn reads_options(api: &CrateApi, ty: &TypeApi) -> bool {
    crate::std_traits::with_impls_elsewhere(api, ty).any(|t| t.display_reads_options)
}

/// `target` when it is a formatted `Display` call (`size.{:>12} (format)`):
/// `format!("{:>12}", size)`; `None` otherwise.
pub(crate) fn written(target: &str) -> Option<String> {
    let (receiver, spec) = target.strip_suffix(FORMAT)?.split_once('.')?;
    Some(format!("format!(\"{spec}\", {receiver})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_display_call_is_also_made_with_each_format_spec() {
        let to_string = Callable {
            path: "<bytesize::ByteSize as core::fmt::Display>::fmt".into(),
            call: "to_string".into(),
            ..crate::testdata::getter("to_string", "String")
        };
        let all = formatted(&to_string);
        assert_eq!(all.len(), SPECS.len());
        assert!(all.iter().all(|c| c.path == to_string.path));
        let precise = all.iter().find(|c| c.call.starts_with("{:>12.3}")).unwrap();
        let target = format!("size.{}", precise.call);
        assert_eq!(precise.written(&target, &[]), "format!(\"{:>12.3}\", size)");
        assert_eq!(written("(*recv).to_string"), None);
    }
}
