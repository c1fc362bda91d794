//! The text of demangled paths as the trace records them (`<abc::B as abc::Asker>::ask`,
//! `m::<impl T>::f`): split at the top level, and respelled the public way.

use carve_storage::closing_angle;

use crate::read::types::strip_generics;

/// `source` with every path in `public_paths` spelled the public way. A path only matches
/// whole: not inside a longer identifier or path (`xshop::store::Store`, `Storehouse`).
pub fn spell_public(source: &str, public_paths: &[(String, String)]) -> String {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = source.to_string();
    for (from, to) in public_paths {
        let mut result = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find(from.as_str()) {
            let before = if at > 0 {
                rest[..at].chars().last()
            } else {
                result.chars().last()
            };
            let after = rest[at + from.len()..].chars().next();
            let whole_start = !before.is_some_and(|c| ident(c) || c == ':');
            let whole_end = from.ends_with("::") || !after.is_some_and(ident);
            result.push_str(&rest[..at]);
            if whole_start && whole_end {
                result.push_str(to);
            } else {
                result.push_str(from);
            }
            rest = &rest[at + from.len()..];
        }
        result.push_str(rest);
        out = result;
    }
    out
}

/// Whether `path` occurs in `source` as a whole path (not inside a longer one).
pub fn mentions_path(source: &str, path: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    source.match_indices(path).any(|(at, _)| {
        let before = source[..at].chars().last();
        let after = source[at + path.len()..].chars().next();
        !before.is_some_and(|c| ident(c) || c == ':') && !after.is_some_and(ident)
    })
}

/// `<abc::B as abc::Asker>::ask` → (`abc::B`, `abc::Asker`, `ask`).
pub(crate) fn split_trait_impl(path: &str) -> Option<(String, String, String)> {
    let (ty, tr, method) = split_angled(path.strip_prefix('<')?, "", " as ")?;
    Some((ty, tr, method))
}

/// `(type, trait, method)` of `module::<impl Trait for Type>::method`, the spelling of legacy
/// symbol mangling.
pub(crate) fn split_impl_block(path: &str) -> Option<(String, String, String)> {
    let at = path.find("<impl ")?;
    let (tr, ty, method) = split_angled(&path[at + 1..], "impl ", " for ")?;
    Some((ty, tr, method))
}

/// `A SEP B>::method` (the text after a `<`, whose inside starts with `prefix`) →
/// (`A`, `B`, `method`).
fn split_angled(inner_and_rest: &str, prefix: &str, sep: &str) -> Option<(String, String, String)> {
    let end = closing_angle(inner_and_rest)?;
    let inner = inner_and_rest[..end].strip_prefix(prefix)?;
    let parts = split_top(inner, sep);
    let [first, second] = parts.as_slice() else {
        return None;
    };
    let method = inner_and_rest[end + 1..].trim_start_matches("::");
    Some((
        first.trim().to_string(),
        second.trim().to_string(),
        method.to_string(),
    ))
}

/// The trait of a `<Type as Trait>::method` path, without generic arguments.
pub(crate) fn trait_of_impl(path: &str) -> Option<String> {
    split_trait_impl(path).map(|(_, tr, _)| strip_generics(&tr).to_string())
}

/// `s` split at each `sep` outside any `<>`, `()` or `[]`.
pub fn split_top(s: &str, sep: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if rest.starts_with("->") {
            i += 2;
            continue;
        }
        if rest.starts_with(['<', '(', '[']) {
            depth += 1;
        } else if rest.starts_with(['>', ')', ']']) {
            depth = depth.saturating_sub(1);
        } else if depth == 0 && rest.starts_with(sep) {
            parts.push(s[start..i].to_string());
            i += sep.len();
            start = i;
            continue;
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    parts.push(s[start..].to_string());
    parts
}
