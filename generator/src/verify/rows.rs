//! The rows of a table test as written (see `plan/table.rs`): which row a failure names, and the
//! file without the rows verification takes out.

use std::collections::BTreeMap;

use crate::plan::table::{ROW_VAR, TABLE_VAR};

/// The row a failed table test names in its panic message (`assertion `left == right` failed:
/// case 3`, or `case 3` alone), as the row's position in the table as written.
pub(crate) fn failed_row(message: &str) -> Option<usize> {
    let (before, n) = message.trim().rsplit_once(&format!("{ROW_VAR} "))?;
    let before = before.trim_end();
    let ours = before.is_empty() || before.ends_with("failed:");
    if !ours || n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// The rows of the table of test function `f`, as written: the elements of its
/// `let cases: &[..] = &[..];`.
pub(crate) fn rows_of(
    f: &mut syn::ItemFn,
) -> Option<&mut syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>> {
    f.block.stmts.iter_mut().find_map(|stmt| {
        let syn::Stmt::Local(local) = stmt else {
            return None;
        };
        let named = match &local.pat {
            syn::Pat::Type(t) => matches!(&*t.pat, syn::Pat::Ident(i) if i.ident == TABLE_VAR),
            syn::Pat::Ident(i) => i.ident == TABLE_VAR,
            _ => false,
        };
        if !named {
            return None;
        }
        let init = local.init.as_mut()?;
        match &mut *init.expr {
            syn::Expr::Reference(r) => match &mut *r.expr {
                syn::Expr::Array(a) => Some(&mut a.elems),
                _ => None,
            },
            _ => None,
        }
    })
}

/// `source` without the rows `rows` (positions as written) of each table test named; a test
/// left with no row goes whole.
pub(crate) fn remove_rows(
    source: &str,
    rows: &BTreeMap<String, std::collections::BTreeSet<usize>>,
) -> Result<String, String> {
    crate::render::edit_rust(source, |file| {
        file.items.retain_mut(|item| {
            let syn::Item::Fn(f) = item else {
                return true;
            };
            let Some(gone) = rows.get(&f.sig.ident.to_string()) else {
                return true;
            };
            let Some(elems) = rows_of(f) else {
                return true;
            };
            let kept: syn::punctuated::Punctuated<syn::Expr, syn::Token![,]> =
                std::mem::take(elems)
                    .into_iter()
                    .enumerate()
                    .filter(|(i, _)| !gone.contains(i))
                    .map(|(_, e)| e)
                    .collect();
            let empty = kept.is_empty();
            *elems = kept;
            !empty
        });
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_row_is_read_from_the_message_its_assertion_gave() {
        assert_eq!(
            failed_row("assertion `left == right` failed: case 12"),
            Some(12)
        );
        assert_eq!(failed_row("case 0"), Some(0));
        assert_eq!(failed_row("attempt to subtract with overflow"), None);
        assert_eq!(failed_row("in this case 3"), None);
        assert_eq!(
            failed_row("assertion `left == right` failed: case 1x"),
            None
        );
    }

    #[test]
    fn rows_are_removed_from_the_written_table_and_an_emptied_table_goes() {
        let source = "//! Carved.\n\n#[test]\nfn f_recorded_cases() {\n    let cases: &[(u8, u8)] = &[\n        (1u8, 2u8),\n        (2u8, 4u8),\n        (3u8, 7u8),\n    ];\n    for (i, case) in cases.iter().enumerate() {\n        // Act\n        let result = f(case.0);\n        assert_eq!(result, case.1, \"case {i}\");\n    }\n}\n\n#[test]\nfn g_recorded_cases() {\n    let cases: &[(u8,)] = &[(1u8,), (2u8,)];\n    for (i, case) in cases.iter().enumerate() {\n        g(case.0);\n    }\n}\n";
        let rows = BTreeMap::from([
            ("f_recorded_cases".to_string(), [2].into()),
            ("g_recorded_cases".to_string(), [0, 1].into()),
        ]);
        let out = remove_rows(source, &rows).unwrap();
        assert!(out.contains("(2u8, 4u8)"), "{out}");
        assert!(!out.contains("(3u8, 7u8)"), "{out}");
        assert!(out.contains("        // Act\n"), "comments stay: {out}");
        assert!(!out.contains("g_recorded_cases"), "{out}");
    }
}
