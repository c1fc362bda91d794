//! Repair: an error in exactly one row of a table test's `cases` takes that row out; the table
//! stays with its other rows.

use crate::verify::repair::compile_errors::CompileError;
use crate::verify::repair::items::holder;
use crate::verify::repair::items::{Fix, Item};

/// An error in one row of a table test.
pub(crate) fn rule(items: &[Item], error: &CompileError, _source: &str) -> Option<Fix> {
    let line = error.line?;
    let at = holder(items, line)?;
    let item = &items[at];
    if !item.is_test {
        return None;
    }
    let mut rows = item
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.contains(&line));
    match (rows.next(), rows.next()) {
        (Some((row, _)), None) => Some(Fix::Row {
            test: item.name.clone()?,
            row,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::verify::repair::compile_errors::CompileError;
    use crate::verify::repair::items::{items, Fix};
    use crate::verify::repair::rules::decide;

    const TABLE: &str = "#[test]\nfn f_recorded_cases() {\n    let cases: &[(u8, u8)] = &[\n        (1u8, 2u8),\n        (2u8, 4u8),\n    ];\n    for (i, case) in cases.iter().enumerate() {\n        assert_eq!(demo::f(case.0), case.1, \"case {i}\");\n    }\n}\n";

    #[test]
    fn an_error_in_one_row_takes_that_row_out_and_one_in_the_body_does_not() {
        let error = |line| CompileError {
            message: "error[E0308]: mismatched types".into(),
            line: Some(line),
        };
        let items = items(TABLE).unwrap();
        let (rule, fix) = decide(&items, &error(5), TABLE);
        assert_eq!(rule, "table_row");
        assert!(matches!(fix, Fix::Row { test, row: 1 } if test == "f_recorded_cases"));
        assert_eq!(decide(&items, &error(8), TABLE).0, "in_test");
    }
}
